#include "io/whatif_json.h"

#include <nlohmann/json.hpp>

#include "io/json_reader.h"
#include "io/result_json.h"
#include "search/whatif.h"
#include "trainsim/trainsim.h"

namespace trainsim::io {
namespace {

using Json = nlohmann::json;

constexpr double kMaxFactor = 1000.0;

struct WhatIfRequest {
  std::vector<double> factors{kDefaultWhatIfFactors.begin(), kDefaultWhatIfFactors.end()};
  std::vector<SystemFigure> figures{kAllSystemFigures.begin(), kAllSystemFigures.end()};
};

void read_factors(const Json& value, const std::string& path, WhatIfRequest& request,
                  Issues& issues) {
  if (!value.is_array() || value.empty()) {
    issues.push_back(
        {path, "expected a non-empty array of numbers, got " + describe_json_value(value)});
    return;
  }
  request.factors.clear();
  for (size_t i = 0; i < value.size(); ++i) {
    const Json& item = value[i];
    const std::string item_path = path + "/" + std::to_string(i);
    if (!item.is_number() || !(item.get<double>() > 0.0) || item.get<double>() > kMaxFactor) {
      issues.push_back({item_path, "expected a number greater than 0 and at most 1000, got " +
                                       describe_json_value(item)});
      continue;
    }
    request.factors.push_back(item.get<double>());
  }
}

void read_figures(const Json& value, const std::string& path, WhatIfRequest& request,
                  Issues& issues) {
  if (!value.is_array() || value.empty()) {
    issues.push_back(
        {path, "expected a non-empty array of figure names, got " + describe_json_value(value)});
    return;
  }
  std::vector<std::string> names;
  for (const SystemFigure figure : kAllSystemFigures) names.push_back(system_figure_name(figure));
  request.figures.clear();
  for (size_t i = 0; i < value.size(); ++i) {
    const Json& item = value[i];
    const auto figure =
        item.is_string() ? system_figure_by_name(item.get<std::string>()) : std::nullopt;
    if (!figure) {
      std::string list;
      for (const auto& name : names) list += (list.empty() ? "\"" : ", \"") + name + "\"";
      issues.push_back({path + "/" + std::to_string(i),
                        "expected one of " + list + ", got " + describe_json_value(item)});
      continue;
    }
    request.figures.push_back(*figure);
  }
}

void read_whatif(const Json& value, WhatIfRequest& request, Issues& issues) {
  ObjectReader r(value, "/whatif", issues);
  if (!r.ok()) return;
  if (const Json* factors = r.raw("factors"))
    read_factors(*factors, "/whatif/factors", request, issues);
  if (const Json* figures = r.raw("figures"))
    read_figures(*figures, "/whatif/figures", request, issues);
  r.finish();
}

Json point_json(const WhatIfPoint& p) {
  return {{"factor", p.factor},         {"iteration_s", p.iteration_s},
          {"speedup", p.speedup},       {"tokens_per_s_per_gpu", p.tokens_per_s_per_gpu},
          {"peak_bytes", p.peak_bytes}, {"fits", p.fits}};
}

Json sensitivity_json(const Sensitivity& s, const std::vector<double>& factors) {
  Json figures = Json::array();
  for (const FigureSensitivity& f : s.figures) {
    Json points = Json::array();
    for (const WhatIfPoint& p : f.points) points.push_back(point_json(p));
    figures.push_back({{"figure", system_figure_name(f.figure)},
                       {"smaller_is_better", smaller_is_better(f.figure)},
                       {"speedup_when_twice_as_good", f.speedup_when_twice_as_good},
                       {"points", points}});
  }
  return {{"baseline", point_json(s.baseline)},
          {"factors", factors},
          {"figures", figures},
          {"most_sensitive", system_figure_name(s.most_sensitive)}};
}

}  // namespace

Json whatif_result(std::string_view text, Issues& issues) {
  Json document = Json::parse(text.begin(), text.end(), nullptr, false);
  std::string config_text(text);
  WhatIfRequest request;
  if (document.is_object() && document.contains("whatif")) {
    read_whatif(document["whatif"], request, issues);
    document.erase("whatif");
    config_text = dump(document);
  }
  Config config;
  Issues config_issues;
  parse_config(config_text, config, config_issues);
  issues.insert(issues.begin(), config_issues.begin(), config_issues.end());
  if (!issues.empty()) return nullptr;
  return sensitivity_json(sensitivity(config, request.factors, request.figures), request.factors);
}

}  // namespace trainsim::io
