#!/bin/bash
# Llama-3-70B on 8 nodes of 8 GPUs: tp 4 with sequence parallelism and TP
# communication overlap, pp 4 interleaved (5 layers per virtual stage), cp 2.
NNODES=8
GPUS_PER_NODE=8
torchrun --nnodes $NNODES --nproc-per-node $GPUS_PER_NODE --node-rank $SLURM_NODEID \
    --rdzv-backend c10d --rdzv-endpoint $MASTER_ADDR:29500 \
  pretrain_gpt.py \
    --num-layers 80 --hidden-size 8192 --ffn-hidden-size 28672 \
    --num-attention-heads 64 --group-query-attention --num-query-groups 8 \
    --seq-length 8192 --max-position-embeddings 8192 \
    --position-embedding-type rope --rotary-base 500000 \
    --normalization RMSNorm --swiglu --disable-bias-linear \
    --untie-embeddings-and-output-weights \
    --attention-dropout 0 --hidden-dropout 0 \
    --tokenizer-type HuggingFaceTokenizer --tokenizer-model /models/Meta-Llama-3-70B \
    --micro-batch-size 1 --global-batch-size 128 \
    --tensor-model-parallel-size 4 --sequence-parallel --tp-comm-overlap \
    --pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 5 \
    --context-parallel-size 2 --cp-comm-type a2a \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --bf16 --cross-entropy-loss-fusion \
    --lr 1.5e-4 --min-lr 1.5e-5 --lr-warmup-iters 2000 --train-iters 100000 \
    --data-path /data/slimpajama_text_document --split 99,1,0 \
    --log-interval 10 --eval-interval 1000 --eval-iters 10
