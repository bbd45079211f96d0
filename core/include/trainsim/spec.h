// Validated inputs of an estimate: model x training strategy x system.
// Plain aggregates in SI units; default member initializers are the documented
// defaults of the JSON schema (README "Config reference"; the schema op
// publishes them from these initializers). schema/ converts JSON (human units)
// into these; estimators read them and never mutate them.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trainsim {

/// Version of the JSON documents (configs, results, envelopes).
inline constexpr int kSchemaVersion = 1;

enum class Activation { kSwiglu, kGelu };
enum class Norm { kRmsNorm, kLayerNorm };
enum class PositionEmbedding { kRope, kLearned };
enum class Dtype { kBf16, kFp16, kFp8 };

// DeepSeek-V2/V3 multi-latent attention (arXiv:2405.04434, Sec. 2.1).
struct MlaSpec {
  int64_t q_lora_rank = 0;  ///< 0 = queries are not compressed (DeepSeek-V2-Lite)
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

// Mixture-of-experts feed-forward (Megatron-Core MoELayer).
struct MoeSpec {
  int64_t num_experts = 0;
  int64_t top_k = 0;
  int64_t expert_ffn_hidden_size = 0;
  int64_t shared_expert_ffn_hidden_size = 0;  ///< total width of the shared experts; 0 = none
  int64_t num_dense_layers = 0;               ///< leading dense layers (first_k_dense_replace)
  /// Megatron --moe-layer-freq as a per-layer pattern (1 = MoE, 0 = dense); empty = every
  /// layer from num_dense_layers on is MoE.
  std::vector<int8_t> layer_pattern;
};

struct ModelSpec {
  std::string name;
  int64_t num_layers = 0;
  int64_t hidden_size = 0;
  int64_t num_attention_heads = 0;
  int64_t num_kv_heads = 0;  ///< = num_attention_heads unless GQA/MQA
  int64_t head_dim = 0;      ///< = hidden_size / num_attention_heads unless set
  int64_t ffn_hidden_size = 0;
  int64_t vocab_size = 0;
  int64_t make_vocab_size_divisible_by = 128;  ///< Megatron pads to a multiple of this * tp
  Activation activation = Activation::kSwiglu;
  Norm norm = Norm::kRmsNorm;
  PositionEmbedding position_embedding = PositionEmbedding::kRope;
  int64_t max_position_embeddings = 0;  ///< learned position table rows (kLearned only)
  bool tie_embeddings = false;
  bool linear_bias = false;
  bool qk_layernorm = false;
  /// Sliding-window attention (Megatron-LM --window-size W,0): each query attends to
  /// itself and the W tokens before it; 0 = full causal attention.
  int64_t sliding_window_tokens = 0;
  /// Megatron-LM --window-attn-skip-freq N: every N-th layer (1-based) attends fully,
  /// the others use the window; 0 = every layer uses the window.
  int64_t full_attention_every_n_layers = 0;
  /// Multi-token prediction depth (Megatron-LM --mtp-num-layers; DeepSeek-V3 trains with 1):
  /// each MTP layer is a transformer layer of the last layer's kind plus two norms and a
  /// 2h -> h projection on the last pipeline stage, with its own pass through the shared
  /// output layer and loss.
  int64_t mtp_num_layers = 0;
  std::optional<MlaSpec> mla;
  std::optional<MoeSpec> moe;
};

enum class RecomputeGranularity { kNone, kFull, kSelective };
enum class RecomputeMethod { kUniform, kBlock };

// Megatron-LM --recompute-modules (0.14) plus SimuMax's legacy selective sets.
enum class RecomputeModule {
  kCoreAttn,       ///< core attention (Korthikanti et al. 2022 selective recompute)
  kLayernorm,      ///< input/pre-MLP norms, outputs discarded and recomputed
  kMlaUpProj,      ///< MLA q/kv up projections, norms and RoPE
  kMlp,            ///< whole dense MLP
  kMoeAct,         ///< expert activation function
  kMoe,            ///< whole MoE block including shared experts
  kSharedExperts,  ///< shared-expert MLP of an MoE layer
  kAttn,           ///< SimuMax attn_only: attention block except its input norm
  kAttnNorm,       ///< SimuMax mla_rms_recompute: input norm and MLA down projections
  kAttnProj,       ///< SimuMax attn_recompute: QKV / up projections, q/kv norms, RoPE, core attention
  kMlpBlock,       ///< SimuMax mlp_only: the whole MLP / MoE side
  kMlpNorm,        ///< SimuMax mlp_rms_recompute: pre-MLP norm, shared experts, router
  kMlpLinear,      ///< SimuMax mlp_recompute: MLP / expert GEMMs and activation
};

struct RecomputeSpec {
  RecomputeGranularity granularity = RecomputeGranularity::kNone;
  RecomputeMethod method = RecomputeMethod::kBlock;  ///< kFull only
  /// kFull: layers recomputed per pipeline chunk (block) or per checkpoint group (uniform).
  /// kSelective: modules recomputed only in the first num_layers layers of each chunk; 0 = all.
  int64_t num_layers = 0;
  std::vector<RecomputeModule> modules;  ///< kSelective only
  /// The last op of each recomputed segment keeps its output (its consumer saved it), so it is
  /// not re-run (SimuMax recompute_variance). Selective only.
  bool keep_tail_outputs = false;
};

enum class CpCommType { kAllToAll, kRing, kAllGather };

struct ParallelSpec {
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t dp = 1;
  int64_t cp = 1;
  int64_t ep = 1;
  int64_t etp = 1;
  int64_t vpp = 1;  ///< virtual pipeline chunks per stage (interleaved 1F1B)
  bool sequence_parallel = false;
  std::optional<int64_t> num_layers_in_first_stage;
  std::optional<int64_t> num_layers_in_last_stage;
  bool account_for_embedding_in_pipeline_split = false;  ///< the embedding counts as a layer
  bool account_for_loss_in_pipeline_split = false;       ///< the loss counts as a layer
  CpCommType cp_comm_type = CpCommType::kAllToAll;
};

struct KernelSpec {
  bool flash_attention = true;
  bool fused_cross_entropy = false;
  bool fused_norm = true;
  bool fused_swiglu = true;
};

struct OverlapSpec {
  bool grad_reduce = false;   ///< --overlap-grad-reduce
  bool param_gather = false;  ///< --overlap-param-gather
  bool tp_comm = false;       ///< --tp-comm-overlap
};

struct MoeTrainingSpec {
  bool pad_to_capacity = false;  ///< --moe-pad-expert-input-to-capacity
  double capacity_factor = 0.0;  ///< 0 = dropless
  bool permute_probs_fused = false;  ///< router probs applied inside the expert activation (MCore >= 0.14)
};

struct TrainingSpec {
  int64_t seq_len = 0;
  int64_t micro_batch_size = 0;
  int64_t num_micro_batches = 0;  ///< per pipeline per step (= global batch / (mbs * dp))
  double train_tokens = 0.0;      ///< tokens of the whole run, for time-to-train (0 = not given)
  Dtype dtype = Dtype::kBf16;
  ParallelSpec parallel;
  int64_t zero_stage = 1;  ///< 1 = Megatron distributed optimizer (shards over dp * cp)
  bool grad_reduce_in_bf16 = false;
  bool gradient_accumulation_fusion = true;
  int64_t te_version_major = 2;  ///< Transformer Engine version gates some buffers
  int64_t te_version_minor = 11;
  RecomputeSpec recompute;
  KernelSpec kernels;
  OverlapSpec overlap;
  MoeTrainingSpec moe;
  /// PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (the allocator maps pages into one
  /// growing segment per stream instead of cudaMalloc'ing fixed segments).
  bool expandable_segments = false;
  /// NCCL_NVLS_ENABLE (NCCL's default uses NVLS where the system has it; 0 disables it).
  bool nccl_nvls = true;
};

enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kP2p };
inline constexpr int kNumCollectiveKinds = 5;

