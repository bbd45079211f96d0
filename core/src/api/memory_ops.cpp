// The allocation trace of one pipeline stage (issue "Will it OOM?"): input
// {"config": <config document>, "stage": <index, default 0>}.
#include <nlohmann/json.hpp>

#include "api/envelope.h"
#include "api/ops.h"
#include "report/allocation_trace_json.h"
#include "schema/json_reader.h"

namespace trainsim::api {

ApiResult allocation_trace(std::string_view input) {
  nlohmann::json document;
  Issues issues;
  if (!schema::parse_document(input, "", document, issues)) return error_envelope(issues);
  if (!document.is_object()) return error_envelope({{"", "expected an object with \"config\" and \"stage\""}});
  for (const auto& [key, value] : document.items()) {
    if (key != "config" && key != "stage") issues.push_back({"/" + key, "unknown key (expected config, stage)"});
  }
  if (!document.contains("config")) issues.push_back({"/config", "missing required key"});
  const nlohmann::json* stage_value = document.contains("stage") ? &document["stage"] : nullptr;
  if (stage_value != nullptr && !stage_value->is_number_integer()) {
    issues.push_back({"/stage", "expected integer, got " + schema::describe_json_value(*stage_value)});
  }
  if (!issues.empty()) return error_envelope(issues);
  Config config;
  Issues config_issues;
  if (!read_valid_config(document["config"], config, config_issues)) {
    for (Issue& issue : config_issues) issue.path = "/config" + issue.path;
    return error_envelope(config_issues);
  }
  const int64_t stage = stage_value != nullptr ? stage_value->get<int64_t>() : 0;
  const int64_t pp = config.training.parallel.pp;
  if (stage < 0 || stage >= pp) {
    return error_envelope({{"/stage", "must be a pipeline stage from 0 to " + std::to_string(pp - 1) +
                                          ", got " + std::to_string(stage)}});
  }
  nlohmann::json result;
  int64_t events = 0;
  if (!report::allocation_trace_json(config, stage, result, events)) {
    return error_envelope({{"/stage", "the trace of this stage has " + std::to_string(events) +
                                          " events, more than the " +
                                          std::to_string(report::kMaxExportedTraceEvents) + " written"}});
  }
  return ok_envelope(result);
}

}  // namespace trainsim::api
