// The API's one table of operations and the public entry points of
// trainsim.h. The CLI and the WASM module call call(op, input); the named
// functions are the same operations for C++ callers. Every path runs inside
// guarded(), the one catch-all.
#include <array>

#include "api/envelope.h"
#include "api/guarded.h"
#include "api/ops.h"
#include "schema/config_reader.h"
#include "schema/json_reader.h"
#include "trainsim/trainsim.h"
#include "validate.h"

namespace trainsim {
namespace {

struct Op {
  std::string_view name;
  ApiResult (*run)(std::string_view input);
};

// Adding an operation: write it (api/*_ops.cpp) and add its row to one of the
// two groups. The page's first WebAssembly module links only the calculator's
// group; the tools' group (search, what-if, imports, Megatron export, the
// allocation trace, the step trace) is a second module that the page loads
// when a tool is first used (wasm/CMakeLists.txt), so the first download
// leaves their code out. The CLI, the C++ API and the single-file module for embedders have both.
constexpr std::array kPageOps = {
    Op{"estimate", &api::estimate},
    Op{"presets", &api::presets},
    Op{"preset", &api::preset},
    Op{"schema", &api::describe_schema},
    Op{"export_config", &api::export_config},
    Op{"export_csv", &api::export_csv},
};
constexpr std::array kToolOps = {
    Op{"search", &api::search},
    Op{"search_merge", &api::search_merge},
    Op{"whatif", &api::whatif},
    Op{"scale_system", &api::scale_system},
    Op{"import_hf", &api::import_hf},
    Op{"import_megatron", &api::import_megatron_document},
    Op{"import_simumax", &api::import_simumax_document},
    Op{"match_model_preset", &api::match_model_preset},
    Op{"export_megatron", &api::export_megatron},
    Op{"allocation_trace", &api::allocation_trace},
    Op{"trace", &api::trace},
};

template <std::size_t... Sizes>
ApiResult unknown_op(std::string_view op, const std::array<Op, Sizes>&... groups) {
  std::string names;
  const auto list = [&](const auto& group) {
    for (const Op& known : group) names += (names.empty() ? "\"" : ", \"") + std::string(known.name) + "\"";
  };
  (list(groups), ...);
  return api::error_envelope(
      {{"", "unknown operation \"" + std::string(op) + "\"; expected one of " + names}});
}

// Runs op from the given groups inside the one catch-all.
template <std::size_t... Sizes>
ApiResult call_among(std::string_view op, std::string_view input, const std::array<Op, Sizes>&... groups) {
  return api::guarded([&] {
    const Op* found = nullptr;
    const auto look = [&](const auto& group) {
      for (const Op& known : group) {
        if (!found && known.name == op) found = &known;
      }
    };
    (look(groups), ...);
    return found != nullptr ? found->run(input) : unknown_op(op, groups...);
  });
}

}  // namespace

ApiResult call(std::string_view op, std::string_view input) {
  return call_among(op, input, kPageOps, kToolOps);
}

std::string call_json_page(std::string_view op, std::string_view input) {
  return call_among(op, input, kPageOps).envelope;
}

std::string call_json_tools(std::string_view op, std::string_view input) {
  return call_among(op, input, kToolOps).envelope;
}

std::string call_json(std::string_view op, std::string_view input) {
  return call(op, input).envelope;
}

std::string estimate_json(std::string_view config_text) { return call("estimate", config_text).envelope; }
std::string schema_json() { return call("schema", "").envelope; }
std::string presets_json() { return call("presets", "").envelope; }
std::string preset_json(std::string_view id) { return call("preset", id).envelope; }
std::string import_hf_json(std::string_view text) { return call("import_hf", text).envelope; }
std::string export_megatron_json(std::string_view text) { return call("export_megatron", text).envelope; }
std::string export_config_json(std::string_view text) { return call("export_config", text).envelope; }
std::string export_csv_json(std::string_view text) { return call("export_csv", text).envelope; }
std::string search_json(std::string_view text) { return call("search", text).envelope; }
std::string search_merge_json(std::string_view text) { return call("search_merge", text).envelope; }
std::string whatif_json(std::string_view text) { return call("whatif", text).envelope; }

std::string import_megatron_json(std::string_view args_text, std::string_view system_preset) {
  return api::guarded([&] { return api::import_megatron(args_text, system_preset); }).envelope;
}

std::string import_simumax_json(std::string_view model_text, std::string_view strategy_text,
                                std::string_view system_text) {
  return api::guarded([&] {
           return api::import_simumax(model_text, strategy_text, system_text);
         }).envelope;
}

std::string version() { return "0.1.0"; }

bool api::read_valid_config(const nlohmann::json& document, Config& config, Issues& issues) {
  if (!schema::read_config_document(document, config, issues)) return false;
  const Issues cross = validate(config);
  issues.insert(issues.end(), cross.begin(), cross.end());
  return issues.empty();
}

bool parse_config(std::string_view config_text, Config& config, Issues& issues) {
  nlohmann::json document;
  if (!schema::parse_document(config_text, "", document, issues)) return false;
  return api::read_valid_config(document, config, issues);
}

std::string internal_error_json(std::string_view what) {
  return api::internal_error_envelope(what).envelope;
}

}  // namespace trainsim
