// Operations on one config document: estimate and the exporters, and the
// embedded presets.
#include <nlohmann/json.hpp>

#include "api/envelope.h"
#include "api/ops.h"
#include "schema/config_writer.h"
#include "interop/megatron/megatron_export.h"
#include "schema/preset_store.h"
#include "schema/schema_json.h"
#include "report/result_csv.h"
#include "report/result_json.h"

namespace trainsim::api {
namespace {

// Parses and validates a config, then hands it to `make_result`.
template <typename Fn>
ApiResult with_config(std::string_view config_text, Fn&& make_result) {
  Config config;
  Issues issues;
  if (!parse_config(config_text, config, issues)) return error_envelope(issues);
  return ok_envelope(make_result(config));
}

}  // namespace

ApiResult estimate(std::string_view config_text) {
  Config config;
  Issues issues;
  if (!parse_config(config_text, config, issues)) return error_envelope(issues);
  return ok_envelope_text(report::estimate_result_text(trainsim::estimate(config)));
}

ApiResult export_megatron(std::string_view config_text) {
  return with_config(config_text, [](const Config& config) {
    const interop::MegatronCommand command = interop::megatron_command(config);
    return nlohmann::json{{"launcher_args", command.launcher_args},
                          {"args", command.args},
                          {"command", interop::megatron_command_text(command)},
                          {"notes", command.notes}};
  });
}

ApiResult export_config(std::string_view config_text) {
  return with_config(config_text, [](const Config& config) {
    return nlohmann::json{{"config", schema::config_to_json(config)}};
  });
}

ApiResult export_csv(std::string_view config_text) {
  return with_config(config_text, [](const Config& config) {
    return nlohmann::json{{"csv", report::estimate_to_csv(trainsim::estimate(config))}};
  });
}

ApiResult describe_schema(std::string_view /*ignored*/) {
  return ok_envelope(schema::schema_document());
}

ApiResult presets(std::string_view /*ignored*/) {
  nlohmann::json result;
  for (const char* kind : {"model", "system"}) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& id : schema::preset_ids(kind)) {
      const nlohmann::json* preset = schema::find_preset(kind, id);
      nlohmann::json entry = {{"id", id}, {"label", preset->value("label", id)}};
      if (const auto aliases = schema::preset_aliases(*preset); !aliases.empty()) entry["aliases"] = aliases;
      list.push_back(entry);
    }
    result[std::string(kind) + "s"] = list;
  }
  return ok_envelope(result);
}

ApiResult preset(std::string_view id) {
  for (const char* kind : {"model", "system"}) {
    if (const nlohmann::json* preset = schema::find_preset(kind, id)) return ok_envelope(*preset);
  }
  return error_envelope({{"", "unknown preset \"" + std::string(id) + "\""}});
}

}  // namespace trainsim::api
