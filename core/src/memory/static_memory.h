// Weights, main gradients and optimizer states held by one GPU of a stage
// (mixed-precision Adam as in Megatron-LM's DistributedOptimizer:
// megatron/core/optimizer/distrib_optimizer.py; bytes per parameter as in
// megatron/training/theoretical_memory_usage.py: 18, or 6 + 12/DP sharded).
// Optimizer CPU offload (megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py,
// param_update_in_fp32): a fraction of the shard's elements keeps its fp32 master copy and
// Adam moments in host memory, plus a pinned fp32 copy of its gradient (16 B per element).
#pragma once

#include "model/param_count.h"
#include "model/shard_groups.h"
#include "trainsim/spec.h"

namespace trainsim {

struct StaticMemory {
  double parameters_bytes = 0.0;
  double gradients_bytes = 0.0;
  double optimizer_bytes = 0.0;  ///< on the GPU: the part not offloaded
  double host_bytes = 0.0;       ///< in pinned host memory: the offloaded part
};

// weight bytes are passed separately because fp8 GEMM weights take 1 byte.
StaticMemory static_memory(const TrainingSpec& training, const RankParams& params,
                           double dense_weight_bytes, double expert_weight_bytes);

}  // namespace trainsim
