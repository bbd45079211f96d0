#!/bin/bash
# DeepSeek-V3 (671B) on 128 nodes: MLA, 3 leading dense layers, 256 routed
# experts (top 8) and one shared expert, MTP noted, pp 16 with uneven first and
# last stages (3 + 14*4 + 2 = 61 layers), ep 64, expert tp 1, full recompute.
MOE_ARGS="--num-experts 256 --moe-router-topk 8 --moe-ffn-hidden-size 2048 \
  --moe-shared-expert-intermediate-size 2048 --moe-layer-freq ([0]*3+[1]*58) \
  --moe-router-score-function sigmoid --moe-router-enable-expert-bias \
  --moe-router-topk-scaling-factor 2.5 --moe-router-num-groups 8 --moe-router-group-topk 4 \
  --moe-router-load-balancing-type seq_aux_loss --moe-aux-loss-coeff 1e-4 \
  --moe-grouped-gemm --moe-token-dispatcher-type alltoall --moe-permute-fusion"
MLA_ARGS="--multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 \
  --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 --rotary-scaling-factor 40"
torchrun --nnodes 128 --nproc-per-node 8 pretrain_gpt.py \
    --num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 --num-attention-heads 128 \
    $MLA_ARGS \
    $MOE_ARGS \
    --mtp-num-layers 1 \
    --seq-length 4096 --max-position-embeddings 163840 --position-embedding-type rope \
    --normalization RMSNorm --swiglu --disable-bias-linear --untie-embeddings-and-output-weights \
    --attention-dropout 0.0 --hidden-dropout 0.0 \
    --tokenizer-type HuggingFaceTokenizer --tokenizer-model deepseek-ai/DeepSeek-V3 \
    --padded-vocab-size 129280 \
    --micro-batch-size 1 --global-batch-size 8192 \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 16 \
    --decoder-first-pipeline-num-layers 3 --decoder-last-pipeline-num-layers 2 \
    --expert-model-parallel-size 64 --expert-tensor-parallel-size 1 \
    --recompute-granularity full --recompute-method uniform --recompute-num-layers 1 \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --bf16 --cross-entropy-loss-fusion
