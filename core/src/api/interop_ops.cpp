// Operations that read foreign formats (Hugging Face, Megatron-LM, SimuMax).
#include <nlohmann/json.hpp>

#include "api/envelope.h"
#include "api/ops.h"
#include "interop/hf/hf_import.h"
#include "schema/config_reader.h"
#include "schema/json_reader.h"
#include "schema/model_preset_match.h"
#include "schema/preset_store.h"
#include "interop/megatron/megatron_import.h"
#include "interop/simumax/simumax_import.h"

namespace trainsim::api {
namespace {

// The converted document, or the importer's issues.
ApiResult converted(nlohmann::json result, const Issues& issues) {
  if (!issues.empty()) return error_envelope(issues);
  if (result.contains("notes")) {
    result["notes"] = capped_notes(result["notes"].get<std::vector<std::string>>());
  }
  return ok_envelope(result);
}

// The string members of an op's JSON input ("" when an optional one is absent;
// `present` says which were given).
bool read_texts(std::string_view input, std::initializer_list<std::pair<const char*, bool>> keys,
                std::vector<std::string>& texts, Issues& issues, std::vector<bool>* present = nullptr) {
  nlohmann::json document;
  if (!schema::parse_document(input, "", document, issues)) return false;
  schema::ObjectReader r(document, "", issues);
  for (const auto& [key, required] : keys) {
    if (required && r.ok() && !r.has(key)) {
      r.raw(key);
      issues.push_back({r.path_of(key), "missing required key"});
    }
    if (present != nullptr) present->push_back(r.has(key));
    texts.push_back(r.optional_string(key).value_or(""));
  }
  r.finish();
  return issues.empty();
}

}  // namespace

ApiResult import_hf(std::string_view config_json_text) {
  Issues issues;
  const nlohmann::json result = interop::import_hf(config_json_text, issues);
  return converted(result, issues);
}

ApiResult import_megatron(std::string_view args_text, std::string_view system_preset) {
  Issues issues;
  const nlohmann::json result = interop::import_megatron(args_text, system_preset, issues);
  return converted(result, issues);
}

ApiResult import_simumax(std::string_view model_text, std::string_view strategy_text,
                         std::string_view system_text) {
  Issues issues;
  const nlohmann::json result = interop::import_simumax(model_text, strategy_text, system_text, issues);
  return converted(result, issues);
}

ApiResult import_megatron_document(std::string_view input) {
  std::vector<std::string> texts;
  Issues issues;
  if (!read_texts(input, {{"args", true}, {"system", false}}, texts, issues)) {
    return error_envelope(issues);
  }
  return import_megatron(texts[0], texts[1]);
}

ApiResult import_simumax_document(std::string_view input) {
  std::vector<std::string> texts;
  Issues issues;
  std::vector<bool> present;
  if (!read_texts(input, {{"model", true}, {"strategy", true}, {"system", false}}, texts, issues,
                  &present)) {
    return error_envelope(issues);
  }
  // An empty system file is not "no system file": taking the default would be a guess.
  if (present[2] && texts[2].empty()) {
    return error_envelope({{"/system", "empty document (leave the key out to use the default "
                                       "a100-pcie-80gb system)"}});
  }
  return import_simumax(texts[0], texts[1], texts[2]);
}

ApiResult match_model_preset(std::string_view input) {
  nlohmann::json document;
  Issues issues;
  if (!schema::parse_document(input, "", document, issues)) return error_envelope(issues);
  schema::ObjectReader r(document, "", issues);
  ModelSpec model;
  if (const nlohmann::json* value = r.raw("model")) {
    const nlohmann::json resolved = schema::resolve_preset_reference(*value, "model", "/model", issues);
    if (!resolved.is_null()) schema::read_model(resolved, "/model", model, issues);
  } else if (r.ok()) {
    issues.push_back({"/model", "missing required key"});
  }
  r.finish();
  if (!issues.empty()) return error_envelope(issues);
  const std::string id = schema::matching_model_preset(model);
  if (id.empty()) return ok_envelope({{"preset", nullptr}, {"label", nullptr}});
  return ok_envelope({{"preset", id}, {"label", schema::find_preset("model", id)->value("label", id)}});
}

}  // namespace trainsim::api
