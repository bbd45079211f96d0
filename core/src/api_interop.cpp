// String-in, string-out entry points of the importers and exporters
// (trainsim.h). Parsing and conversion live in io/; this file only wraps
// them into envelopes and catches bugs.
#include <nlohmann/json.hpp>

#include "io/config_export.h"
#include "io/hf_import.h"
#include "io/megatron_export.h"
#include "io/megatron_import.h"
#include "io/result_export.h"
#include "io/result_json.h"
#include "guarded.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

using detail::guarded;

// Parses and validates a config, then hands it to `make_result`.
template <typename Fn>
std::string with_config(std::string_view config_text, Fn&& make_result) {
  return guarded([&] {
    Config config;
    Issues issues;
    if (!parse_config(config_text, config, issues)) return io::errors_envelope(issues);
    return io::result_envelope(make_result(config));
  });
}

}  // namespace

std::string import_hf_json(std::string_view config_json_text) {
  return guarded([&] {
    Issues issues;
    nlohmann::json result = io::import_hf(config_json_text, issues);
    if (!issues.empty()) return io::errors_envelope(issues);
    return io::result_envelope(result);
  });
}

std::string import_megatron_json(std::string_view args_text, std::string_view system_preset) {
  return guarded([&] {
    Issues issues;
    nlohmann::json result = io::import_megatron(args_text, system_preset, issues);
    if (!issues.empty()) return io::errors_envelope(issues);
    return io::result_envelope(result);
  });
}

std::string export_megatron_json(std::string_view config_text) {
  return with_config(config_text, [](const Config& config) {
    const io::MegatronCommand command = io::megatron_command(config);
    return nlohmann::json{{"launcher_args", command.launcher_args},
                          {"args", command.args},
                          {"command", io::megatron_command_text(command)},
                          {"notes", command.notes}};
  });
}

std::string export_config_json(std::string_view config_text) {
  return with_config(config_text, [](const Config& config) {
    return nlohmann::json{{"config", io::config_to_json(config)}};
  });
}

std::string export_csv_json(std::string_view config_text) {
  return with_config(config_text, [](const Config& config) {
    return nlohmann::json{{"csv", io::estimate_to_csv(estimate(config))}};
  });
}

}  // namespace trainsim
