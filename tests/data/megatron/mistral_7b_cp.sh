#!/bin/bash
# Mistral-7B long context (32k) on 4 nodes: tp 4 + sp, cp 4 all-gather, full
# block recompute of 4 layers per stage, ZeRO-3 through Megatron-FSDP; v0.1's
# 4096-token sliding window on every layer.
torchrun --nnodes=4 --nproc_per_node=8 pretrain_gpt.py \
  --num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336 --num-attention-heads 32 \
  --group-query-attention --num-query-groups 8 --window-size 4096,0 \
  --seq-length 32768 --max-position-embeddings 32768 --position-embedding-type rope \
  --normalization RMSNorm --swiglu --disable-bias-linear --untie-embeddings-and-output-weights \
  --attention-dropout 0.0 --hidden-dropout 0.0 \
  --tokenizer-type HuggingFaceTokenizer --tokenizer-model mistralai/Mistral-7B-v0.1 \
  --micro-batch-size 1 --global-batch-size 32 \
  --tensor-model-parallel-size 4 --sequence-parallel \
  --context-parallel-size 4 --cp-comm-type allgather \
  --recompute-granularity full --recompute-method block --recompute-num-layers 4 \
  --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params \
  --bf16
