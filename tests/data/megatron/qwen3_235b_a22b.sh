#!/bin/bash
# Qwen3-235B-A22B on 32 nodes: tp 4, pp 8 with uneven first/last stages
# (10 + 6*12 + 12 = 94 layers), ep 32, expert tp 1, full block recompute of 2 layers.
ARGS=(
  --num-layers 94 --hidden-size 4096 --ffn-hidden-size 12288
  --num-attention-heads 64 --group-query-attention --num-query-groups 4 --kv-channels 128
  --qk-layernorm
  --num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 1536
  --moe-grouped-gemm --moe-token-dispatcher-type alltoall
  --seq-length 4096 --max-position-embeddings 40960 --position-embedding-type rope
  --normalization RMSNorm --swiglu --disable-bias-linear --untie-embeddings-and-output-weights
  --attention-dropout 0.0 --hidden-dropout 0.0
  --tokenizer-type NullTokenizer --vocab-size 151935
  --micro-batch-size 1 --global-batch-size 1024
  --tensor-model-parallel-size 4 --sequence-parallel
  --pipeline-model-parallel-size 8
  --decoder-first-pipeline-num-layers 10 --decoder-last-pipeline-num-layers 12
  --expert-model-parallel-size 32 --expert-tensor-parallel-size 1
  --recompute-granularity full --recompute-method block --recompute-num-layers 2
  --use-distributed-optimizer --overlap-grad-reduce
  --bf16 --grad-reduce-in-bf16
)
torchrun --nnodes 32 --nproc-per-node 8 pretrain_gpt.py "${ARGS[@]}"
