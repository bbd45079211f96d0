#include "schema/whatif_request.h"

#include <algorithm>

#include "schema/enums.h"
#include "schema/json_reader.h"

namespace trainsim::schema {
namespace {

using Json = nlohmann::json;

constexpr double kMaxFactor = 1000.0;
// Each factor costs one estimate per figure: the table stays bounded.
constexpr size_t kMaxFactors = 32;

void read_factors(const Json& value, const std::string& path, WhatIfRequest& request,
                  Issues& issues) {
  if (!value.is_array() || value.empty()) {
    issues.push_back(
        {path, "expected a non-empty array of numbers, got " + describe_json_value(value)});
    return;
  }
  if (value.size() > kMaxFactors) {
    issues.push_back({path, "at most " + std::to_string(kMaxFactors) + " factors, got " +
                                std::to_string(value.size())});
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
  const EnumNames& names = whatif_figure_names();
  request.figures.clear();
  for (size_t i = 0; i < value.size(); ++i) {
    const Json& item = value[i];
    const auto figure = item.is_string() ? names.find(item.get<std::string>()) : std::nullopt;
    if (!figure) {
      issues.push_back({path + "/" + std::to_string(i),
                        "expected one of " + names.quoted() + ", got " + describe_json_value(item)});
      if (issues.size() > kMaxFactors) return;
      continue;
    }
    const auto scaled = static_cast<SystemFigure>(*figure);
    if (std::find(request.figures.begin(), request.figures.end(), scaled) != request.figures.end()) {
      issues.push_back({path + "/" + std::to_string(i), "duplicate figure " + describe_json_value(item)});
      if (issues.size() > kMaxFactors) return;
      continue;
    }
    request.figures.push_back(scaled);
  }
}

}  // namespace

void read_whatif(const Json& value, WhatIfRequest& request, Issues& issues) {
  ObjectReader r(value, "/whatif", issues);
  if (!r.ok()) return;
  if (const Json* factors = r.raw("factors"))
    read_factors(*factors, "/whatif/factors", request, issues);
  if (const Json* figures = r.raw("figures"))
    read_figures(*figures, "/whatif/figures", request, issues);
  r.finish();
}

}  // namespace trainsim::schema
