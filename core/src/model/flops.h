// Model FLOPs per training step under the conventions published numbers use
// (forward + backward = 3x forward; 2 FLOPs per multiply-add; recompute not
// counted unless the convention says so).
#pragma once

#include <cstdint>

#include "trainsim/spec.h"

namespace trainsim {

enum class FlopConvention {
  kMegatron,         ///< megatron/training/training.py num_floating_point_operations (2025+):
                     ///< causal attention halved, GQA/MLA/MoE aware
  kMegatronLegacy,   ///< the same before commit 8873b55d (2025-03-06): full (non-causal) attention,
                     ///< 12*B*s*L*h^2*[(1 + g/a + s/h)*(q/h) + (f/h)*k*glu + V/(2*L*h)]
  kNarayanan2021,    ///< arXiv:2104.04473 Eq. 3: 96*B*s*l*h^2*(1 + s/(6h) + V/(16*l*h)), counts the
                     ///< extra forward of full recompute
  kKorthikanti2022,  ///< arXiv:2205.05198 Sec. 6: model FLOPs 72*B*L*s*h^2*(1 + s/(6h) + V/(12hL))
};

const char* flop_convention_name(FlopConvention convention);

// FLOPs of one step of `sequences` sequences of `seq_len` tokens.
// routed_fraction: share of the routed (token, expert) assignments the experts
// compute (1 = dropless; less when a capacity factor drops tokens): model FLOPs
// count only computed tokens.
double model_flops_per_step(const ModelSpec& model, int64_t seq_len, double sequences,
                            FlopConvention convention, double routed_fraction = 1.0);

// The share of routed (token, expert) assignments computed under balanced
// routing: min(1, capacity_factor) when a capacity factor is set (Megatron-LM
// moe_utils.py get_capacity: capacity = tokens * top_k / experts * factor; the
// assignments beyond it are dropped), 1 when dropless. Padding to capacity adds
// rows the experts compute but that are not model FLOPs.
double computed_routed_fraction(const TrainingSpec& training);

}  // namespace trainsim
