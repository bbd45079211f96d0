#include "time/dp_optimizer_time.h"

#include <algorithm>
#include <cmath>

#include "model/shard_groups.h"
#include "time/collectives.h"
#include "time/op_time.h"

namespace trainsim {
namespace {

// Megatron DDP bucket: max(40M, 1M * dp) elements (megatron/core/distributed/
// distributed_data_parallel_config.py, bucket_size default), 4-byte grads.
double bucket_bytes(double group) { return std::max(40e6, 1e6 * group) * 4.0; }

DpTime family_time(const Config& config, double params, double group, Group comm_group,
                   bool moe_model) {
  DpTime t;
  if (params <= 0.0 || group <= 1.0) return t;
  const TrainingSpec& training = config.training;
  const double grad_bytes = training.grad_reduce_in_bf16 ? 2.0 : 4.0;
  const double reduce_bytes = params * grad_bytes / (training.zero_stage >= 2 ? group : 1.0);
  const double gather_bytes = reduce_bytes / grad_bytes * 2.0;
  const double bucket = bucket_bytes(group);
  // Every bucket is priced at full size (SimuMax's convention); MoE models
  // gather in two passes (dense and expert buffers interleave).
  const double reduce_buckets = std::ceil(reduce_bytes / bucket);
  double gather_buckets = std::ceil(gather_bytes / bucket);
  if (moe_model) gather_buckets *= 2.0;
  const ParallelSpec& p = training.parallel;
  t.reduce_buckets = reduce_buckets;
  t.gather_buckets = training.zero_stage == 0 ? 0.0 : gather_buckets;
  if (training.zero_stage == 0) {
    t.reduce_scatter_s = reduce_buckets *
                         collective_time_s(CollectiveKind::kAllReduce, bucket, comm_group, p, config.system);
    return t;
  }
  t.reduce_scatter_s = reduce_buckets * collective_time_s(CollectiveKind::kReduceScatter, bucket,
                                                          comm_group, p, config.system);
  t.all_gather_s = gather_buckets * collective_time_s(CollectiveKind::kAllGather, bucket,
                                                      comm_group, p, config.system);
  return t;
}

}  // namespace

DpTime dp_comm_time(const Config& config, double dense_params, double expert_params) {
  const ParallelSpec& p = config.training.parallel;
  const bool moe_model = config.model.moe.has_value();
  const DpTime dense =
      family_time(config, dense_params, dense_shard_group(p), Group::kDp, moe_model);
  const DpTime expert =
      family_time(config, expert_params, expert_shard_group(p), Group::kEdp, moe_model);
  return {dense.reduce_scatter_s + expert.reduce_scatter_s, dense.all_gather_s + expert.all_gather_s,
          dense.reduce_buckets + expert.reduce_buckets, dense.gather_buckets + expert.gather_buckets};
}

double optimizer_time_s(const Config& config, double dense_params, double expert_params) {
  const TrainingSpec& t = config.training;
  const ParallelSpec& p = t.parallel;
  const double grad_size = t.grad_reduce_in_bf16 ? 2.0 : 4.0;
  const double dense_group = dense_shard_group(p), expert_group = expert_shard_group(p);
  const double grads = (dense_params / (t.zero_stage >= 2 ? dense_group : 1.0) +
                        expert_params / (t.zero_stage >= 2 ? expert_group : 1.0)) *
                       grad_size;
  const double states = 12.0 * (dense_params / (t.zero_stage >= 1 ? dense_group : 1.0) +
                                expert_params / (t.zero_stage >= 1 ? expert_group : 1.0));
  const MemoryKernelSpec& kernel = config.system.efficiency.memory;
  auto pass = [&](double bytes) { return memory_kernel_time_s(bytes, kernel, config.system.gpu); };
  // The grad shard the optimizer touches, in grad elements of the state's size.
  const double grad_shard = t.grad_reduce_in_bf16 ? states / 6.0 : states / 3.0;
  double seconds = pass(grads)                               // zero the grad buffer
                   + pass(grads);                            // grad L2 norm before the reduce
  if (p.dp * p.cp > 1) seconds += pass(2.0 * grads);          // pre-reduce scaling
  seconds += pass(grad_shard)                                 // norm of the reduced shard
             + pass(2.0 * grad_shard)                         // clip
             + pass(grad_shard + 3.0 * states)                // Adam: read grad, r/w master, m, v
             + pass(1.5 * states / 3.0);                      // copy fp32 master -> bf16 params
  return seconds;
}

}  // namespace trainsim
