// String-in, string-out entry points shared by the CLI and the WASM module.
#include <nlohmann/json.hpp>

#include "io/config_json.h"
#include "io/preset_store.h"
#include "io/result_json.h"
#include "io/search_json.h"
#include "io/simumax_import.h"
#include "io/whatif_json.h"
#include "guarded.h"
#include "trainsim/trainsim.h"
#include "validate.h"

namespace trainsim {
namespace {

using detail::guarded;

}  // namespace

bool parse_config(std::string_view config_text, Config& config, Issues& issues) {
  if (!io::read_config(config_text, config, issues)) return false;
  Issues cross = validate(config);
  issues.insert(issues.end(), cross.begin(), cross.end());
  return issues.empty();
}

std::string estimate_json(std::string_view config_text) {
  return guarded([&] {
    Config config;
    Issues issues;
    if (!parse_config(config_text, config, issues)) return io::errors_envelope(issues);
    return io::estimate_envelope(estimate(config));
  });
}

std::string presets_json() {
  return guarded([] {
    nlohmann::json result;
    for (const char* kind : {"model", "system"}) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& id : io::preset_ids(kind)) {
        const nlohmann::json* preset = io::find_preset(kind, id);
        list.push_back({{"id", id}, {"label", preset->value("label", id)}});
      }
      result[std::string(kind) + "s"] = list;
    }
    return io::result_envelope(result);
  });
}

std::string preset_json(std::string_view id) {
  return guarded([&] {
    for (const char* kind : {"model", "system"}) {
      if (const nlohmann::json* preset = io::find_preset(kind, id)) {
        return io::result_envelope(*preset);
      }
    }
    return io::errors_envelope({{"", "unknown preset \"" + std::string(id) + "\""}});
  });
}

std::string import_simumax_json(std::string_view model_text, std::string_view strategy_text,
                                std::string_view system_text) {
  return guarded([&] {
    Issues issues;
    nlohmann::json config = io::import_simumax(model_text, strategy_text, system_text, issues);
    if (!issues.empty()) return io::errors_envelope(issues);
    return io::result_envelope(config);
  });
}

std::string search_json(std::string_view search_text) {
  return guarded([&] {
    io::SearchRequest request;
    Issues issues;
    if (!io::read_search_request(search_text, request, issues)) return io::errors_envelope(issues);
    return io::search_envelope(request,
                               run_search(request.spec, request.page, request.include_points));
  });
}

std::string search_merge_json(std::string_view pages_text) {
  return guarded([&] { return io::merge_search_pages_envelope(pages_text); });
}

std::string whatif_json(std::string_view config_text) {
  return guarded([&] { return io::whatif_envelope(config_text); });
}

std::string version() { return "0.1.0"; }

std::string internal_error_json(std::string_view what) {
  nlohmann::json envelope = {{"schema_version", kSchemaVersion},
                             {"ok", false},
                             {"internal", true},
                             {"errors",
                              {{{"path", ""},
                                {"message", "internal error (please report): " +
                                                std::string(what)}}}}};
  return io::dump(envelope);
}

}  // namespace trainsim
