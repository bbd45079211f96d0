// Tensor-parallel communication overlap as Transformer Engine's userbuffers run
// it (Megatron-LM --tp-comm-overlap; transformer_engine/pytorch/module/base.py,
// initialize_ub at NVIDIA/TransformerEngine@d0067d0d). Each sequence-parallel
// linear's all-gather / reduce-scatter is split and overlapped with its GEMM by
// one of three methods, chosen per GEMM by TE's default table:
//   ring_exchange (qkv/fc1 fprop all-gather, proj/fc2 dgrad all-gather): the GEMM
//     runs in tp chunks, each while the next chunk's shard arrives from the ring
//     neighbour on the copy engines (use_ce, one SM, no SM margin); a step whose
//     transfer outlasts its chunk's GEMM exposes the difference.
//   pipeline (proj/fc2 fprop reduce-scatter): the GEMM runs in num_splits = 4
//     chunks; each chunk's reduce-scatter runs beside the next chunk's GEMM, the
//     last one exposed.
//   bulk (qkv/fc1 dgrad and wgrad): the dgrad's reduce-scatter runs whole beside
//     the wgrad GEMM and the input all-gather beside the dgrad GEMM.
// Not priced: the GEMM slowdown while pipeline / bulk kernels hold SMs. TE's
// defaults take 16 SMs from the GEMM (set_sm_margin), but the recipes of the
// published runs tune it per model (Megatron-Bridge
// src/megatron/bridge/training/comm_overlap.py: bulk with 2-24 SMs and no margin,
// fp8 reduce-scatters by ring exchange on the copy engines), and trainsim has no
// key for a recipe's userbuffers table; pricing TE's default margin on every run
// moved the H100 runs 4-5% slower, away from their measurements.
// Collectives of other ops (vocab-parallel embedding and loss all-reduces, the
// fp8 current-scaling amax all-reduce) are not overlapped: userbuffers serve the
// linears only.
#pragma once

#include <cstdint>

#include "model/op.h"

namespace trainsim {

enum class TpOverlapMethod : uint8_t { kRingExchange, kPipeline, kBulk };

// TE's default num_splits of the pipeline method (initialize_ub, get_default_config).
inline constexpr double kTePipelineSplits = 4.0;

// The method TE's default table gives the tensor-parallel collective of a
// linear in a pass: all-gathers of the forward and of the data-gradient pass
// are ring exchanges, the forward reduce-scatter is a pipeline, and the
// backward pair of a column linear (its dgrad reduce-scatter and the
// weight-gradient pass's re-gather) is bulk.
TpOverlapMethod tp_overlap_method(Collective collective, Pass pass);

struct TpOverlapCost {
  double exposed_comm_s = 0.0;   ///< communication the GEMM does not hide
  /// Kernels beyond one GEMM and one collective, launched by Transformer Engine's C++
  /// (transformer_engine/common/comm_gemm_overlap/comm_gemm_overlap.cpp) within one call.
  double extra_launches = 0.0;
};

// `compute_s`: the GEMM's time alone on every SM; `comm_s`: the collective's
// time alone; `step_comm_s`: one ring step's transfer (ring_exchange only);
// `tp`: the group size.
TpOverlapCost tp_overlap_cost(TpOverlapMethod method, double compute_s, double comm_s,
                              double step_comm_s, int64_t tp);

}  // namespace trainsim
