#!/bin/bash
# Llama-2-7B fine-tuning on one node, data parallel only, with the legacy
# --recompute-activations switch (selective recompute of core attention).
TOKENIZER=/models/Llama-2-7b-hf/tokenizer.model
python -m torch.distributed.run --nproc_per_node 8 pretrain_gpt.py \
    --num-layers 32 \
    --hidden-size 4096 \
    --num-attention-heads 32 \
    --seq-length 4096 \
    --max-position-embeddings 4096 \
    --tokenizer-type Llama2Tokenizer \
    --tokenizer-model "$TOKENIZER" \
    --position-embedding-type rope \
    --normalization RMSNorm \
    --swiglu \
    --ffn-hidden-size 11008 \
    --disable-bias-linear \
    --untie-embeddings-and-output-weights \
    --no-masked-softmax-fusion \
    --attention-dropout 0.0 \
    --hidden-dropout 0.0 \
    --micro-batch-size 1 \
    --global-batch-size 128 \
    --recompute-activations \
    --use-distributed-optimizer \
    --bf16 \
    --use-flash-attn \
    --finetune --load /ckpt/llama2-7b-mcore --lr 2e-5
