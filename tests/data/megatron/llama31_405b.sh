#!/bin/bash
# Llama-3.1-405B on 128 nodes: tp 8, pp 8 with the embedding and the loss
# counted as pipeline layers (128 = 126 + 2), interleaved with 8 layers per
# virtual stage, cp 2, selective recompute of the core attention and the norms.
torchrun --nnodes=128 --nproc-per-node=8 pretrain_gpt.py \
  --num-layers=126 \
  --hidden-size=16384 \
  --ffn-hidden-size=53248 \
  --num-attention-heads=128 \
  --group-query-attention --num-query-groups=8 \
  --seq-length=8192 --max-position-embeddings=131072 \
  --position-embedding-type=rope --use-rope-scaling --rotary-base=500000 \
  --normalization=RMSNorm --swiglu --disable-bias-linear --untie-embeddings-and-output-weights \
  --attention-dropout=0.0 --hidden-dropout=0.0 \
  --tokenizer-type=HuggingFaceTokenizer --tokenizer-model=meta-llama/Llama-3.1-405B \
  --micro-batch-size=1 --global-batch-size=256 \
  --tensor-model-parallel-size=8 --sequence-parallel --tp-comm-overlap \
  --pipeline-model-parallel-size=8 \
  --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split \
  --num-layers-per-virtual-pipeline-stage=8 \
  --context-parallel-size=2 \
  --recompute-granularity=selective --recompute-modules core_attn layernorm \
  --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
  --bf16 --cross-entropy-loss-fusion --mock-data
