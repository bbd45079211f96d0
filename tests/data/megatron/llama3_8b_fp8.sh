#!/bin/bash
# Llama-3-8B on one 8-GPU node: fp8, context parallelism 2, distributed optimizer.
# Shaped like Megatron-LM's examples/llama/train_llama3_8b_h100_fp8.sh (core_v0.14.0).
export CUDA_DEVICE_MAX_CONNECTIONS=1

CHECKPOINT_PATH=${1:-"checkpoints/llama3_8b_fp8"}
GPUS_PER_NODE=8
NUM_NODES=1
SEQ_LENGTH=8192

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
    --master_addr ${MASTER_ADDR:-localhost}
    --master_port 6000
)

MODEL_ARGS=(
    --use-mcore-models
    --num-layers 32
    --hidden-size 4096
    --ffn-hidden-size 14336
    --num-attention-heads 32
    --group-query-attention
    --num-query-groups 8
    --kv-channels 128
    --seq-length $SEQ_LENGTH
    --max-position-embeddings $SEQ_LENGTH
    --position-embedding-type rope
    --rotary-base 500000
    --normalization RMSNorm
    --attention-dropout 0.0
    --hidden-dropout 0.0
    --swiglu
    --attention-backend fused
    --untie-embeddings-and-output-weights
    --disable-bias-linear
)

TRAINING_ARGS=(
    --micro-batch-size 1
    --global-batch-size 128
    --lr 0.00015         # peak learning rate
    --min-lr 0.00001
    --lr-decay-style cosine
    --bf16
    --fp8-format hybrid
    --fp8-amax-history-len 1024
    --fp8-amax-compute-algo max
    --cross-entropy-loss-fusion
    --use-distributed-optimizer
    --overlap-grad-reduce
    --overlap-param-gather
)

MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size 1
    --context-parallel-size 2
    --cp-comm-type p2p
)

DATA_ARGS=(
    "--mock-data"
    "--tokenizer-type HuggingFaceTokenizer"
    "--tokenizer-model meta-llama/Meta-Llama-3-8B"
    "--split '99,1,0'"
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]} \
    ${DATA_ARGS[@]} \
    --save "$CHECKPOINT_PATH" --load "$CHECKPOINT_PATH" \
    --log-interval 1 --log-throughput
