// Flag table of the Megatron-LM importer. Arity lists come from the
// add_argument calls of megatron/training/arguments.py at core_v0.14.0
// (action='store_true'/'store_false' -> no value, nargs -> list, else one
// value) plus torchrun's launcher flags (torch/distributed/run.py).
#include "interop/megatron/megatron_flags.h"

#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "schema/spelling.h"

namespace trainsim::interop {
namespace {

const char* const kNoValue[] = {
    "--cpu-offloading-retain-pinned-cpu-buffers",
    "--no-fp8-wgrad", "--fp8-param-gather", "--fp4-param-gather", "--first-last-layers-bf16", "--te-rng-tracker",
    "--inference-rng-tracker", "--output-bert-embeddings", "--flash-decode", "--enable-cuda-graph",
    "--external-cuda-graph", "--inference-dynamic-batching", "--nccl-all-reduce-for-prefill",
    "--retro-add-retriever", "--group-query-attention", "--use-rotary-position-embeddings",
    "--rotary-interleaved", "--use-rope-scaling", "--no-position-embedding",
    "--apply-layernorm-1p", "--apply-residual-connection-post-layernorm", "--openai-gelu",
    "--squared-relu", "--swiglu", "--bert-no-binary-head", "--untie-embeddings-and-output-weights",
    "--multi-latent-attention", "--log-straggler", "--disable-straggler-on-startup",
    "--run-workload-inspector-server", "--inprocess-restart", "--inprocess-empty-cuda-cache",
    "--no-one-logger", "--one-logger-async", "--enable-ft-package", "--calc-ft-timeouts",
    "--log-params-norm", "--log-num-zeros-in-grad", "--log-throughput", "--log-progress",
    "--log-energy", "--no-barrier-with-level-1-timing", "--log-timers-to-tensorboard",
    "--no-log-loss-scale-to-tensorboard", "--log-validation-ppl-to-tensorboard",
    "--log-memory-to-tensorboard", "--log-world-size-to-tensorboard",
    "--decrease-batch-size-if-needed", "--recompute-activations",
    "--no-check-for-nan-in-loss-and-grad", "--check-for-spiky-loss", "--check-for-large-grads",
    "--distribute-saved-activations", "--no-clone-scatter-output-in-embedding", "--profile",
    "--disable-gloo-process-groups", "--use-pytorch-profiler", "--record-memory-history",
    "--tp-comm-overlap", "--disable-tp-comm-overlap-ag", "--disable-tp-comm-overlap-rs",
    "--tp-comm-overlap-rs-dgrad", "--disable-tp-comm-bulk-dgrad", "--disable-tp-comm-bulk-wgrad",
    "--use-cpu-initialization", "--deterministic-mode", "--calculate-per-token-loss",
    "--checkpoint-activations", "--exit-signal-handler", "--no-masked-softmax-fusion",
    "--no-bias-gelu-fusion", "--no-bias-swiglu-fusion", "--use-fused-weighted-squared-relu",
    "--no-bias-dropout-fusion", "--no-rope-fusion", "--cross-entropy-loss-fusion",
    "--use-flash-attn", "--disable-bias-linear", "--add-qkv-bias", "--optimizer-cpu-offload",
    "--use-torch-optimizer-for-cpu-offload", "--overlap-cpu-optimizer-d2h-h2d",
    "--no-pin-cpu-grads", "--no-pin-cpu-params", "--no-async-tensor-model-parallel-allreduce",
    "--no-persist-layer-norm", "--sequence-parallel", "--no-gradient-accumulation-fusion",
    "--use-mcore-models", "--use-legacy-models", "--manual-gc", "--no-manual-gc-eval",
    "--disable-tp-comm-split-ag", "--disable-tp-comm-split-rs", "--data-parallel-random-init",
    "--init-method-xavier-uniform", "--override-opt_param-scheduler",
    "--use-checkpoint-opt_param-scheduler", "--no-save-optim", "--no-save-rng", "--no-load-optim",
    "--load-main-params-from-ckpt", "--no-load-rng", "--no-strict-fsdp-dtensor-load", "--finetune",
    "--no-initialization", "--use-checkpoint-args", "--use-mp-args-from-checkpoint-args",
    "--no-use-tokenizer-model-from-checkpoint-args", "--exit-on-missing-checkpoint",
    "--use-dist-ckpt", "--use-persistent-ckpt-worker", "--auto-detect-ckpt-format",
    "--ckpt-convert-update-legacy-dist-opt-format", "--ckpt-fully-parallel-save",
    "--no-ckpt-fully-parallel-save", "--async-save", "--ckpt-fully-parallel-load",
    "--ckpt-assume-constant-structure", "--load-model-opt-format", "--fp16", "--bf16",
    "--grad-reduce-in-bf16", "--fp32-residual-connection", "--apply-query-key-layer-scaling",
    "--attention-softmax-in-fp32", "--accumulate-allreduce-grads-in-fp32",
    "--fp16-lm-cross-entropy", "--disable-bf16-reduced-precision-matmul",
    "--reuse-grad-buf-for-mxfp8-param-ag", "--no-overlap-p2p-communication",
    "--overlap-p2p-communication-warmup-flush", "--overlap-grad-reduce",
    "--defer-embedding-wgrad-compute", "--no-align-grad-reduce",
    "--ddp-pad-buckets-for-high-nccl-busbw", "--ddp-average-in-collective",
    "--overlap-param-gather", "--overlap-param-gather-with-optimizer-step",
    "--no-align-param-gather", "--no-scatter-gather-tensors-in-pipeline",
    "--use-ring-exchange-p2p", "--account-for-embedding-in-pipeline-split",
    "--account-for-loss-in-pipeline-split", "--use-distributed-optimizer", "--use-nccl-ub",
    "--use-sharp", "--use-megatron-fsdp", "--init-model-with-meta-device",
    "--no-gradient-reduce-div-fusion", "--fsdp-double-buffer", "--keep-fp8-transpose-cache",
    "--enable-full-sharding-in-hsdp", "--use-torch-fsdp2",
    "--torch-fsdp2-no-reshard-after-forward", "--use-tp-pp-dp-mapping", "--replication",
    "--full-validation", "--multiple-validation-sets", "--skip-train", "--no-mmap-bin-files",
    "--mock-data", "--reset-position-ids", "--reset-attention-mask", "--eod-mask-loss",
    "--no-create-attention-mask-in-dataloader", "--adlr-autoresume",
    "--biencoder-shared-query-context-model", "--use-one-sent-docs", "--retriever-score-scaling",
    "--no-data-sharding", "--vision-pretraining", "--dino-norm-last-layer", "--qk-layernorm",
    "--qk-l2-norm", "--moe-shared-expert-overlap", "--moe-grouped-gemm",
    "--moe-use-legacy-grouped-gemm", "--moe-layer-recompute", "--moe-extended-tp",
    "--moe-use-upcycling", "--moe-router-fusion", "--moe-router-pre-softmax",
    "--moe-router-enable-expert-bias", "--moe-router-force-load-balancing",
    "--moe-router-padding-for-fp8", "--moe-per-layer-logging", "--moe-enable-deepep",
    "--moe-permute-fusion", "--moe-pad-expert-input-to-capacity", "--moe-apply-probs-on-input",
    "--overlap-moe-expert-parallel-comm", "--delay-wgrad-compute", "--cache-mla-latents",
    "--enable-experimental", "--is-hybrid-model", "--disable-mamba-mem-eff-path",
    "--use-precision-aware-optimizer", "--disable-msc", "--sft", "--standalone", "--use-env",
    "--use_env", "--no-python", "--no_python", "--run-path", "--run_path", "--module",
    "--use-custom-fsdp",};

const char* const kList[] = {
    "--mrope-section", "--rampup-batch-size", "--recompute-modules", "--iterations-to-skip",
    "--profile-ranks", "--high-priority-stream-groups", "--cp-comm-type",
    "--hierarchical-context-parallel-sizes", "--tiktoken-special-tokens", "--data-path",
    "--train-data-path", "--valid-data-path", "--test-data-path",
    "--retriever-report-topk-accuracies", "--moe-router-load-balancing-type", "--moe-aux-loss-coeff",
    "--spec", "--cuda-graph-modules", "--cuda-graph-scope",
};

// Mapped onto the config by megatron_import.cpp (the exporter writes a subset).
const char* const kRead[] = {
    "--num-layers", "--encoder-num-layers", "--hidden-size", "--ffn-hidden-size",
    "--num-attention-heads", "--kv-channels", "--group-query-attention", "--num-query-groups",
    "--max-position-embeddings", "--position-embedding-type", "--use-rotary-position-embeddings",
    "--no-position-embedding", "--make-vocab-size-divisible-by", "--normalization", "--openai-gelu",
    "--squared-relu", "--swiglu", "--untie-embeddings-and-output-weights", "--disable-bias-linear",
    "--add-qkv-bias", "--qk-layernorm", "--multi-latent-attention", "--q-lora-rank",
    "--kv-lora-rank", "--qk-head-dim", "--qk-pos-emb-head-dim", "--v-head-dim", "--mtp-num-layers",
    "--attention-dropout", "--hidden-dropout", "--vocab-size", "--padded-vocab-size",
    "--tokenizer-type", "--tokenizer-model", "--num-experts", "--moe-router-topk",
    "--moe-ffn-hidden-size", "--moe-shared-expert-intermediate-size", "--moe-layer-freq",
    "--moe-grouped-gemm", "--moe-token-dispatcher-type", "--moe-expert-capacity-factor",
    "--moe-pad-expert-input-to-capacity", "--seq-length", "--encoder-seq-length",
    "--micro-batch-size", "--global-batch-size", "--rampup-batch-size",
    "--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--context-parallel-size",
    "--expert-model-parallel-size", "--expert-tensor-parallel-size", "--sequence-parallel",
    "--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank",
    "--virtual-pipeline-model-parallel-size", "--decoder-first-pipeline-num-layers",
    "--decoder-last-pipeline-num-layers", "--account-for-embedding-in-pipeline-split",
    "--account-for-loss-in-pipeline-split", "--pipeline-model-parallel-layout", "--cp-comm-type",
    "--recompute-activations", "--recompute-granularity", "--recompute-method",
    "--recompute-num-layers", "--recompute-modules", "--use-distributed-optimizer",
    "--use-megatron-fsdp", "--use-custom-fsdp", "--data-parallel-sharding-strategy",
    "--use-torch-fsdp2", "--torch-fsdp2-no-reshard-after-forward", "--bf16", "--fp16",
    "--fp8-format", "--grad-reduce-in-bf16", "--accumulate-allreduce-grads-in-fp32",
    "--no-gradient-accumulation-fusion", "--cross-entropy-loss-fusion", "--overlap-grad-reduce",
    "--overlap-param-gather", "--tp-comm-overlap", "--use-flash-attn", "--attention-backend",
    "--no-bias-swiglu-fusion", "--transformer-impl", "--optimizer", "--use-legacy-models",
    "--nnodes", "--nproc-per-node", "--nproc_per_node", "--window-size", "--window-attn-skip-freq",
    "--fp8-recipe", "--fp8-param-gather", "--fp4-format", "--fp4-recipe", "--fp4-param-gather",
    "--cuda-graph-impl", "--cuda-graph-modules", "--cuda-graph-scope", "--enable-cuda-graph",
    "--external-cuda-graph", "--no-masked-softmax-fusion", "--no-bias-dropout-fusion",
    "--no-rope-fusion", "--moe-permute-fusion", "--moe-router-fusion",
    "--moe-router-num-groups", "--moe-router-group-topk", "--moe-router-load-balancing-type",
    "--moe-aux-loss-coeff", "--moe-router-enable-expert-bias", "--moe-router-dtype",
    "--optimizer-cpu-offload", "--optimizer-offload-fraction", "--use-torch-optimizer-for-cpu-offload",
    "--overlap-cpu-optimizer-d2h-h2d", "--use-precision-aware-optimizer", "--cpu-offloading-num-layers",
    "--overlap-moe-expert-parallel-comm", "--delay-wgrad-compute", "--moe-shared-expert-overlap",
    "--no-overlap-p2p-communication", "--defer-embedding-wgrad-compute", "--wgrad-deferral-limit",
    "--fsdp-double-buffer", "--suggested-communication-unit-size",
    // The flex dispatcher (core_v0.14.0; --moe-hybridep-num-sms from core_v0.16.0,
    // --moe-flex-dispatcher-num-sms from NVIDIA/Megatron-LM main).
    "--moe-enable-deepep", "--moe-deepep-num-sms", "--moe-hybridep-num-sms", "--moe-flex-dispatcher-num-sms",
};

struct Noted {
  const char* name;
  const char* note;
};

const Noted kNotModelled[] = {
    {"--no-fp8-wgrad", "bf16 weight-gradient GEMMs inside an fp8 run are not modelled"},
    {"--first-last-layers-bf16", "bf16 layers inside an fp8 run are not modelled"},
    {"--num-layers-at-start-in-bf16", "bf16 layers inside an fp8 run are not modelled"},
    {"--num-layers-at-end-in-bf16", "bf16 layers inside an fp8 run are not modelled"},
    {"--retro-add-retriever", "Retro retrieval models are not modelled"},
    {"--decoder-num-layers", "encoder-decoder models are not modelled"},
    {"--no-rope-freq", "skipping RoPE on some layers is not modelled"},
    {"--apply-residual-connection-post-layernorm", "post-norm residuals are not modelled"},
    {"--distribute-saved-activations", "distributing full-recompute checkpoints over tp is not modelled"},
    {"--empty-unused-memory-level", "emptying the CUDA cache changes reserved memory, not modelled"},
    {"--deterministic-mode", "deterministic (slower) kernels are not modelled"},
    {"--tp-comm-overlap-cfg", "per-GEMM tensor-parallel overlap settings are not modelled"},
    {"--disable-tp-comm-overlap-ag", "per-GEMM tensor-parallel overlap settings are not modelled"},
    {"--disable-tp-comm-overlap-rs", "per-GEMM tensor-parallel overlap settings are not modelled"},
    {"--tp-comm-overlap-rs-dgrad", "per-GEMM tensor-parallel overlap settings are not modelled"},
    {"--disable-tp-comm-bulk-dgrad", "per-GEMM tensor-parallel overlap settings are not modelled"},
    {"--disable-tp-comm-bulk-wgrad", "per-GEMM tensor-parallel overlap settings are not modelled"},
    {"--disable-tp-comm-split-ag", "per-GEMM tensor-parallel overlap settings are not modelled"},
    {"--disable-tp-comm-split-rs", "per-GEMM tensor-parallel overlap settings are not modelled"},
    {"--no-bias-gelu-fusion", "unfused bias-gelu kernels are not modelled"},
    {"--no-async-tensor-model-parallel-allreduce", "synchronous tensor-parallel all-reduce is not modelled"},
    {"--microbatch-group-size-per-virtual-pipeline-stage", "trainsim schedules interleaved groups of pp micro-batches"},
    {"--overlap-p2p-communication-warmup-flush", "p2p overlap in warm-up and flush is not modelled"},
    {"--no-align-grad-reduce", "unaligned gradient reduce across pipeline stages is not modelled"},
    {"--no-align-param-gather", "unaligned parameter gather across pipeline stages is not modelled"},
    {"--ddp-num-buckets", "data-parallel bucket sizes are not modelled"},
    {"--ddp-bucket-size", "data-parallel bucket sizes are not modelled"},
    {"--ddp-pad-buckets-for-high-nccl-busbw", "data-parallel bucket sizes are not modelled"},
    {"--overlap-param-gather-with-optimizer-step", "gathering parameters during the optimizer step is not modelled"},
    {"--use-ring-exchange-p2p", "ring-exchange pipeline p2p is not modelled"},
    {"--use-nccl-ub", "NCCL user buffers are not modelled"},
    {"--use-sharp", "SHARP in-network reductions are not modelled"},
    {"--sharp-enabled-group", "SHARP in-network reductions are not modelled"},
    {"--keep-fp8-transpose-cache", "Megatron-FSDP buffer settings are not modelled"},
    {"--enable-full-sharding-in-hsdp", "hybrid-sharded data parallelism is not modelled"},
    {"--num-distributed-optimizer-instances", "partial distributed-optimizer sharding is not modelled"},
    {"--hierarchical-context-parallel-sizes", "hierarchical context parallelism (a2a+p2p) is not modelled"},
    {"--nccl-communicator-config-path", "per-communicator NCCL settings are not modelled"},
    {"--use-tp-pp-dp-mapping", "the tp-pp-dp rank order is not modelled (trainsim uses tp-cp-ep-dp-pp)"},
    {"--vocab-extra-ids", "extra vocabulary ids are not added to the vocabulary"},
    {"--qk-l2-norm", "L2 query/key normalization is not modelled"},
    {"--moe-layer-recompute", "deprecated: use --recompute-granularity selective --recompute-modules moe"},
    {"--moe-extended-tp", "extended expert tensor parallelism is not modelled"},
    {"--moe-router-padding-for-fp8", "router padding for fp8 is not modelled"},
    {"--moe-flex-dispatcher-backend",
     "HybridEP and NCCL EP are priced like DeepEP (the flex dispatcher); their default SM counts differ "
     "from DeepEP's 20: give --moe-flex-dispatcher-num-sms"},
    {"--moe-apply-probs-on-input", "applying router probabilities to the expert input is not modelled"},
    {"--heterogeneous-layers-config-path", "heterogeneous layers are not modelled"},
    {"--heterogeneous-layers-config-encoded-json", "heterogeneous layers are not modelled"},
    {"--spec", "a custom layer spec may differ from the GPT layer trainsim models"},
    {"--hybrid-attention-ratio", "hybrid Mamba models are not modelled"},
    {"--hybrid-mlp-ratio", "hybrid Mamba models are not modelled"},
    {"--hybrid-override-pattern", "hybrid Mamba models are not modelled"},
    {"--is-hybrid-model", "hybrid Mamba models are not modelled"},
    {"--yaml-cfg", "flags inside the YAML file are not read; paste them as flags"},
    {"--main-grads-dtype", "optimizer states in other dtypes than fp32 are not modelled"},
    {"--main-params-dtype", "optimizer states in other dtypes than fp32 are not modelled"},
    {"--exp-avg-dtype", "optimizer states in other dtypes than fp32 are not modelled"},
    {"--exp-avg-sq-dtype", "optimizer states in other dtypes than fp32 are not modelled"},
    {"--kitchen-config-file", "custom quantization recipes are not modelled"},
    {"--kitchen-recipe-number", "custom quantization recipes are not modelled"},
    {"--fp32-residual-connection", "an fp32 residual stream is not modelled"},
    {"--fp16-lm-cross-entropy", "fp16 cross entropy is not modelled"},
    {"--reuse-grad-buf-for-mxfp8-param-ag", "mxfp8 parameter all-gather buffers are not modelled"},
    {"--batch-size", "no longer valid in Megatron-LM: use --micro-batch-size"},
    {"--checkpoint-activations", "no longer valid in Megatron-LM: use --recompute-activations"},
    {"--model-parallel-size", "no longer valid in Megatron-LM: use --tensor-model-parallel-size"},
    {"--warmup", "no longer valid in Megatron-LM: use --lr-warmup-fraction"},
};

// Flags that cannot change memory or step time: optimizer hyper-parameters,
// schedules, data, checkpoints, logging, initialization, and flags of other
// Megatron entry points (BERT, T5, vision, inference). Exact names first...
const char* const kHarmless[] = {
    // Parsed by core_v0.14.0 but unused since pipeline communication moved into Megatron-Core
    // (3c92fa9, 2023-03): its sends are never split, which is the config's default
    // (training.scatter_gather_tensors_in_pipeline false).
    "--no-scatter-gather-tensors-in-pipeline",
    // Keeps the activation offload's pinned host buffers between steps (for CUDA graphs):
    // the same host bytes, allocated once.
    "--cpu-offloading-retain-pinned-cpu-buffers",
    "--clip-grad", "--sgd-momentum", "--seed", "--norm-epsilon", "--apply-layernorm-1p",
    "--onnx-safe", "--bert-no-binary-head", "--mtp-loss-scaling-factor", "--min-lr",
    "--train-iters", "--train-samples", "--split", "--mock-data", "--vocab-file", "--merge-file",
    "--num-workers", "--dataloader-type", "--reset-position-ids", "--reset-attention-mask",
    "--eod-mask-loss", "--no-create-attention-mask-in-dataloader", "--num-dataset-builder-threads",
    "--object-storage-cache-path", "--mid-level-dataset-surplus", "--no-mmap-bin-files",
    "--decoder-seq-length", "--retriever-seq-length", "--sample-rate", "--mask-prob",
    "--short-seq-prob", "--finetune", "--pretrained-checkpoint", "--no-initialization",
    "--use-checkpoint-args", "--use-mp-args-from-checkpoint-args",
    "--no-use-tokenizer-model-from-checkpoint-args", "--exit-on-missing-checkpoint",
    "--use-dist-ckpt", "--use-persistent-ckpt-worker", "--auto-detect-ckpt-format", "--async-save",
    "--hysteresis", "--initial-loss-scale", "--min-loss-scale", "--apply-query-key-layer-scaling",
    "--attention-softmax-in-fp32", "--disable-bf16-reduced-precision-matmul",
    "--distributed-backend", "--distributed-timeout-minutes", "--ddp-average-in-collective",
    "--local-rank", "--lazy-mpu-init", "--init-model-with-meta-device",
    "--no-gradient-reduce-div-fusion", "--full-validation", "--multiple-validation-sets",
    "--skip-train", "--use-cpu-initialization", "--no-clone-scatter-output-in-embedding",
    "--calculate-per-token-loss", "--train-sync-interval", "--check-weight-hash-across-dp-replicas-interval",
    "--no-persist-layer-norm", "--use-mcore-models", "--pipeline-model-parallel-comm-backend",
    "--high-priority-stream-groups", "--rerun-mode", "--data-parallel-random-init",
    "--decrease-batch-size-if-needed", "--no-check-for-nan-in-loss-and-grad", "--iterations-to-skip",
    "--result-rejected-tracker-filename", "--disable-gloo-process-groups", "--record-memory-history",
    "--memory-snapshot-path", "--use-pytorch-profiler", "--te-rng-tracker", "--cross-entropy-fusion-impl",
    "--rope-type", "--mrope-section", "--relative-attention-num-buckets",
    "--relative-attention-max-distance", "--use-rope-scaling", "--rope-scaling-factor", "--mscale",
    "--mscale-all-dim", "--cache-mla-latents", "--moe-use-legacy-grouped-gemm", "--moe-use-upcycling",
    "--moe-upcycling-granularity", "--moe-z-loss-coeff",
    "--moe-input-jitter-eps", "--moe-per-layer-logging", "--moe-token-drop-policy",
    "--tp-comm-bootstrap-backend", "--enable-experimental", "--disable-msc", "--sft",
    "--sft-tokenizer-prompt-format", "--use-fused-weighted-squared-relu", "--fp8-margin",
    "--fp8-interval", "--flash-decode", "--symmetric-ar-type", "--nccl-all-reduce-for-prefill",
    "--mlp-chunks-for-prefill", "--max-tokens-to-oom", "--output-bert-embeddings",
    "--bert-embedder-type", "--num-classes", "--img-h", "--img-w", "--num-channels", "--patch-dim",
    "--classes-fraction", "--data-per-class-fraction", "--no-data-sharding", "--head-lr-mult",
    "--swin-backbone-type", "--mask-type", "--mask-factor", "--iter-per-epoch", "--titles-data-path",
    "--query-in-block-prob", "--use-one-sent-docs", "--evidence-data-path", "--block-data-path",
    "--embedding-path", "--bert-load", "--adlr-autoresume", "--adlr-autoresume-interval",
    "--enable-ft-package", "--calc-ft-timeouts", "--config-logger-dir", "--timing-log-level",
    "--timing-log-option", "--no-barrier-with-level-1-timing", "--logging-level",
    "--run-workload-inspector-server", "--disable-straggler-on-startup", "--no-one-logger",
    // torchrun / torch.distributed.launch
    "--node-rank", "--node_rank", "--master-addr", "--master_addr", "--master-port",
    "--master_port", "--rdzv-backend", "--rdzv_backend", "--rdzv-endpoint", "--rdzv_endpoint",
    "--rdzv-id", "--rdzv_id", "--rdzv-conf", "--rdzv_conf", "--max-restarts", "--max_restarts",
    "--monitor-interval", "--monitor_interval", "--start-method", "--start_method", "--role",
    "--redirects", "--tee", "--log-dir", "--log_dir", "--local-addr", "--local_addr",
    "--standalone", "--use-env", "--use_env", "--no-python", "--no_python", "--run-path",
    "--run_path", "--module",
};

// ...then whole families by prefix.
const char* const kHarmlessPrefixes[] = {
    "--log-", "--tensorboard-", "--wandb-", "--eval-", "--lr", "--decoupled-", "--weight-decay",
    "--start-weight-decay", "--end-weight-decay", "--adam-", "--init-method-",
    "--embedding-init-method-", "--save", "--load", "--no-save-", "--no-load-", "--no-strict-",
    "--ckpt-", "--no-ckpt-", "--dist-ckpt-", "--non-persistent-", "--replication", "--exit-",
    "--profile", "--check-for-", "--manual-gc", "--no-manual-gc", "--loss-scale",
    "--data-", "--train-data-path", "--valid-data-path", "--test-data-path", "--per-split-data-",
    "--tokenizer-prompt-format", "--tiktoken-", "--rotary-", "--fp8-amax-", "--moe-router-",
    "--override-opt", "--use-checkpoint-opt", "--inprocess-", "--one-logger-", "--app-tag-",
    "--straggler-", "--inference-", "--retro-", "--dino-", "--vision-", "--ict-", "--biencoder-",
    "--retriever-", "--indexer-", "--error-injection-", "--mamba-",
};

struct Table {
  std::set<std::string_view> no_value, list, read, harmless;
  std::map<std::string_view, const char*> noted;
};

const Table& table() {
  static const Table kTable = [] {
    Table t;
    for (const char* name : kNoValue) t.no_value.insert(name);
    for (const char* name : kList) t.list.insert(name);
    for (const char* name : kRead) t.read.insert(name);
    for (const char* name : kHarmless) t.harmless.insert(name);
    for (const Noted& n : kNotModelled) t.noted[n.name] = n.note;
    return t;
  }();
  return kTable;
}

}  // namespace

FlagInfo megatron_flag_info(const std::string& name) {
  const Table& t = table();
  FlagInfo info;
  if (t.read.count(name) != 0) {
    info.role = FlagRole::kRead;
    info.known = true;
  } else if (const auto it = t.noted.find(name); it != t.noted.end()) {
    info.role = FlagRole::kNotModelled;
    info.note = it->second;
    info.known = true;
  } else if (t.harmless.count(name) != 0) {
    info.role = FlagRole::kHarmless;
    info.known = true;
  } else {
    for (const char* prefix : kHarmlessPrefixes) {
      if (name.rfind(prefix, 0) == 0) {
        info.role = FlagRole::kHarmless;
        info.known = true;
      }
    }
  }
  if (t.no_value.count(name) != 0) {
    info.arity = FlagArity::kNone;
  } else if (t.list.count(name) != 0) {
    info.arity = FlagArity::kList;
  } else if (info.known && t.harmless.count(name) + t.read.count(name) + t.noted.count(name) > 0) {
    info.arity = FlagArity::kOne;
  }
  return info;
}

std::string likely_megatron_flag(const std::string& name) {
  static const std::vector<std::string> kKnown = [] {
    const Table& t = table();
    std::set<std::string> names;
    for (const auto* list : {&t.no_value, &t.list, &t.read, &t.harmless}) {
      for (const std::string_view flag : *list) names.emplace(flag);
    }
    for (const auto& [flag, note] : t.noted) {
      if (std::string_view(note).rfind("no longer valid", 0) != 0) names.emplace(flag);
    }
    std::vector<std::string> known;
    for (const std::string& flag : names) {
      if (megatron_flag_info(flag).known) known.push_back(flag);
    }
    return known;
  }();
  return schema::likely_name(name, kKnown);
}

}  // namespace trainsim::interop
