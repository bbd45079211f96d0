// What-if analysis for one plan: its step time, peak memory and fit when one
// system figure at a time is scaled (0.5x .. 4x by default), and which figure
// helps most when made twice as good. "Which resource bounds this workload"
// is the chip maker's question; the best plan under a changed system is a
// search with system overrides (search/search.h).
#pragma once

#include <vector>

#include "whatif/system_scaling.h"
#include "trainsim/spec.h"

namespace trainsim {

inline constexpr std::array<double, 7> kDefaultWhatIfFactors = {0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0};

struct WhatIfPoint {
  double factor = 1.0;
  double iteration_s = 0.0;
  double tokens_per_s_per_gpu = 0.0;
  double peak_bytes = 0.0;
  bool fits = true;
  double speedup = 1.0;  ///< baseline iteration_s / this iteration_s
};

struct FigureSensitivity {
  SystemFigure figure = SystemFigure::kPeakFlops;
  std::vector<WhatIfPoint> points;  ///< one per factor, in the given order
  /// Speedup when the figure is twice as good (x2, or x0.5 for latencies).
  double speedup_when_twice_as_good = 1.0;
};

struct Sensitivity {
  WhatIfPoint baseline;
  std::vector<FigureSensitivity> figures;
  /// The figure with the largest speedup_when_twice_as_good (the first on ties).
  SystemFigure most_sensitive = SystemFigure::kPeakFlops;
};

// config must be validated; factors > 0.
Sensitivity sensitivity(const Config& config, const std::vector<double>& factors,
                        const std::vector<SystemFigure>& figures);

}  // namespace trainsim
