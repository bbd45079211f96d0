#include "time/dp_optimizer_time.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "model/shard_groups.h"
#include "time/collectives.h"
#include "time/op_time.h"

namespace trainsim {
namespace {

// Megatron DDP bucket: max(40M, 1M * dp) elements (megatron/core/distributed/
// distributed_data_parallel_config.py, bucket_size default), 4-byte grads.
double bucket_bytes(double group) { return std::max(40e6, 1e6 * group) * 4.0; }

// bf16 parameters are gathered (fp8_param_gather is not priced apart).
constexpr double kGatherBytesPerParam = 2.0;

struct Priced {
  double seconds = 0.0;
  double bytes = 0.0;
  double calls = 0.0;
  Priced& operator+=(const Priced& o) {
    seconds += o.seconds, bytes += o.bytes, calls += o.calls;
    return *this;
  }
  Priced times(double n) const { return {seconds * n, bytes * n, calls * n}; }
};

// One message of `bytes` over a family's group, cut into buckets. Every bucket
// is priced at full size (SimuMax's convention), a unit's message as well, so
// a sharded plan never moves fewer priced bytes than the unit-less one.
Priced bucketed(const Config& config, CollectiveKind kind, double bytes, double group, Group comm) {
  if (bytes <= 0.0 || group <= 1.0) return {};
  const double bucket = bucket_bytes(group);
  const double calls = std::ceil(bytes / bucket);
  const double one = collective_time_s(kind, bucket, comm, config.training.parallel, config.system,
                                       config.training.nccl_nvls);
  return {calls * one, bytes, calls};
}

double grad_bytes(const TrainingSpec& t) { return t.grad_reduce_in_bf16 ? 2.0 : 4.0; }

// Gradient reduction (reduce-scatter, all-reduce with ZeRO 0) and parameter
// gather of `dense` + `expert` parameter elements, each family over its group.
Priced reduce(const Config& config, double dense, double expert) {
  const ParallelSpec& p = config.training.parallel;
  const CollectiveKind kind =
      config.training.zero_stage == 0 ? CollectiveKind::kAllReduce : CollectiveKind::kReduceScatter;
  const double gb = grad_bytes(config.training);
  Priced r = bucketed(config, kind, dense * gb, dense_shard_group(p), Group::kDp);
  r += bucketed(config, kind, expert * gb, expert_shard_group(p), Group::kEdp);
  return r;
}

Priced gather(const Config& config, double dense, double expert) {
  const ParallelSpec& p = config.training.parallel;
  const CollectiveKind kind = CollectiveKind::kAllGather;
  Priced g = bucketed(config, kind, dense * kGatherBytesPerParam, dense_shard_group(p), Group::kDp);
  g += bucketed(config, kind, expert * kGatherBytesPerParam, expert_shard_group(p), Group::kEdp);
  return g;
}

// Overlapped with a window: the last bucket always stays exposed.
double exposed_after(const Priced& comm, double window) {
  const double tail = comm.calls > 0.0 ? comm.seconds / comm.calls : comm.seconds;
  return std::max(tail, comm.seconds - window);
}

// ZeRO 1 / 2: the distributed optimizer's parameter all-gather, once per step after
// the optimizer; Megatron overlaps it with the first forward (--overlap-param-gather).
// Returns its exposed part (none without ZeRO).
double step_gather(const Config& config, const DpStage& stage, double forward_s, DpTime& t) {
  Priced g;
  if (config.training.zero_stage >= 1) {
    g = gather(config, stage.dense, stage.expert);
    // MoE models gather in two passes (dense and expert buffers interleave).
    if (stage.expert > 0.0) g = g.times(2.0), g.bytes /= 2.0;
  }
  t.all_gather_s = g.seconds, t.gather_bytes = g.bytes, t.gather_calls = g.calls;
  return config.training.overlap.param_gather ? exposed_after(g, forward_s) : g.seconds;
}

// ZeRO 0 / 1: the gradient reduction once per step, overlapped with the last
// micro-batch's backward (--overlap-grad-reduce), and the gather above.
void once_per_step(const Config& config, const DpStage& stage, double forward_s, double backward_s,
                   DpTime& t) {
  const Priced r = reduce(config, stage.dense, stage.expert);
  t.reduce_scatter_s = r.seconds, t.reduce_bytes = r.bytes, t.reduce_calls = r.calls;
  t.step_reduce_exposed_s = config.training.overlap.grad_reduce ? exposed_after(r, backward_s) : r.seconds;
  t.step_exposed_s = t.step_reduce_exposed_s + step_gather(config, stage, forward_s, t);
}

// ZeRO 2: each chunk's gradients reduce-scattered after each of its backward
// passes, behind that backward; the step's last bucket stays exposed after it.
void per_micro_batch_reduce(const Config& config, const DpStage& stage, DpTime& t) {
  const bool overlap = config.training.overlap.grad_reduce;
  Priced total;
  double tail = 0.0;
  for (size_t c = 0; c < stage.chunks.size(); ++c) {
    const DpChunk& chunk = stage.chunks[c];
    double dense = 0.0, expert = 0.0;
    for (const DpUnit& u : chunk.units) dense += u.count * u.dense, expert += u.count * u.expert;
    const Priced r = reduce(config, dense, expert);
    total += r.times(stage.passes);
    t.backward_pass_exposed_s[c] = overlap ? std::max(0.0, r.seconds - chunk.backward_s) : r.seconds;
    if (overlap && r.calls > 0.0) tail = std::max(tail, r.seconds / r.calls);
  }
  t.reduce_scatter_s = total.seconds, t.reduce_bytes = total.bytes, t.reduce_calls = total.calls;
  t.step_exposed_s += tail;
  t.step_reduce_exposed_s = tail;
}

// ZeRO 3, one chunk pass: with prefetch, unit i+1's gather runs behind unit i's
// compute, so the first unit's gather is exposed and the rest hide behind the
// compute of all units but the last (L - 1 of L shares of the pass). Backward
// also reduce-scatters each unit's gradients behind the next unit's compute;
// the last unit's reduce-scatter has nothing left to hide behind, and the next
// pass's first gather queues behind it (gathers and reduce-scatters of one
// communicator run in launch order: runtime_schedule.md), so it is exposed.
struct UnitPass {
  Priced gathers, reduces;
  double first_gather_s = 0.0, last_gather_s = 0.0, last_reduce_s = 0.0, units = 0.0;
};

UnitPass unit_pass(const Config& config, const DpChunk& chunk) {
  UnitPass u;
  for (size_t i = 0; i < chunk.units.size(); ++i) {
    const DpUnit& unit = chunk.units[i];
    const Priced g = gather(config, unit.dense, unit.expert);
    const Priced r = reduce(config, unit.dense, unit.expert);
    u.gathers += g.times(unit.count);
    u.reduces += r.times(unit.count);
    u.units += unit.count;
    if (i == 0) u.first_gather_s = g.seconds, u.last_reduce_s = r.seconds;
    if (i + 1 == chunk.units.size()) u.last_gather_s = g.seconds;
  }
  return u;
}

void per_unit(const Config& config, const DpStage& stage, DpTime& t) {
  const OverlapSpec& o = config.training.overlap;
  Priced gathers, reduces;
  for (size_t c = 0; c < stage.chunks.size(); ++c) {
    const DpChunk& chunk = stage.chunks[c];
    const UnitPass u = unit_pass(config, chunk);
    if (u.units <= 0.0) continue;
    const double hidden_share = (u.units - 1.0) / u.units;
    const double g = u.gathers.seconds, r = u.reduces.seconds;
    const double forward = o.param_gather ? u.first_gather_s + std::max(0.0, g - u.first_gather_s -
                                                                                 chunk.forward_s * hidden_share)
                                          : g;
    const double head = o.param_gather ? u.last_gather_s : g;
    const double hideable = (o.param_gather ? g - u.last_gather_s : 0.0) +
                            (o.grad_reduce ? r - u.last_reduce_s : 0.0);
    const double backward = head + (o.grad_reduce ? u.last_reduce_s : r) +
                            std::max(0.0, hideable - chunk.backward_s * hidden_share);
    t.forward_pass_exposed_s[c] = forward;
    t.backward_pass_exposed_s[c] = backward;
    gathers += u.gathers.times(2.0 * stage.passes);  // before forward and before backward
    reduces += u.reduces.times(stage.passes);
  }
  t.reduce_scatter_s = reduces.seconds, t.reduce_bytes = reduces.bytes, t.reduce_calls = reduces.calls;
  t.all_gather_s = gathers.seconds, t.gather_bytes = gathers.bytes, t.gather_calls = gathers.calls;
}

}  // namespace

DpTime dp_comm_time(const Config& config, const DpStage& stage) {
  DpTime t;
  t.forward_pass_exposed_s.assign(stage.chunks.size(), 0.0);
  t.backward_pass_exposed_s.assign(stage.chunks.size(), 0.0);
  double forward_s = 0.0, backward_s = 0.0;  // one micro-batch, all chunks
  for (const DpChunk& c : stage.chunks) forward_s += c.forward_s, backward_s += c.backward_s;
  const int64_t zero = config.training.zero_stage;
  if (zero <= 1) {
    once_per_step(config, stage, forward_s, backward_s, t);
  } else if (zero == 2) {
    t.step_exposed_s = step_gather(config, stage, forward_s, t);
    per_micro_batch_reduce(config, stage, t);
  } else {
    per_unit(config, stage, t);
  }
  t.exposed_s = t.step_exposed_s;
  for (size_t c = 0; c < stage.chunks.size(); ++c) {
    t.exposed_s += stage.passes * (t.forward_pass_exposed_s[c] + t.backward_pass_exposed_s[c]);
  }
  return t;
}

std::vector<OptimizerPass> optimizer_passes(const Config& config, double dense_params, double expert_params) {
  const TrainingSpec& t = config.training;
  const ParallelSpec& p = t.parallel;
  const double grad_size = grad_bytes(t);
  const double dense_group = dense_shard_group(p), expert_group = expert_shard_group(p);
  const double grads = (dense_params / (t.zero_stage >= 2 ? dense_group : 1.0) +
                        expert_params / (t.zero_stage >= 2 ? expert_group : 1.0)) *
                       grad_size;
  const double states = 12.0 * (dense_params / (t.zero_stage >= 1 ? dense_group : 1.0) +
                                expert_params / (t.zero_stage >= 1 ? expert_group : 1.0));
  const MemoryKernelSpec& kernel = config.system.efficiency.memory;
  auto pass = [&](const char* name, double bytes) -> OptimizerPass {
    return {name, bytes, memory_kernel_time_s(bytes, kernel, config.system.gpu)};
  };
  // The grad shard the optimizer touches, in grad elements of the state's size.
  const double grad_shard = t.grad_reduce_in_bf16 ? states / 6.0 : states / 3.0;
  const double gpu_share = 1.0 - t.optimizer_offload_fraction;
  std::vector<OptimizerPass> passes = {pass("zero_grad", grads),    // zero the grad buffer
                                       pass("grad_norm", grads)};   // grad L2 norm before the reduce
  if (p.dp * p.cp > 1) passes.push_back(pass("scale", 2.0 * grads));  // pre-reduce scaling
  passes.push_back(pass("shard_norm", grad_shard));                  // norm of the reduced shard
  passes.push_back(pass("clip", 2.0 * grad_shard));                  // clip
  // The GPU part of the shard (all of it without offload).
  passes.push_back(pass("adam", gpu_share * (grad_shard + 3.0 * states)));  // Adam: read grad, r/w master, m, v
  passes.push_back(pass("copy_params", gpu_share * 1.5 * states / 3.0));   // copy fp32 master -> bf16 params
  if (t.optimizer_offload_fraction > 0.0) {
    const double elements = t.optimizer_offload_fraction * states / 12.0;
    const OffloadStepTime off = offloaded_step_time(config, elements);
    passes.push_back({"d2h", 4.0 * elements, off.d2h_s});
    passes.push_back({"host_adam", 28.0 * elements, off.host_step_s});
    passes.push_back({"h2d", 4.0 * elements, off.h2d_s});
  }
  return passes;
}

double optimizer_time_s(const Config& config, double dense_params, double expert_params) {
  const TrainingSpec& t = config.training;
  const std::vector<OptimizerPass> p = optimizer_passes(config, dense_params, expert_params);
  const size_t offload = t.optimizer_offload_fraction > 0.0 ? 3 : 0;
  const size_t tail = p.size() - offload - 4;  // shard norm, clip, Adam, copy
  double seconds = p[0].seconds + p[1].seconds;
  if (tail == 3) seconds += p[2].seconds;
  seconds += p[tail].seconds + p[tail + 1].seconds;
  const double gpu_step_s = p[tail + 2].seconds + p[tail + 3].seconds;
  if (offload == 0) return seconds + gpu_step_s;
  const double d2h_s = p[tail + 4].seconds, host_s = p[tail + 5].seconds, h2d_s = p[tail + 6].seconds;
  // HybridDeviceOptimizer.step: the gradient copies are queued first, the GPU part's Adam
  // behind them, and the host steps its part once its copies landed; the updated
  // parameters go back after the GPU part. With the overlap flag each parameter has its
  // own copy streams and CPU optimizer, so copies and host steps pipeline.
  if (t.overlap_cpu_optimizer_d2h_h2d) return seconds + std::max({gpu_step_s, d2h_s, host_s, h2d_s});
  return seconds + d2h_s + std::max(gpu_step_s, host_s) + h2d_s;
}

OffloadStepTime offloaded_step_time(const Config& config, double offloaded_elements) {
  const HostMemorySpec& host = config.system.host;
  OffloadStepTime out;
  if (offloaded_elements <= 0.0 || !host.stated()) return out;
  const double link = host.link_bandwidth_bytes_per_s * host.link_efficiency;
  // hybrid_optimizer.py: the fp32 gradient into its pinned host copy, the fp32 master copy
  // back into the GPU parameter (param_update_in_fp32).
  out.d2h_s = offloaded_elements * 4.0 / link;
  out.h2d_s = offloaded_elements * 4.0 / link;
  // torch.optim.AdamW(fused=True) on the CPU (aten/src/ATen/native/cpu/FusedAdamKernel.cpp):
  // one streaming pass reading param, grad, exp_avg, exp_avg_sq and writing param, exp_avg,
  // exp_avg_sq, all fp32: 28 B per element, bound by the host memory bandwidth.
  out.host_step_s = offloaded_elements * 28.0 /
                    (host.memory_bandwidth_bytes_per_s * host.memory_efficiency);
  return out;
}

}  // namespace trainsim
