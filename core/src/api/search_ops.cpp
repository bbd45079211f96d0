// Operations over many plans of one config: the strategy search (and the
// merge of its pages), the what-if table and one scaled system.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <thread>

#include "api/envelope.h"
#include "api/ops.h"
#include "input_limits.h"
#include "report/search_merge.h"
#include "report/search_result.h"
#include "report/whatif_result.h"
#include "schema/config_reader.h"
#include "schema/config_writer.h"
#include "schema/enums.h"
#include "schema/json_reader.h"
#include "schema/search_request.h"
#include "schema/whatif_request.h"
#include "search/space.h"
#include "whatif/sensitivity.h"
#include "whatif/system_scaling.h"

namespace trainsim::api {
namespace {

// What the system reader says of the system with `figure` scaled by `factor`
// (a figure pushed below its floor, e.g. peak TFLOP/s under 1e-6): the first
// issue, or "" when the scaled system is one a user could have written.
std::string scaled_system_issue(const SystemSpec& system, SystemFigure figure, double factor) {
  nlohmann::json scaled = schema::system_to_json(trainsim::scale_system(system, figure, factor));
  if (system.num_gpus == 0) scaled.erase("num_gpus");
  SystemSpec ignored;
  Issues issues;
  schema::read_system(scaled, "/system", ignored, issues);
  if (issues.empty()) return "";
  return "scales " + schema::whatif_figure_names().names[static_cast<size_t>(figure)] +
         " outside what a system may state: " + issues[0].path + " " + issues[0].message;
}

// Every (factor, figure) of the table stays a system the reader accepts, and
// the table's estimates together simulate at most kMaxPipelinePasses passes.
void check_whatif(const Config& config, const schema::WhatIfRequest& request, Issues& issues) {
  for (size_t i = 0; i < request.factors.size(); ++i) {
    for (const SystemFigure figure : request.figures) {
      const std::string problem = scaled_system_issue(config.system, figure, request.factors[i]);
      if (problem.empty()) continue;
      issues.push_back({"/whatif/factors/" + std::to_string(i), problem});
      break;
    }
  }
  const ParallelSpec& p = config.training.parallel;
  const double passes = static_cast<double>(p.pp) * static_cast<double>(p.vpp) *
                        static_cast<double>(config.training.num_micro_batches);
  const double estimates =
      static_cast<double>(request.figures.size() * (request.factors.size() + 1) + 1);
  if (passes * estimates > static_cast<double>(kMaxPipelinePasses)) {
    issues.push_back(
        {"/whatif", "the table needs " + std::to_string(static_cast<int64_t>(estimates)) +
                        " estimates of " + std::to_string(static_cast<int64_t>(passes)) +
                        " pipeline passes each, more than the " + std::to_string(kMaxPipelinePasses) +
                        " passes one request may simulate: give fewer factors or figures "
                        "(\"whatif\": {\"factors\": [...], \"figures\": [...]})"});
  }
}

}  // namespace

namespace {

// Natively the search runs a thread per core (at most 8); the WASM build is
// single-threaded (the page runs several workers instead).
int search_threads() {
#ifdef __EMSCRIPTEN__
  return 1;
#else
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(cores, 1u, 8u));
#endif
}

}  // namespace

ApiResult search(std::string_view search_text) {
  schema::SearchRequest request;
  Issues issues;
  if (!schema::read_search_request(search_text, request, issues)) return error_envelope(issues);
  // Counted in closed form before anything is enumerated (search/space.h).
  if (const auto issue = SearchSpace(request.spec).limit_issue()) return error_envelope({*issue});
  SearchOptions options;
  options.threads = search_threads();
  options.points = request.include_points;
  const SearchOutcome outcome = run_search(request.spec, request.page, options);
  return ok_envelope(report::search_result_json(request, outcome));
}

ApiResult search_merge(std::string_view pages_text) {
  Issues issues;
  const nlohmann::json merged = report::merge_search_pages(pages_text, issues);
  if (!issues.empty()) return error_envelope(issues);
  return ok_envelope(merged);
}

// A config document with an optional "whatif" object; config issues first.
ApiResult whatif(std::string_view text) {
  Issues issues;
  nlohmann::json document;
  if (!schema::parse_document(text, "", document, issues)) return error_envelope(issues);
  schema::WhatIfRequest request;
  Issues whatif_issues;
  if (document.is_object() && document.contains("whatif")) {
    schema::read_whatif(document["whatif"], request, whatif_issues);
    document.erase("whatif");
  }
  Config config;
  read_valid_config(document, config, issues);
  issues.insert(issues.end(), whatif_issues.begin(), whatif_issues.end());
  if (issues.empty()) check_whatif(config, request, issues);
  if (!issues.empty()) return error_envelope(issues);
  return ok_envelope(report::whatif_to_json(sensitivity(config, request.factors, request.figures),
                                            request.factors));
}

ApiResult scale_system(std::string_view input) {
  Issues issues;
  nlohmann::json document;
  if (!schema::parse_document(input, "", document, issues)) return error_envelope(issues);
  schema::ObjectReader r(document, "", issues);
  SystemSpec system;
  if (const nlohmann::json* value = r.raw("system")) {
    const nlohmann::json resolved = schema::resolve_preset_reference(*value, "system", "/system", issues);
    if (!resolved.is_null()) schema::read_system(resolved, "/system", system, issues);
  } else if (r.ok()) {
    issues.push_back({"/system", "missing required key"});
  }
  if (r.ok() && !r.has("figure")) {
    r.raw("figure");
    issues.push_back({"/figure", "missing required key"});
  }
  const auto figure = r.optional_enum("figure", schema::whatif_figure_names().names);
  const double factor = r.required_number("factor", 0.0, 1000.0, true);
  r.finish();
  if (!issues.empty()) return error_envelope(issues);
  const auto scaled_figure = static_cast<SystemFigure>(*figure);
  if (const std::string problem = scaled_system_issue(system, scaled_figure, factor); !problem.empty()) {
    return error_envelope({{"/factor", problem}});
  }
  nlohmann::json scaled = schema::system_to_json(trainsim::scale_system(system, scaled_figure, factor));
  if (system.num_gpus == 0) scaled.erase("num_gpus");
  return ok_envelope({{"system", scaled}});
}

}  // namespace trainsim::api
