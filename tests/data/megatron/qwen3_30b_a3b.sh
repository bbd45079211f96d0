#!/usr/bin/env bash
# Qwen3-30B-A3B on 2 nodes: qk-layernorm, 128 experts (top 8), tp 2 with expert tp 1, ep 8.
set -euo pipefail
export CUDA_DEVICE_MAX_CONNECTIONS=1
TP=2; EP=8
MBS=1 GBS=512
torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py \
  --num-layers 48 --hidden-size 2048 --ffn-hidden-size 6144 \
  --num-attention-heads 32 --group-query-attention --num-query-groups 4 --kv-channels 128 \
  --qk-layernorm \
  --num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 768 \
  --moe-grouped-gemm --moe-token-dispatcher-type alltoall \
  --moe-router-load-balancing-type aux_loss --moe-aux-loss-coeff 1e-3 \
  --seq-length 4096 --max-position-embeddings 40960 \
  --position-embedding-type rope --rotary-base 1000000 \
  --normalization RMSNorm --norm-epsilon 1e-6 --swiglu --disable-bias-linear \
  --untie-embeddings-and-output-weights --attention-dropout 0.0 --hidden-dropout 0.0 \
  --tokenizer-type HuggingFaceTokenizer --tokenizer-model Qwen/Qwen3-30B-A3B \
  --vocab-size 151936 --make-vocab-size-divisible-by 128 \
  --micro-batch-size $MBS --global-batch-size $GBS \
  --tensor-model-parallel-size $TP --sequence-parallel \
  --expert-model-parallel-size $EP --expert-tensor-parallel-size 1 \
  --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
  --bf16 --cross-entropy-loss-fusion 2>&1 | tee train.log
