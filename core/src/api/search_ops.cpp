// Operations over many plans of one config: the strategy search (and the
// merge of its pages), the what-if table and one scaled system.
#include <nlohmann/json.hpp>

#include "api/envelope.h"
#include "api/ops.h"
#include "io/config_export.h"
#include "io/config_json.h"
#include "io/json_reader.h"
#include "io/result_json.h"
#include "io/search_json.h"
#include "io/whatif_json.h"
#include "search/system_scaling.h"

namespace trainsim::api {

ApiResult search(std::string_view search_text) {
  io::SearchRequest request;
  Issues issues;
  if (!io::read_search_request(search_text, request, issues)) return error_envelope(issues);
  const SearchOutcome outcome = run_search(request.spec, request.page, request.include_points);
  return ok_envelope(io::search_result_json(request, outcome));
}

ApiResult search_merge(std::string_view pages_text) {
  Issues issues;
  nlohmann::json merged = io::merge_search_pages(pages_text, issues);
  if (!issues.empty()) return error_envelope(issues);
  return ok_envelope(merged);
}

ApiResult whatif(std::string_view config_text) {
  Issues issues;
  nlohmann::json result = io::whatif_result(config_text, issues);
  if (!issues.empty()) return error_envelope(issues);
  return ok_envelope(result);
}

ApiResult scale_system(std::string_view input) {
  Issues issues;
  nlohmann::json document;
  if (!io::parse_document(input, "", document, issues)) return error_envelope(issues);
  io::ObjectReader r(document, "", issues);
  SystemSpec system;
  if (const nlohmann::json* value = r.raw("system")) {
    const nlohmann::json resolved = io::resolve_preset_reference(*value, "system", "/system", issues);
    if (!resolved.is_null()) io::read_system(resolved, "/system", system, issues);
  } else if (r.ok()) {
    issues.push_back({"/system", "missing required key"});
  }
  std::optional<SystemFigure> figure;
  if (const auto name = r.optional_string("figure")) {
    figure = system_figure_by_name(*name);
    if (!figure) issues.push_back({"/figure", "unknown figure \"" + *name + "\""});
  } else if (r.ok() && !r.has("figure")) {
    issues.push_back({"/figure", "missing required key"});
  }
  const double factor = r.required_number("factor", 0.0, 1000.0, true);
  r.finish();
  if (!issues.empty()) return error_envelope(issues);
  nlohmann::json scaled = io::system_to_json(trainsim::scale_system(system, *figure, factor));
  if (system.num_gpus == 0) scaled.erase("num_gpus");
  return ok_envelope({{"system", scaled}});
}

}  // namespace trainsim::api
