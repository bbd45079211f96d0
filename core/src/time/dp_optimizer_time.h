// Once-per-step costs of one stage: data-parallel gradient reduce-scatter and
// parameter all-gather (Megatron DistributedOptimizer; all-reduce without it),
// and the optimizer step.
#pragma once

#include "trainsim/spec.h"

namespace trainsim {

struct DpTime {
  double reduce_scatter_s = 0.0;  ///< gradients (all-reduce with ZeRO 0)
  double all_gather_s = 0.0;      ///< updated parameters
  double reduce_buckets = 0.0;
  double gather_buckets = 0.0;
  double total() const { return reduce_scatter_s + all_gather_s; }
};

// dense / expert: parameter elements held by one GPU of the stage.
DpTime dp_comm_time(const Config& config, double dense_params, double expert_params);

// Adam step over the GPU's shard, as a sequence of HBM passes (zero the grad
// buffer, grad norm, scaling, clip, Adam, copy to bf16 params).
double optimizer_time_s(const Config& config, double dense_params, double expert_params);

}  // namespace trainsim
