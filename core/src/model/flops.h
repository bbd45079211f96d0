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

// FLOPs of one step of `sequences` sequences of `seq_len` tokens. routed_share: the
// share of the routed expert copies that are processed (model/moe_ops.h
// kept_routed_share: tokens dropped at the expert capacity are not model FLOPs).
double model_flops_per_step(const ModelSpec& model, int64_t seq_len, double sequences,
                            FlopConvention convention, double routed_share = 1.0);

}  // namespace trainsim
