#include "time/op_time.h"

#include <algorithm>

#include "time/collectives.h"
#include "time/efficiency.h"
#include "time/moe_routing.h"

namespace trainsim {
namespace {

const MemoryKernelSpec& memory_class(const EfficiencySpec& e, MemoryClass cls) {
  switch (cls) {
    case MemoryClass::kDefault:
      return e.memory;
    case MemoryClass::kPermuteForward:
    case MemoryClass::kPermuteBackward:
      return e.permute;
    case MemoryClass::kCrossEntropy:
      return e.cross_entropy;
    case MemoryClass::kCrossEntropyFused:
      return e.cross_entropy_fused;
  }
  return e.memory;
}

double peak_flops(const Op& op, const Config& config) {
  const GpuSpec& gpu = config.system.gpu;
  if (op.fp8 && gpu.peak_fp8_flops_per_s > 0.0) return gpu.peak_fp8_flops_per_s;
  return config.training.dtype == Dtype::kFp16 ? gpu.peak_fp16_flops_per_s
                                               : gpu.peak_bf16_flops_per_s;
}

void add_comm(CommTimes& times, CommGroup group, double seconds) {
  switch (group) {
    case CommGroup::kTp:
      times.tp_s += seconds;
      break;
    case CommGroup::kCp:
      times.cp_s += seconds;
      break;
    case CommGroup::kEp:
    case CommGroup::kEtp:
      times.ep_s += seconds;
      break;
  }
}

}  // namespace

double memory_kernel_time_s(double bytes, const MemoryKernelSpec& kernel, const GpuSpec& gpu) {
  if (bytes <= 0.0) return 0.0;
  return bytes / (gpu.hbm_bandwidth_bytes_per_s * kernel.efficiency) + kernel.latency_s;
}

OpTime op_time(const Op& op, const Config& config) {
  OpTime t;
  const SystemSpec& system = config.system;
  for (int pass = 0; pass < kNumPasses; ++pass) {
    const PassCost& cost = op.cost[pass];
    const MemoryKernelSpec& kernel = memory_class(system.efficiency, cost.memory);
    double memory_s = 0.0;
    for (const double bytes : cost.kernel_bytes) {
      memory_s += memory_kernel_time_s(bytes, kernel, system.gpu);
    }
    double compute_s = 0.0;
    if (cost.flops > 0.0) {
      const EfficiencyLookup eff =
          compute_efficiency(op, static_cast<Pass>(pass), system, config.training);
      (eff.measured ? t.measured_lookups : t.model_lookups) += 1;
      compute_s = cost.flops / (peak_flops(op, config) * eff.efficiency);
    }
    t.compute_s[static_cast<size_t>(pass)] = std::max(compute_s, memory_s);
    t.flops[static_cast<size_t>(pass)] = cost.flops;
  }
  std::array<CommTimes, kNumPasses> hidden{};
  for (const CommCall& call : op.comms) {
    // A routed all-to-all's inter-node share follows the dispatcher and routing (W4).
    const double bytes =
        call.routed ? call.bytes * routed_inter_node_scale(config, ep_nodes(config)) : call.bytes;
    const double seconds = collective_time_s(collective_kind(call.collective), bytes,
                                             comm_group(call.group), config.training.parallel,
                                             system);
    const auto pass = static_cast<size_t>(call.pass);
    add_comm(call.overlaps_compute ? hidden[pass] : t.comm[pass], call.group, seconds);
  }
  for (size_t pass = 0; pass < static_cast<size_t>(kNumPasses); ++pass) {
    // Overlapped transfers are exposed only where they outlast the compute.
    const double exposed = std::max(0.0, hidden[pass].total() - t.compute_s[pass]);
    if (hidden[pass].total() > 0.0) t.comm[pass] += hidden[pass].scaled(exposed / hidden[pass].total());
  }
  if (op.recompute && !op.recompute_tail) {
    t.recompute_s = t.compute_s[0];
    if (op.recompute_comm) t.recompute_comm = t.comm[0];
  }
  return t;
}

}  // namespace trainsim
