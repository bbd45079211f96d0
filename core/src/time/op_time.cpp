#include "time/op_time.h"

#include <algorithm>

#include "model/op_context.h"
#include "time/collectives.h"
#include "time/moe_routing.h"
#include "time/tp_overlap.h"

namespace trainsim {
namespace {

const MemoryKernelSpec& memory_class_spec(const EfficiencySpec& e, MemoryClass cls, Figure& figure) {
  switch (cls) {
    case MemoryClass::kDefault:
      figure = Figure::kMemory;
      return e.memory;
    case MemoryClass::kPermuteForward:
    case MemoryClass::kPermuteBackward:
      figure = Figure::kPermute;
      return e.permute;
    case MemoryClass::kCrossEntropy:
      figure = Figure::kCrossEntropy;
      return e.cross_entropy;
    case MemoryClass::kCrossEntropyFused:
      figure = Figure::kCrossEntropyFused;
      return e.cross_entropy_fused;
  }
  figure = Figure::kMemory;
  return e.memory;
}

// The figure a memory-bound kernel class prices with; a class the system does
// not set takes the memory figure's values (schema default) and is that figure.
bool same(const MemoryKernelSpec& a, const MemoryKernelSpec& b) {
  return a.efficiency == b.efficiency && a.latency_s == b.latency_s;
}

const MemoryKernelSpec& memory_class(const EfficiencySpec& e, MemoryClass cls, Figure& figure) {
  const MemoryKernelSpec& kernel = memory_class_spec(e, cls, figure);
  if (figure != Figure::kMemory && same(kernel, e.memory)) figure = Figure::kMemory;
  return kernel;
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

// Ring attention (Transformer Engine's p2p cp_comm_type, AttnFuncWithCPAndKVP2P in
// transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py at
// NVIDIA/TransformerEngine@d0067d0d): cp steps, each computing one K/V block while a
// buffer is sent to / received from the ring neighbours (flash_attn_p2p_communicate,
// one isend/irecv pair per step). Forward: steps 0 .. cp-2 each send the next K/V
// block, the last step sends nothing. Backward (bf16/fp16 path): the ring buffer is
// [K/V, dK/dV] (p2p_comm_buffers of shape (2, *kv.shape)); step 0 sends K/V only,
// steps 1 .. cp-2 send K/V together with the dK/dV accumulated so far, and step
// cp-1 sends dK/dV only, so backward moves 2 (cp-1) blocks, twice forward's. Each
// step's transfer is waited on at the end of that step ("wait until dKV is
// received"), so it hides behind that step's attention block only (a cp-th of the
// op's compute in the pass). A call carries the gathered K/V size (cp blocks).
double ring_exposed_s(const CommCall& call, const Config& config, const OpTime& t) {
  const ParallelSpec& p = config.training.parallel;
  const double cp = static_cast<double>(p.cp);
  if (p.cp <= 1) return 0.0;
  const double block_bytes = call.bytes / cp;
  const double block_s = t.compute_s[static_cast<size_t>(call.pass)] / cp;
  const auto exposed = [&](double bytes) {
    return std::max(0.0, ring_step_time_s(bytes, Group::kCp, p, config.system) - block_s);
  };
  if (call.pass == Pass::kForward) return (cp - 1.0) * exposed(block_bytes);
  // Backward: two single-block steps (the first and the last) and cp - 2 double ones.
  return 2.0 * exposed(block_bytes) + (cp - 2.0) * exposed(2.0 * block_bytes);
}

}  // namespace

double memory_kernel_time_s(double bytes, const MemoryKernelSpec& kernel, const GpuSpec& gpu,
                            double kernels) {
  if (bytes <= 0.0) return 0.0;
  return bytes / (gpu.hbm_bandwidth_bytes_per_s * kernel.efficiency) + kernels * kernel.latency_s;
}

namespace {

// `kernels` launches in pass p: `native` of them from a C++ loop, `expert_gemms` of them a
// grouped linear's expert GEMMs after the first, the rest eager (time/host_time.h).
void add_launches(OpTime& t, size_t p, double kernels, double native, double expert_gemms,
                  const HostSpec& host) {
  const double eager = kernels - native - expert_gemms;
  t.launches[p] += kernels;
  t.host_s[p] += eager * host.launch_s + native * host.native_launch_s + expert_gemms * host.expert_gemm_launch_s;
  if (eager > 0.0 && host.launch_s > 0.0) t.host_figures.set(static_cast<size_t>(Figure::kHostLaunch));
  if (native > 0.0 && host.native_launch_s > 0.0) t.host_figures.set(static_cast<size_t>(Figure::kHostNativeLaunch));
  if (expert_gemms > 0.0 && host.expert_gemm_launch_s > 0.0) {
    t.host_figures.set(static_cast<size_t>(Figure::kHostExpertGemmLaunch));
  }
}

}  // namespace

OpTime op_time(const Op& op, const Config& config) {
  return op_time(op, config, GemmCalibrationTables(config.system, config.training));
}

OpTime op_time(const Op& op, const Config& config, const GemmCalibrationTables& tables) {
  OpTime t;
  const SystemSpec& system = config.system;
  const HostSpec& host = system.efficiency.host;
  // A captured op costs the host nothing per kernel (the graph is one launch).
  t.captured = graph_captured(op.scope, config.training);
  t.host_sync = op.host_sync;
  for (int pass = 0; pass < kNumPasses; ++pass) {
    const PassCost& cost = op.cost[pass];
    Figure memory_figure = Figure::kMemory;
    const MemoryKernelSpec& kernel = memory_class(system.efficiency, cost.memory, memory_figure);
    // Every kernel pays the GPU's fixed per-kernel cost (launch onto the SMs, ramp-up
    // and tail drain) on top of its streaming or math time: a GEMM's as much as a
    // copy's (a measured per-shape kernel time holds it already); over several
    // streams they partly hide behind each other.
    const double serial_kernels = cost.kernels / std::max(1.0, std::min(cost.streams, cost.kernels));
    const double fixed_s = cost.bytes > 0.0 ? serial_kernels * kernel.latency_s : 0.0;
    const double streaming_s = memory_kernel_time_s(cost.bytes, kernel, system.gpu, 0.0);
    if (cost.bytes > 0.0) {
      t.figures.set(static_cast<size_t>(memory_figure));
      t.figures.set(static_cast<size_t>(Figure::kHbmBandwidth));
    }
    double compute_s = 0.0;
    bool measured_kernel = false;  // a measured per-shape time already holds the kernel's fixed cost
    if (cost.flops > 0.0) {
      const EfficiencyLookup eff =
          compute_efficiency(op, static_cast<Pass>(pass), system, config.training, tables);
      (eff.measured ? t.measured_lookups : t.model_lookups) += 1;
      measured_kernel = eff.measured;
      const GemmFormat format = cost.compute == ComputeClass::kGemm ||
                                        cost.compute == ComputeClass::kGroupedGemm
                                    ? op.format
                                    : GemmFormat::kBf16;
      compute_s = cost.flops / (format_peak_flops(format, system.gpu, config.training.dtype) *
                                eff.efficiency);
      t.source = eff.source;
      if (eff.figure != Figure::kCount) t.figures.set(static_cast<size_t>(eff.figure));
      if (eff.calibration_figure != Figure::kCount) t.figures.set(static_cast<size_t>(eff.calibration_figure));
      if (!eff.measured) t.figures.set(static_cast<size_t>(Figure::kSustainedFraction));
      if (eff.source == EfficiencySource::kShapeModel && system.efficiency.gemm_k_half > 0.0) {
        t.figures.set(static_cast<size_t>(Figure::kGemmKHalf));
      }
      t.figures.set(static_cast<size_t>(peak_figure(format, config.training.dtype)));
      if (compute_s >= streaming_s) t.memory_bound = false;
      t.compute_only_s += compute_s;
    }
    const auto p = static_cast<size_t>(pass);
    t.compute_s[p] = measured_kernel ? std::max(compute_s, streaming_s + fixed_s)
                                     : std::max(compute_s, streaming_s) + fixed_s;
    t.flops[p] = cost.flops;
    t.bytes[p] = cost.bytes;
    if (!t.captured) add_launches(t, p, cost.kernels, cost.native_kernels, cost.expert_gemm_kernels, host);
  }
  std::array<CommTimes, kNumPasses> hidden{};
  // With --tp-comm-overlap a linear's sequence-parallel all-gather / reduce-scatter
  // runs through Transformer Engine's userbuffers beside its GEMM (time/tp_overlap.h).
  const ParallelSpec& parallel = config.training.parallel;
  const bool userbuffers = config.training.overlap.tp_comm && op.kind == OpKind::kLinear && parallel.tp > 1;
  const std::array<double, kNumPasses>& gemm_s = t.compute_s;
  for (const CommCall& call : op.comms) {
    if (userbuffers && call.group == CommGroup::kTp && call.collective != Collective::kAllReduce) {
      const TpOverlapMethod method = tp_overlap_method(call.collective, call.pass);
      // Bulk pairs a column linear's backward crosswise: the dgrad's reduce-scatter
      // beside the wgrad GEMM, the input re-gather beside the dgrad GEMM.
      Pass gemm_pass = call.pass;
      if (method == TpOverlapMethod::kBulk) {
        gemm_pass = call.pass == Pass::kBackwardData ? Pass::kBackwardWeight : Pass::kBackwardData;
      }
      const double seconds = collective_time_s(collective_kind(call.collective), call.bytes, Group::kTp,
                                               parallel, system, config.training.nccl_nvls);
      const double step_s =
          ring_step_time_s(call.bytes / static_cast<double>(parallel.tp), Group::kTp, parallel, system);
      const TpOverlapCost cost =
          tp_overlap_cost(method, gemm_s[static_cast<size_t>(gemm_pass)], seconds, step_s, parallel.tp);
      const auto pass = static_cast<size_t>(call.pass);
      t.comm[pass].tp_s += cost.exposed_comm_s;
      // The chunk GEMMs and copies come from userbuffers' C++ loop: native launches.
      if (!t.captured) add_launches(t, pass, 1.0 + cost.extra_launches, cost.extra_launches, 0.0, host);
      continue;
    }
    if (call.group == CommGroup::kCp && call.overlaps_compute) {
      add_comm(t.comm[static_cast<size_t>(call.pass)], call.group, ring_exposed_s(call, config, t));
      if (!t.captured) add_launches(t, static_cast<size_t>(call.pass), 1.0, 0.0, 0.0, host);
      continue;
    }
    // A routed all-to-all's bytes follow the dispatcher and routing (W4).
    const double bytes =
        call.routed ? call.bytes * routed_all_to_all_scale(config, ep_nodes(config)) : call.bytes;
    const double seconds = collective_time_s(collective_kind(call.collective), bytes,
                                             comm_group(call.group), config.training.parallel,
                                             system, config.training.nccl_nvls);
    const auto pass = static_cast<size_t>(call.pass);
    add_comm(call.overlaps_compute ? hidden[pass] : t.comm[pass], call.group, seconds);
    if (!t.captured) add_launches(t, pass, 1.0, 0.0, 0.0, host);  // one NCCL kernel per collective
  }
  for (size_t pass = 0; pass < static_cast<size_t>(kNumPasses); ++pass) {
    // Overlapped transfers are exposed only where they outlast the compute.
    const double exposed = std::max(0.0, hidden[pass].total() - t.compute_s[pass]);
    if (hidden[pass].total() > 0.0) t.comm[pass] += hidden[pass].scaled(exposed / hidden[pass].total());
  }
  if (op.recompute && !op.recompute_tail) {
    t.recompute_s = t.compute_s[0];
    t.recompute_launches = t.launches[0];
    t.recompute_host_s = t.host_s[0];
    if (op.recompute_comm) t.recompute_comm = t.comm[0];
  }
  return t;
}

}  // namespace trainsim
