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

// What ZeRO divides each part by: the sharding group when the stage shards that
// part (optimizer states from ZeRO 1, gradients from 2, weights from 3), else 1
// (Rajbhandari et al. 2020, ZeRO, section 5).
struct ZeroDivisors {
  double parameters = 1.0;
  double gradients = 1.0;
  double optimizer = 1.0;
};
ZeroDivisors zero_divisors(const TrainingSpec& training, double group);

// Main-grad element size: fp32, or bf16 with grad_reduce_in_bf16.
double grad_bytes_per_param(const TrainingSpec& training);

// fp32 master weights + Adam exp_avg + exp_avg_sq.
constexpr double kOptimizerBytesPerParam = 12.0;

// weight bytes are passed separately because fp8 GEMM weights take 1 byte.
StaticMemory static_memory(const TrainingSpec& training, const RankParams& params,
                           double dense_weight_bytes, double expert_weight_bytes);

}  // namespace trainsim
