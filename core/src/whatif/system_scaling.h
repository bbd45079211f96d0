// The system figures a what-if analysis scales (their names: schema/enums.h), and the scaling itself: every
// place in a SystemSpec the figure lives (tiers, per-collective overrides and
// measured data-parallel tables included), multiplied by one factor.
#pragma once

#include <array>

#include "trainsim/spec.h"

namespace trainsim {

enum class SystemFigure {
  kPeakFlops,           ///< peak bf16/fp16/fp8 FLOP/s
  kHbmBandwidth,        ///< HBM bytes/s
  kHbmCapacity,         ///< HBM bytes (changes what fits, not the step time)
  kIntraNodeBandwidth,  ///< NVLink/PCIe bytes/s per GPU, tiers and measured DP tables
  kInterNodeBandwidth,  ///< network bytes/s per GPU and measured DP tables
  kIntraNodeLatency,    ///< per-step latency inside a node (link, tiers, collective overrides)
  kInterNodeLatency,    ///< per-step latency across nodes
  kKernelLatency,       ///< launch latency of memory-bound kernels
};

inline constexpr std::array<SystemFigure, 8> kAllSystemFigures = {
    SystemFigure::kPeakFlops,          SystemFigure::kHbmBandwidth,
    SystemFigure::kHbmCapacity,        SystemFigure::kIntraNodeBandwidth,
    SystemFigure::kInterNodeBandwidth, SystemFigure::kIntraNodeLatency,
    SystemFigure::kInterNodeLatency,   SystemFigure::kKernelLatency};

// Latencies are better when smaller, every other figure when larger.
bool smaller_is_better(SystemFigure figure);

SystemSpec scale_system(const SystemSpec& system, SystemFigure figure, double factor);

}  // namespace trainsim