// Per-collective overrides measured on a link (nccl-tests fits).
struct CollectiveSpec {
  double efficiency = 0.0;  ///< fraction of the link bandwidth achieved; 0 = the link's
  double latency_s = -1.0;  ///< per-step latency; < 0 = the link's
};

// One interconnect tier. Collective time (ring alpha-beta model, as in
// SimuMax and NCCL's performance notes):
//   t = bytes * steps_factor / (bandwidth * efficiency) + latency * steps
struct LinkSpec {
  double bandwidth_bytes_per_s = 0.0;  ///< per GPU, one direction
  double latency_s = 0.0;              ///< per ring step
  double efficiency = 1.0;             ///< achieved / nominal bandwidth
  int64_t max_group_size = 0;          ///< tiers: largest group (span) this tier serves; 0 = any
  std::array<CollectiveSpec, kNumCollectiveKinds> collectives{};
  /// Measured bandwidth of data-parallel all-gather / reduce-scatter by group size (PCIe boxes).
  std::map<int64_t, double> dp_all_gather_bytes_per_s;
  std::map<int64_t, double> dp_reduce_scatter_bytes_per_s;
};

struct GpuSpec {
  std::string name;
  double hbm_capacity_bytes = 0.0;
  double hbm_bandwidth_bytes_per_s = 0.0;
  double peak_bf16_flops_per_s = 0.0;
  double peak_fp16_flops_per_s = 0.0;
  double peak_fp8_flops_per_s = 0.0;
  /// What PyTorch reports as the device's total memory (torch.cuda.mem_get_info()[1],
  /// the figure its out-of-memory message calls "total capacity"): what the allocator and
  /// everything outside it share. 0 = not given: hbm_capacity_bytes is used (with a note).
  double usable_memory_bytes = 0.0;
  /// CUDA context and loaded kernel modules of one training process (outside PyTorch's
  /// allocator). < 0 = not given (trainsim then assumes 512 MiB, with a note).
  double cuda_context_bytes = -1.0;
  /// CUDA compute capability (9.0 = Hopper); sets cuBLAS workspace sizes and NCCL's NVLS
  /// channels. 0 = not given (Hopper's figures, with a note).
  double compute_capability = 0.0;
};

