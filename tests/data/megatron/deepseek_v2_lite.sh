# DeepSeek-V2-Lite on one node, every flag in --flag=value form, with irregular spacing.
torchrun   --standalone  --nproc-per-node=8   pretrain_gpt.py   --num-layers=27 --hidden-size=2048 \
  --ffn-hidden-size=10944   --num-attention-heads=16   --multi-latent-attention   --kv-lora-rank=512 \
  --qk-head-dim=128 --qk-pos-emb-head-dim=64 --v-head-dim=128 --num-experts=64 --moe-router-topk=6 \
  --moe-ffn-hidden-size=1408 --moe-shared-expert-intermediate-size=2816 '--moe-layer-freq=([0]*1+[1]*26)' \
  --moe-grouped-gemm --moe-token-dispatcher-type=alltoall --seq-length=4096 --max-position-embeddings=163840 \
  --position-embedding-type=rope --normalization=RMSNorm --swiglu --disable-bias-linear \
  --untie-embeddings-and-output-weights --attention-dropout=0.0 --hidden-dropout=0.0 \
  --tokenizer-type=NullTokenizer --vocab-size=102399 --micro-batch-size=2 --global-batch-size=256 \
  --tensor-model-parallel-size=1 --expert-model-parallel-size=8 --use-distributed-optimizer --bf16
