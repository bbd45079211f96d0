// Operations over many plans of one config: the strategy search (and the
// merge of its pages), the what-if table and one scaled system.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <thread>

#include "api/envelope.h"
#include "api/ops.h"
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
  nlohmann::json scaled = schema::system_to_json(trainsim::scale_system(system, scaled_figure, factor));
  if (system.num_gpus == 0) scaled.erase("num_gpus");
  return ok_envelope({{"system", scaled}});
}

}  // namespace trainsim::api
