#include "memory/static_memory.h"

namespace trainsim {

double grad_bytes_per_param(const TrainingSpec& t) { return t.grad_reduce_in_bf16 ? 2.0 : 4.0; }

ZeroDivisors zero_divisors(const TrainingSpec& t, double group) {
  return {t.zero_stage >= 3 ? group : 1.0, t.zero_stage >= 2 ? group : 1.0,
          t.zero_stage >= 1 ? group : 1.0};
}

namespace {

// Offloaded: the 12 B of the optimizer states on the host plus the pinned fp32 gradient copy.
constexpr double kHostBytesPerOffloadedParam = 16.0;

StaticMemory sharded(const TrainingSpec& t, double params, double weight_bytes, double group) {
  const ZeroDivisors z = zero_divisors(t, group);
  StaticMemory m;
  m.parameters_bytes = weight_bytes / z.parameters;
  m.gradients_bytes = params * grad_bytes_per_param(t) / z.gradients;
  const double shard = params / z.optimizer;
  const double offloaded = t.optimizer_offload_fraction;
  m.optimizer_bytes = shard * kOptimizerBytesPerParam * (1.0 - offloaded);
  m.host_bytes = shard * kHostBytesPerOffloadedParam * offloaded;
  return m;
}

}  // namespace

StaticMemory static_memory(const TrainingSpec& t, const RankParams& params,
                           double dense_weight_bytes, double expert_weight_bytes) {
  const StaticMemory dense =
      sharded(t, params.dense, dense_weight_bytes, dense_shard_group(t.parallel));
  const StaticMemory expert =
      sharded(t, params.expert, expert_weight_bytes, expert_shard_group(t.parallel));
  return {dense.parameters_bytes + expert.parameters_bytes,
          dense.gradients_bytes + expert.gradients_bytes,
          dense.optimizer_bytes + expert.optimizer_bytes, dense.host_bytes + expert.host_bytes};
}

}  // namespace trainsim
