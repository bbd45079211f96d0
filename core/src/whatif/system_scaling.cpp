#include "whatif/system_scaling.h"

namespace trainsim {
namespace {

void scale_tables(LinkSpec& link, double factor) {
  for (auto& [group, bytes_per_s] : link.dp_all_gather_bytes_per_s) bytes_per_s *= factor;
  for (auto& [group, bytes_per_s] : link.dp_reduce_scatter_bytes_per_s) bytes_per_s *= factor;
}

void scale_bandwidth(LinkSpec& link, double factor) {
  link.bandwidth_bytes_per_s *= factor;
  scale_tables(link, factor);
}

void scale_latency(LinkSpec& link, double factor) {
  link.latency_s *= factor;
  for (CollectiveSpec& collective : link.collectives) {
    if (collective.latency_s >= 0.0) collective.latency_s *= factor;  // < 0: the link's
  }
}

}  // namespace

bool smaller_is_better(SystemFigure figure) {
  return figure == SystemFigure::kIntraNodeLatency || figure == SystemFigure::kInterNodeLatency ||
         figure == SystemFigure::kKernelLatency;
}

SystemSpec scale_system(const SystemSpec& system, SystemFigure figure, double factor) {
  SystemSpec s = system;
  switch (figure) {
    case SystemFigure::kPeakFlops:
      s.gpu.peak_bf16_flops_per_s *= factor;
      s.gpu.peak_fp16_flops_per_s *= factor;
      s.gpu.peak_fp8_flops_per_s *= factor;
      break;
    case SystemFigure::kHbmBandwidth:
      s.gpu.hbm_bandwidth_bytes_per_s *= factor;
      break;
    case SystemFigure::kHbmCapacity:
      s.gpu.hbm_capacity_bytes *= factor;
      break;
    case SystemFigure::kIntraNodeBandwidth:
      scale_bandwidth(s.intra_node, factor);
      for (LinkSpec& tier : s.intra_node_tiers) scale_bandwidth(tier, factor);
      break;
    case SystemFigure::kInterNodeBandwidth:
      scale_bandwidth(s.inter_node, factor);
      break;
    case SystemFigure::kIntraNodeLatency:
      scale_latency(s.intra_node, factor);
      for (LinkSpec& tier : s.intra_node_tiers) scale_latency(tier, factor);
      break;
    case SystemFigure::kInterNodeLatency:
      scale_latency(s.inter_node, factor);
      break;
    case SystemFigure::kKernelLatency:
      for (MemoryKernelSpec* kernel :
           {&s.efficiency.memory, &s.efficiency.permute, &s.efficiency.cross_entropy,
            &s.efficiency.cross_entropy_fused}) {
        kernel->latency_s *= factor;
      }
      break;
  }
  return s;
}

}  // namespace trainsim
