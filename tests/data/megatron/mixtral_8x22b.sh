#!/bin/bash
# Mixtral-8x22B on 16 nodes: tp 2 (experts too: etp defaults to tp), pp 8, ep 8,
# capacity factor 1.0 with padding, MoE-activation recompute.
NODES=16
torchrun --nnodes $NODES --nproc-per-node 8 pretrain_gpt.py \
    --num-layers 56 --hidden-size 6144 --ffn-hidden-size 16384 --num-attention-heads 48 \
    --group-query-attention --num-query-groups 8 \
    --seq-length 4096 --max-position-embeddings 65536 --position-embedding-type rope \
    --normalization RMSNorm --swiglu --disable-bias-linear --untie-embeddings-and-output-weights \
    --attention-dropout 0.0 --hidden-dropout 0.0 \
    --tokenizer-type NullTokenizer --vocab-size 32767 \
    --num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 16384 \
    --moe-grouped-gemm --moe-token-dispatcher-type alltoall \
    --moe-expert-capacity-factor 1.0 --moe-pad-expert-input-to-capacity \
    --micro-batch-size 1 --global-batch-size 512 \
    --tensor-model-parallel-size 2 --sequence-parallel \
    --pipeline-model-parallel-size 8 --expert-model-parallel-size 8 \
    --recompute-granularity selective --recompute-modules moe_act layernorm \
    --use-distributed-optimizer --overlap-grad-reduce --bf16
