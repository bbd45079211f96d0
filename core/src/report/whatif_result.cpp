#include "report/whatif_result.h"

#include "schema/enums.h"

namespace trainsim::report {
namespace {

using Json = nlohmann::json;

Json point_json(const WhatIfPoint& p) {
  return {{"factor", p.factor},         {"iteration_s", p.iteration_s},
          {"speedup", p.speedup},       {"tokens_per_s_per_gpu", p.tokens_per_s_per_gpu},
          {"peak_bytes", p.peak_bytes}, {"fits", p.fits}};
}

}  // namespace

Json whatif_to_json(const Sensitivity& s, const std::vector<double>& factors) {
  Json figures = Json::array();
  for (const FigureSensitivity& f : s.figures) {
    Json points = Json::array();
    for (const WhatIfPoint& p : f.points) points.push_back(point_json(p));
    figures.push_back({{"figure", schema::whatif_figure_names().of(f.figure)},
                       {"smaller_is_better", smaller_is_better(f.figure)},
                       {"speedup_when_twice_as_good", f.speedup_when_twice_as_good},
                       {"points", points}});
  }
  return {{"baseline", point_json(s.baseline)},
          {"factors", factors},
          {"figures", figures},
          {"most_sensitive", schema::whatif_figure_names().of(s.most_sensitive)}};
}

}  // namespace trainsim::report
