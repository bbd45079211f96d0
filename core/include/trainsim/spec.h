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
#include <utility>
#include <vector>

namespace trainsim {

/// Version of the JSON documents (configs, results, envelopes).
inline constexpr int kSchemaVersion = 1;

// MLP activation. Gated (GLU) variants have two up projections, act(x W) * (x V)
// (Shazeer, "GLU Variants Improve Transformer", arXiv:2002.05202): swiglu (SiLU gate,
// Llama), geglu (GELU gate, grok-1); ungated ones one: gelu (GPT), squared_relu
// (relu(x)^2, So et al. arXiv:2109.08668; Nemotron-4, Megatron-LM --squared-relu).
enum class Activation { kSwiglu, kGelu, kSquaredRelu, kGeglu };
enum class Norm { kRmsNorm, kLayerNorm };
enum class PositionEmbedding { kRope, kLearned };
enum class Dtype { kBf16, kFp16, kFp8, kFp4 };

/// Transformer Engine FP8 recipes as Megatron-LM --fp8-recipe names them
/// (megatron/core/enums.py Fp8Recipe; mapped to TE recipes in
/// megatron/core/fp8_utils.py): per-tensor scales from an amax history
/// (delayed) or from the current tensor (tensorwise), 1x128 / 128x128 blocks
/// (blockwise), 1x32 blocks with E8M0 scales (mxfp8).
enum class Fp8Recipe { kDelayed, kTensorwise, kBlockwise, kMxfp8 };

/// The GEMM kernel format: operand precision and scaling granularity
/// (fp8 = per-tensor scaled; fp4 runs use NVFP4, Megatron --fp4-recipe nvfp4).
enum class GemmFormat : uint8_t { kBf16 = 0, kFp8 = 1, kFp8Blockwise = 2, kMxfp8 = 3, kNvfp4 = 4 };
inline constexpr int kNumGemmFormats = 5;

/// Megatron-LM --cuda-graph-impl.
enum class CudaGraphImpl { kNone, kLocal, kTransformerEngine, kFullIteration };
/// Megatron-LM --cuda-graph-modules (formerly --cuda-graph-scope).
enum class CudaGraphModule { kAttn, kMlp, kMoe, kMoeRouter, kMoePreprocess };

struct CudaGraphSpec {
  CudaGraphImpl impl = CudaGraphImpl::kNone;
  /// Captured modules; empty with local / transformer_engine = each whole layer.
  std::vector<CudaGraphModule> modules;
};

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
  /// Group-limited routing (Megatron --moe-router-num-groups / --moe-router-group-topk;
  /// DeepSeek-V3's node-limited routing, arXiv:2412.19437 section 2.1.2): the experts form
  /// router_num_groups equal groups and a token's top-k experts lie in at most
  /// router_group_topk of them. 0 = not limited.
  int64_t router_num_groups = 0;
  int64_t router_group_topk = 0;
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

// Pipeline schedule (training.pipeline_schedule): Megatron-LM's 1F1B (interleaved when
// vpp > 1), the zero-bubble schedules of Qi et al. (arXiv:2401.10241) and DeepSeek-V3's
// DualPipe (arXiv:2412.19437 section 3.2.1) and its V-shaped variant.
enum class PipelineSchedule { kOneFOneB, kZeroBubbleH1, kZeroBubbleH2, kZeroBubbleV, kDualPipe, kDualPipeV };

// One virtual pipeline stage of an explicit layout (Megatron-LM
// --pipeline-model-parallel-layout): what it holds, in this order.
struct LayoutStage {
  bool embedding = false;      ///< "E"
  int64_t decoder_layers = 0;  ///< "t"
  int64_t mtp_layers = 0;      ///< "m"
  bool loss = false;           ///< "L": final norm, output layer and loss
  bool operator==(const LayoutStage&) const = default;
};

struct ParallelSpec {
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t dp = 1;
  int64_t cp = 1;
  int64_t ep = 1;
  int64_t etp = 1;
  int64_t vpp = 1;  ///< virtual pipeline chunks per stage (interleaved 1F1B)
  bool sequence_parallel = false;
  /// Megatron-LM's scatter/gather of stage-boundary tensors (Narayanan et al. 2021, section
  /// 4.1; megatron/p2p_communication.py from 2021-02 until Megatron-Core took over pipeline
  /// communication in 2023-03): without sequence parallelism each tensor-parallel rank sends
  /// 1/tp of the activation and the receiver all-gathers it over the TP group. Megatron-Core
  /// sends the whole tensor from every rank (false).
  bool scatter_gather_tensors_in_pipeline = false;
  std::optional<int64_t> num_layers_in_first_stage;
  std::optional<int64_t> num_layers_in_last_stage;
  bool account_for_embedding_in_pipeline_split = false;  ///< the embedding counts as a layer
  bool account_for_loss_in_pipeline_split = false;       ///< the loss counts as a layer
  /// Megatron-LM's default (megatron/training/arguments.py, --cp-comm-type default ["p2p"]):
  /// ring attention, which needs no head count divisible by tp*cp.
  CpCommType cp_comm_type = CpCommType::kRing;
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  /// Explicit layout, virtual stages in model order (stage k on pp rank k % pp, chunk k / pp
  /// under Megatron's placement); empty = the split above.
  std::vector<LayoutStage> layout;
};

struct KernelSpec {
  bool flash_attention = true;
  bool fused_cross_entropy = false;
  bool fused_norm = true;
  bool fused_swiglu = true;
  bool fused_bias_dropout = true;  ///< no --no-bias-dropout-fusion: bias + dropout + residual add in one kernel
  bool fused_rope = true;          ///< no --no-rope-fusion: one RoPE kernel per q and k
  bool fused_softmax = true;       ///< no --no-masked-softmax-fusion (unfused attention only)
  bool moe_router_fusion = false;  ///< --moe-router-fusion: TE fused score / top-k / aux loss
  bool moe_permute_fusion = false; ///< --moe-permute-fusion: TE fused token permutation
};

struct OverlapSpec {
  bool grad_reduce = false;   ///< --overlap-grad-reduce
  bool param_gather = false;  ///< --overlap-param-gather
  bool tp_comm = false;       ///< --tp-comm-overlap
  /// Megatron-LM overlap_p2p_comm (on unless --no-overlap-p2p-communication): the
  /// interleaved schedule's steady phase posts its pipeline sends and receives without
  /// waiting and a pass waits only for its own input (schedules.py
  /// forward_backward_pipelining_with_interleaving). Megatron-LM turns it off without
  /// virtual stages (arguments.py); so does trainsim.
  bool p2p = true;
  /// Megatron-LM --defer-embedding-wgrad-compute: the last stage keeps the output layer's
  /// input and logits gradient of the first wgrad_deferral_limit micro-batches (0: all of
  /// them) and runs their weight-gradient GEMMs after its last backward, in the pipeline
  /// flush, before its gradient reduction (tensor_parallel/layers.py
  /// LinearWithGradAccumulationAndAsyncCommunication.backward; schedules.py
  /// finish_embedding_wgrad_compute, drain_embedding_wgrad_compute).
  bool defer_embedding_wgrad = false;
  int64_t wgrad_deferral_limit = 0;  ///< --wgrad-deferral-limit; 0 = every micro-batch
  /// --overlap-moe-expert-parallel-comm: in the steady 1F1B phase one micro-batch's forward
  /// and another's backward run merged layer by layer, each one's expert all-to-all on a
  /// communication stream beside the other's compute
  /// (megatron/core/pipeline_parallel/combined_1f1b.py, model_chunk_schedule_plan.py).
  bool moe_ep_comm = false;
  /// --delay-wgrad-compute (with moe_ep_comm): the expert and attention weight gradients run
  /// after the dispatch backward is issued, so the all-to-all does not wait for them.
  bool delay_wgrad = false;
  /// --moe-shared-expert-overlap: the shared experts run on a side stream during the token
  /// dispatch and combine (megatron/core/transformer/moe/shared_experts.py).
  bool moe_shared_expert = false;
};

// Megatron --moe-token-dispatcher-type: alltoall sends each (token, expert) copy;
// flex (DeepEP / HybridEP) sends a token once per destination rank, and across
// nodes once per destination node over the inter-node fabric, fanning it out over
// NVLink there.
enum class MoeDispatcher { kAllToAll, kFlex };
// Megatron --moe-router-load-balancing-type (the auxiliary losses it computes).
enum class MoeLoadBalancing { kAuxLoss, kSeqAuxLoss, kGlobalAuxLoss, kNone };

struct MoeTrainingSpec {
  bool pad_to_capacity = false;  ///< --moe-pad-expert-input-to-capacity
  double capacity_factor = 0.0;  ///< 0 = dropless; else tokens beyond it are dropped (or padded to it)
  bool permute_probs_fused = false;  ///< router probs applied inside the expert activation (MCore >= 0.14)
  /// Tokens the busiest expert-parallel rank receives over its balanced share (1 = balanced,
  /// at most ep): sets its grouped-GEMM rows, all-to-all receive size and permuted-token memory.
  double routing_imbalance = 1.0;
  MoeDispatcher dispatcher = MoeDispatcher::kAllToAll;
  /// SMs the flex dispatcher's dispatch / combine kernels hold (flex only). Megatron-LM
  /// --moe-flex-dispatcher-num-sms, formerly --moe-deepep-num-sms (DeepEP, default 20) and
  /// --moe-hybridep-num-sms (HybridEP); DeepEP's 20 is used when Megatron's is unset
  /// (megatron/core/transformer/moe/token_dispatcher.py).
  int64_t flex_dispatcher_num_sms = 20;
  MoeLoadBalancing load_balancing = MoeLoadBalancing::kAuxLoss;
  double aux_loss_coeff = 0.0;  ///< --moe-aux-loss-coeff; 0 = the loss is not computed
  bool expert_bias = false;     ///< --moe-router-enable-expert-bias (aux-loss-free balancing)
  bool router_fp32 = false;     ///< --moe-router-dtype fp32: logits and routing in fp32
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
  /// Megatron-FSDP (zero_stage 2, 3) --fsdp-double-buffer: each model chunk's layers gather
  /// their parameters and produce their unsharded gradients in a fixed pool of two buffers
  /// (memory/stage_statics.cpp add_fsdp_buffers).
  bool fsdp_double_buffer = false;
  /// Megatron-FSDP --suggested-communication-unit-size: the elements of unsharded gradients
  /// waiting for their reduce-scatter (half of it: parameters prefetched); 0 = Megatron's
  /// default (twice the average layer with ZeRO 3, at least 1e9).
  int64_t fsdp_communication_unit_elements = 0;
  int64_t te_version_major = 2;  ///< Transformer Engine version gates some buffers
  int64_t te_version_minor = 11;
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;  ///< dtype fp8 only (Megatron --fp8-recipe)
  /// --fp8-param-gather: weights stored in fp8 (and all-gathered in fp8); without it
  /// Transformer Engine keeps the bf16 weights and caches their fp8 copies.
  bool fp8_param_gather = false;
  double hidden_dropout = 0.0;     ///< --hidden-dropout (Megatron-LM's own default is 0.1)
  double attention_dropout = 0.0;  ///< --attention-dropout (Megatron-LM's own default is 0.1)
  CudaGraphSpec cuda_graph;
  RecomputeSpec recompute;
  KernelSpec kernels;
  OverlapSpec overlap;
  MoeTrainingSpec moe;
  /// PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (the allocator maps pages into one
  /// growing segment per stream instead of cudaMalloc'ing fixed segments).
  bool expandable_segments = false;
  /// NCCL_NVLS_ENABLE (NCCL's default uses NVLS where the system has it; 0 disables it).
  bool nccl_nvls = true;
  /// Megatron-LM --optimizer-cpu-offload --optimizer-offload-fraction: the fraction of the
  /// optimizer's parameter elements whose fp32 master copy and Adam moments live in host
  /// memory and are stepped by the CPU (HybridDeviceOptimizer); 0 = no offload.
  double optimizer_offload_fraction = 0.0;
  /// --overlap-cpu-optimizer-d2h-h2d: gradient copies, CPU steps and parameter copies of
  /// successive parameters run concurrently instead of one after the other.
  bool overlap_cpu_optimizer_d2h_h2d = false;
  /// Megatron-LM --cpu-offloading-num-layers (TransformerConfig.cpu_offloading_num_layers,
  /// Transformer Engine get_cpu_offload_context): the saved activations of the first N
  /// transformer layers are copied to pinned host memory during the forward and copied back
  /// during the backward; 0 = no activation offload.
  int64_t activation_offload_layers = 0;
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
  /// NVLink SHARP (NCCL's NVLS algorithm) all-reduce: its measured algorithm bandwidth
  /// over bandwidth_bytes_per_s inside one NVSwitch domain; 0 = no NVLS on this link.
  double nvls_all_reduce_efficiency = 0.0;
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
  /// Dense fp4 peak; > 0 marks block-scaled (MX / NV) tensor cores (Blackwell), which
  /// MXFP8 and NVFP4 need (Transformer Engine quantization.py: compute capability >= 10.0).
  double peak_fp4_flops_per_s = 0.0;
};

// A memory-bound kernel class: achieved fraction of HBM bandwidth and a fixed
// launch/latency cost per kernel.
struct MemoryKernelSpec {
  double efficiency = 1.0;
  double latency_s = 0.0;
};

// Attention kernel efficiency (executed FLOPs / dense bf16 peak) along the
// sequence length, for one head dim and masking (time/attention_efficiency.h).
struct AttentionCurve {
  int64_t head_dim = 0;
  bool causal = true;
  std::vector<std::pair<double, double>> points;  ///< (seq_len, efficiency), ascending seq_len
};

// Curves hold the efficiency of a fully occupied GPU; with `tiles` thread
// blocks (batch x heads x 128-query tiles) a pass reaches tiles / (tiles +
// tiles_half) of it (too few blocks to hide the pipeline latency: measured with
// few heads in Transformer Engine's attention, SimuMax efficency_test).
struct AttentionTable {
  std::vector<AttentionCurve> forward;
  std::vector<AttentionCurve> backward;
  double forward_tiles_half = 0.0;   ///< 0 = no occupancy penalty
  double backward_tiles_half = 0.0;
};

// CPU side of the step (time/host_time.h): the host issues every kernel of an
// eager step; the GPU waits whenever the host falls behind.
struct HostSpec {
  double launch_s = 0.0;  ///< CPU time per eagerly launched kernel (PyTorch + TE dispatch included)
  /// CPU time per kernel that native code launches in a loop within one host call
  /// (Transformer Engine's C++: a grouped linear's per-expert quantisations after the
  /// first, userbuffers' chunked GEMMs and copies); no Python or dispatcher work per kernel
  double native_launch_s = 0.0;
  /// CPU time per expert GEMM of a grouped linear after the first (Transformer Engine's
  /// general_grouped_gemm: a cuBLASLt call and a stream hand-off per expert)
  double expert_gemm_launch_s = 0.0;
  double sync_s = 0.0;    ///< GPU idle per host-device synchronisation (dropless MoE token counts)
};

// Compute efficiency: measured tables (exact shape keys, SimuMax's format)
// first, else the GEMM shape model (time/efficiency.h) on the format's plateau,
// else the attention table.
struct EfficiencySpec {
  /// GEMM plateau per GemmFormat: the fraction of that format's dense peak a large,
  /// wave-aligned, long-K GEMM sustains; 0 = no figure for the format.
  std::array<double, kNumGemmFormats> gemm{};
  /// The same for grouped (expert) GEMM kernels; 0 = gemm's.
  std::array<double, kNumGemmFormats> grouped_gemm{};
  /// K at which a bf16 GEMM reaches half its plateau: eff *= k / (k + k_half); low-precision
  /// formats scale it by their peak over the bf16 peak (the roofline ridge argument,
  /// time/efficiency.h). 0 = no K roll-off.
  double gemm_k_half = 0.0;
  /// Sustained fraction of the microbenchmarked (burst) kernel efficiencies under a long
  /// training load; multiplies every GEMM and attention efficiency but measured tables.
  double sustained_fraction = 1.0;
  int64_t num_sms = 0;               ///< streaming multiprocessors (wave quantization); 0 = off
  int64_t tile_m = 128;
  int64_t tile_n = 128;
  AttentionTable attention;
  MemoryKernelSpec memory;           ///< streaming HBM efficiency + per-kernel fixed GPU cost
  MemoryKernelSpec permute;          ///< MoE token permutation kernels (default: memory)
  MemoryKernelSpec cross_entropy;    ///< (default: memory)
  MemoryKernelSpec cross_entropy_fused;
  HostSpec host;
  std::map<std::string, double> measured_gemm;
  std::map<std::string, double> measured_grouped_gemm;
  std::map<std::string, double> measured_attention_forward;
  std::map<std::string, double> measured_attention_backward;
};

// Where a figure of a system comes from (system.provenance, keyed by JSON
// pointer into the system object; an ancestor pointer covers its subtree).
enum class ProvenanceKind { kDatasheet, kMeasured, kMicrobenchmark, kFitted, kAssumed, kConfig };

struct Provenance {
  ProvenanceKind kind = ProvenanceKind::kConfig;
  std::string source;
  std::vector<std::string> cases;  ///< kFitted: the validation cases it was fitted on
};

// The host side of a GPU (optimizer CPU offload): its share of the node's host
// memory and memory bandwidth, and its host link (PCIe or NVLink-C2C). 0 = not stated.
struct HostMemorySpec {
  double memory_bytes = 0.0;                 ///< host DRAM per GPU
  double memory_bandwidth_bytes_per_s = 0.0; ///< host DRAM bandwidth per GPU
  double memory_efficiency = 1.0;            ///< achieved fraction of it by a CPU optimizer step
  double link_bandwidth_bytes_per_s = 0.0;   ///< host <-> GPU, one direction
  double link_efficiency = 1.0;              ///< achieved fraction of it by pinned copies
  bool stated() const { return memory_bytes > 0.0 && memory_bandwidth_bytes_per_s > 0.0 && link_bandwidth_bytes_per_s > 0.0; }
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
  HostMemorySpec host;
  /// Multi-node slowdown of the pipeline: 1 + x/(x+1) * c * sqrt(x), x = log2(nodes in a
  /// data-parallel group) (SimuMax's empirical straggler model). 0 disables it.
  double straggler_coefficient = 0.0;
  /// NCCL channels of a collective communicator (and per NVLink peer for send/recv).
  int64_t nccl_channels = 16;
  /// NCCL NVLS (NVLink SHARP) buffers per intra-node collective communicator; 0 = the
  /// system has no NVLS (no NVSwitch multicast).
  double nvls_buffer_bytes = 0.0;
  std::map<std::string, Provenance> provenance;
};

struct Config {
  ModelSpec model;
  TrainingSpec training;
  SystemSpec system;
};

}  // namespace trainsim