// A memory-bound kernel class: achieved fraction of HBM bandwidth and a fixed
// launch/latency cost per kernel.
struct MemoryKernelSpec {
  double efficiency = 1.0;
  double latency_s = 0.0;
};

// Compute efficiency: measured tables (exact shape keys, SimuMax's format)
// first, else the shape-aware GEMM model, else the class's flat value.
struct EfficiencySpec {
  double gemm = 0.0;                 ///< dense GEMM efficiency (max of the shape model)
  double grouped_gemm = 0.0;
  double attention_forward = 0.0;
  double attention_backward = 0.0;
  double fp8_gemm = 0.0;             ///< relative to the fp8 peak
  double fp8_grouped_gemm = 0.0;
  /// Shape model: eff = gemm * wave_utilization * m/(m+h) * n/(n+h) * k/(k+h), h = half size.
  /// 0 disables the shape model (flat efficiency).
  double gemm_half_size = 0.0;
  int64_t num_sms = 0;               ///< streaming multiprocessors (wave quantization); 0 = off
  int64_t tile_m = 128;
  int64_t tile_n = 128;
  MemoryKernelSpec memory;           ///< norms, activations, embedding, optimizer
  MemoryKernelSpec permute;          ///< MoE token permutation kernels
  MemoryKernelSpec cross_entropy;
  MemoryKernelSpec cross_entropy_fused;
  std::map<std::string, double> measured_gemm;
  std::map<std::string, double> measured_grouped_gemm;
  std::map<std::string, double> measured_attention_forward;
  std::map<std::string, double> measured_attention_backward;
};

struct SystemSpec {
  std::string name;
  GpuSpec gpu;
  int64_t num_gpus = 0;
  int64_t gpus_per_node = 8;
  LinkSpec intra_node;
  std::vector<LinkSpec> intra_node_tiers;  ///< optional: per group-size tiers (PCIe switches)
  LinkSpec inter_node;
  EfficiencySpec efficiency;
  /// Multi-node slowdown of the pipeline: 1 + x/(x+1) * c * sqrt(x), x = log2(nodes in a
  /// data-parallel group) (SimuMax's empirical straggler model). 0 disables it.
  double straggler_coefficient = 0.0;
  /// NCCL channels of a collective communicator (and per NVLink peer for send/recv).
  int64_t nccl_channels = 16;
  /// NCCL NVLS (NVLink SHARP) buffers per intra-node collective communicator; 0 = the
  /// system has no NVLS (no NVSwitch multicast).
  double nvls_buffer_bytes = 0.0;
};

struct Config {
  ModelSpec model;
  TrainingSpec training;
  SystemSpec system;
};

}  // namespace trainsim
