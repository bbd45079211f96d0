// One operation (kernel-level module) of a model chunk, with everything the
// memory walk and the time model need: bytes it keeps for backward, its
// transient working sets, FLOPs and HBM bytes per pass, the shape used to look
// up its efficiency, and the collectives it issues. The breakdown follows the
// leaf modules Megatron-Core + Transformer Engine execute (and SimuMax models,
// simumax/core/transformer/dense_module.py, moe_module.py).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "trainsim/spec.h"

namespace trainsim {

enum class Pass : uint8_t { kForward = 0, kBackwardData = 1, kBackwardWeight = 2 };
inline constexpr int kNumPasses = 3;

enum class OpKind : uint8_t {
  kEmbedding,
  kNorm,
  kLinear,         ///< dense GEMM (column- or row-parallel)
  kRouter,         ///< MoE router GEMM + softmax
  kGroupedLinear,  ///< expert grouped GEMM
  kAttention,      ///< core attention (flash or math), GQA or MLA
  kActivation,
  kPermutation,    ///< MoE token dispatch (permute + all-to-all)
  kUnpermutation,  ///< MoE token combine
  kQuantizer,      ///< fp8 / fp4 quantisation of a GEMM operand (cast, amax, transpose, scales)
  kCrossEntropy,
  kElementwise,    ///< bias / dropout / residual adds, RoPE, softmax, router scores
  kFree,           ///< split / concat / views: no kernel
};

// The Megatron-LM CUDA-graph scope an op belongs to (--cuda-graph-modules).
enum class GraphScope : uint8_t { kNone, kAttn, kMlp, kMoeRouter, kMoePreprocess, kMoeExperts };

// Which compute-efficiency class prices the FLOPs of a pass.
enum class ComputeClass : uint8_t { kNone, kGemm, kGroupedGemm, kAttentionForward, kAttentionBackward };
// Which HBM-efficiency class prices the bytes of a pass.
enum class MemoryClass : uint8_t { kDefault, kPermuteForward, kPermuteBackward, kCrossEntropy,
                                   kCrossEntropyFused };

enum class Collective : uint8_t { kAllReduce, kAllGather, kReduceScatter, kAllToAll };
enum class CommGroup : uint8_t { kTp, kCp, kEp, kEtp };

struct PassCost {
  double flops = 0.0;
  double bytes = 0.0;    ///< HBM bytes the pass's kernels move
  double kernels = 0.0;  ///< kernels the pass launches (each pays the GPU's per-kernel cost and a host launch)
  ComputeClass compute = ComputeClass::kNone;
  MemoryClass memory = MemoryClass::kDefault;
  /// Of `kernels`, those native code launches in a loop within one host call (a grouped
  /// linear's per-expert casts after the first): host.native_launch_s each.
  double native_kernels = 0.0;
  /// Of `kernels`, a grouped linear's expert GEMMs after the first (host.expert_gemm_launch_s each).
  double expert_gemm_kernels = 0.0;
  /// Streams the pass's kernels are spread over: while one stream's kernel starts or
  /// drains, another's runs, so only kernels / streams of the per-kernel GPU costs
  /// fall in series (1 = one stream).
  double streams = 1.0;
};

struct CommCall {
  Pass pass = Pass::kForward;
  Collective collective = Collective::kAllReduce;
  CommGroup group = CommGroup::kTp;
  double bytes = 0.0;  ///< full logical tensor (gathered size for all-gather / reduce-scatter)
  bool overlaps_compute = false;  ///< runs concurrently with its op's compute (ring attention)
  /// An expert all-to-all of routed token copies: its inter-node share follows the
  /// routing and the dispatcher (time/moe_routing.h), not the uniform (n - 1) / n.
  bool routed = false;
};

// Shape used to look up a measured efficiency (SimuMax system-file keys).
struct GemmShape {
  int64_t b = 0, m = 0, k = 0, n = 0;
};
struct GroupedGemmShape {
  int64_t num_groups = 0, m = 0, n = 0, k = 0;
};
struct AttentionShape {
  int64_t batch = 0, seq_len = 0, heads = 0, kv_heads = 0, qk_head_dim = 0, v_head_dim = 0;
  double rank_heads = 0.0;       ///< query heads' share of this rank (heads / (tp * cp), unrounded)
  bool causal = false;           ///< a causal flash kernel (skips the masked blocks)
  double window_fraction = 1.0;  ///< share of the causal pairs a sliding window keeps
};

struct Op {
  const char* name = "";
  OpKind kind = OpKind::kFree;
  bool fp8 = false;  ///< GEMM runs in fp8 / fp4 (a low-precision format)
  GemmFormat format = GemmFormat::kBf16;  ///< kLinear / kGroupedLinear: the GEMM kernel format
  GraphScope scope = GraphScope::kNone;   ///< CUDA-graph module it belongs to
  bool host_sync = false;  ///< the host waits for the GPU after this op's forward (dropless MoE)

  // Memory, bytes for one micro-batch.
  double cache_bytes = 0.0;       ///< saved from forward to backward
  double fwd_peak_bytes = 0.0;    ///< working set while it runs forward
  double bwd_peak_bytes = 0.0;    ///< working set while it runs backward
  double input_bytes = 0.0;       ///< its input, stored when it starts a recompute segment
  bool recompute = false;         ///< inside a recomputed (checkpointed) segment
  bool recompute_tail = false;    ///< recomputed segment's last op whose output is kept: no re-run cost
  bool segment_start = false;     ///< always starts a new recompute segment (layer input)
  bool segment_end = false;       ///< always ends the recompute segment it belongs to
  bool offload_input = false;     ///< a segment-starting op that stores no input (offloaded)

  // Time.
  std::array<PassCost, kNumPasses> cost{};
  GemmShape gemm;                 ///< kLinear / kRouter forward shape
  GroupedGemmShape grouped;       ///< kGroupedLinear
  AttentionShape attention;       ///< kAttention
  bool row_parallel = false;      ///< kLinear: input split over tp (affects wgrad bytes)
  bool recompute_comm = false;    ///< its forward collectives are re-issued on recompute
  std::vector<CommCall> comms;

  // Parameters this op holds on one GPU (elements).
  double dense_params = 0.0;
  double expert_params = 0.0;
  double weight_bytes_per_param = 2.0;
  int64_t wgrad_rows = 0;         ///< TE dummy-wgrad buffer shape (0 = none)
  int64_t wgrad_cols = 0;
  bool wgrad_grouped = false;
};

using OpList = std::vector<Op>;

}  // namespace trainsim
