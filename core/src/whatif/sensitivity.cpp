#include "whatif/sensitivity.h"

#include "estimate_options.h"

namespace trainsim {
namespace {

WhatIfPoint point_of(const Config& config, double factor, double baseline_s) {
  EstimateOptions options;
  options.timeline = false;
  options.reference_formulas = false;
  options.model_summary = false;
  options.describe = false;
  const Estimate e = estimate_with(config, options, nullptr);
  WhatIfPoint p;
  p.factor = factor;
  p.iteration_s = e.time.iteration_s;
  p.tokens_per_s_per_gpu = e.throughput.tokens_per_s_per_gpu;
  p.peak_bytes = e.memory.peak_bytes;
  p.fits = e.fits;
  p.speedup = baseline_s > 0.0 ? baseline_s / e.time.iteration_s : 1.0;
  return p;
}

}  // namespace

Sensitivity sensitivity(const Config& config, const std::vector<double>& factors,
                        const std::vector<SystemFigure>& figures) {
  Sensitivity out;
  out.baseline = point_of(config, 1.0, 0.0);
  const double baseline_s = out.baseline.iteration_s;
  Config scaled = config;
  double best = 0.0;
  for (const SystemFigure figure : figures) {
    FigureSensitivity f;
    f.figure = figure;
    for (const double factor : factors) {
      scaled.system = scale_system(config.system, figure, factor);
      f.points.push_back(point_of(scaled, factor, baseline_s));
    }
    scaled.system = scale_system(config.system, figure, smaller_is_better(figure) ? 0.5 : 2.0);
    f.speedup_when_twice_as_good = point_of(scaled, 2.0, baseline_s).speedup;
    if (f.speedup_when_twice_as_good > best) {
      best = f.speedup_when_twice_as_good;
      out.most_sensitive = figure;
    }
    out.figures.push_back(std::move(f));
  }
  return out;
}

}  // namespace trainsim
