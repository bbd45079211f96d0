#include "memory/static_memory.h"

namespace trainsim {
namespace {

double grad_bytes_per_param(const TrainingSpec& t) { return t.grad_reduce_in_bf16 ? 2.0 : 4.0; }

// fp32 master weights + Adam exp_avg + exp_avg_sq.
constexpr double kOptimizerBytesPerParam = 12.0;
// Offloaded: the same 12 B on the host plus the pinned fp32 gradient copy.
constexpr double kHostBytesPerOffloadedParam = 16.0;

StaticMemory sharded(const TrainingSpec& t, double params, double weight_bytes, double group) {
  StaticMemory m;
  m.parameters_bytes = weight_bytes / (t.zero_stage >= 3 ? group : 1.0);
  m.gradients_bytes = params * grad_bytes_per_param(t) / (t.zero_stage >= 2 ? group : 1.0);
  const double shard = params / (t.zero_stage >= 1 ? group : 1.0);
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
