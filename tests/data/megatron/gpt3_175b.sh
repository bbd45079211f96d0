#!/bin/bash
# GPT-3 175B in the style of Narayanan et al. 2021 (arXiv:2104.04473): tp 8,
# pp 12 interleaved, fp16, learned positions, GPT-2 BPE tokenizer, batch 1536
# on 768 GPUs (dp 8); --rampup-batch-size is noted.
torchrun --nnodes 96 --nproc-per-node 8 pretrain_gpt.py \
    --num-layers 96 --hidden-size 12288 --num-attention-heads 96 \
    --seq-length 2048 --max-position-embeddings 2048 \
    --tokenizer-type GPT2BPETokenizer --vocab-file gpt2-vocab.json --merge-file gpt2-merges.txt \
    --micro-batch-size 1 --global-batch-size 1536 --rampup-batch-size 16 16 5859375 \
    --tensor-model-parallel-size 8 --pipeline-model-parallel-size 12 \
    --num-layers-per-virtual-pipeline-stage 4 \
    --attention-dropout 0.1 --hidden-dropout 0.1 \
    --fp16 --accumulate-allreduce-grads-in-fp32 \
    --lr 6.0e-5 --min-lr 6.0e-6 --lr-decay-style cosine --weight-decay 0.1 --clip-grad 1.0
