// Whole config document: top-level keys, preset resolution, each section by
// its table (config_schema.h), then the sizes that need two sections at once
// (validate.h: dp from num_gpus, micro-batches from the global batch).
#include "schema/config_reader.h"

#include <algorithm>

#include "schema/json_reader.h"
#include "schema/preset_store.h"
#include "validate.h"

namespace trainsim::schema {
namespace {

SizeRequest size_request(const TrainingInput& input) {
  return {input.dp, input.global_batch_size, input.num_micro_batches, input.batch_path};
}

}  // namespace

nlohmann::json resolve_preset_reference(const nlohmann::json& value, const char* kind,
                                        const std::string& path, Issues& issues) {
  const std::string section = std::string(kind) == "model" ? "model" : "system";
  auto lookup = [&](const std::string& id, const std::string& id_path) -> nlohmann::json {
    const nlohmann::json* preset = find_preset(kind, id);
    if (preset == nullptr) {
      std::string message = "unknown " + std::string(kind) + " preset \"" + excerpt(id) + "\"";
      const std::string hint = closest_match(id, preset_ids(kind));
      if (!hint.empty()) message += " (did you mean \"" + hint + "\"?)";
      issues.push_back({id_path, message});
      return nullptr;
    }
    return preset->at(section);
  };
  if (value.is_string()) return lookup(value.get<std::string>(), path);
  if (!value.is_object()) {
    issues.push_back({path, "expected a preset id (string) or an object, got " +
                                describe_json_value(value)});
    return nullptr;
  }
  const auto preset_it = value.find("preset");
  if (preset_it == value.end()) return value;
  if (!preset_it->is_string()) {
    issues.push_back({path + "/preset", "expected string, got " + describe_json_value(*preset_it)});
    return nullptr;
  }
  nlohmann::json merged = lookup(preset_it->get<std::string>(), path + "/preset");
  if (merged.is_null()) return nullptr;
  nlohmann::json overrides = value;
  overrides.erase("preset");
  merged.merge_patch(overrides);
  return merged;
}

void read_model(const nlohmann::json& value, const std::string& path, ModelSpec& model,
                Issues& issues) {
  read_object(model_table(), value, path, model, issues, ReadContext{&model});
}

void read_training_input(const nlohmann::json& value, const std::string& path,
                         TrainingInput& input, Issues& issues) {
  read_object(training_table(), value, path, input, issues, ReadContext{});
}

void read_system(const nlohmann::json& value, const std::string& path, SystemSpec& system,
                 Issues& issues) {
  read_object(system_table(), value, path, system, issues, ReadContext{});
}

bool read_config(std::string_view text, Config& config, Issues& issues) {
  nlohmann::json document;
  if (!parse_document(text, "", document, issues)) return false;
  return read_config_document(document, config, issues);
}

bool read_config_document(const nlohmann::json& document, Config& config, Issues& issues) {
  ObjectReader r(document, "", issues);
  if (!r.ok()) return false;
  if (const auto version = r.optional_int("schema_version", 1, 1000); version &&
                                                                   *version != kSchemaVersion) {
    issues.push_back({"/schema_version", "unsupported schema version " + std::to_string(*version) +
                                             " (this build reads version " +
                                             std::to_string(kSchemaVersion) + ")"});
  }
  r.optional_string("name");
  const size_t issues_before = issues.size();
  if (const nlohmann::json* model = r.raw("model")) {
    const nlohmann::json resolved = resolve_preset_reference(*model, "model", "/model", issues);
    if (!resolved.is_null()) read_model(resolved, "/model", config.model, issues);
  } else {
    issues.push_back({"/model", "missing required key"});
  }
  TrainingInput training;
  if (const nlohmann::json* value = r.raw("training")) {
    read_training_input(*value, "/training", training, issues);
  } else {
    issues.push_back({"/training", "missing required key"});
  }
  if (const nlohmann::json* system = r.raw("system")) {
    const nlohmann::json resolved = resolve_preset_reference(*system, "system", "/system", issues);
    if (!resolved.is_null()) read_system(resolved, "/system", config.system, issues);
  } else {
    issues.push_back({"/system", "missing required key"});
  }
  r.finish();
  const bool sizes_readable = std::none_of(
      issues.begin() + static_cast<std::ptrdiff_t>(issues_before), issues.end(),
      [](const Issue& issue) {
        return issue.path.rfind("/training", 0) == 0 || issue.path.rfind("/system", 0) == 0;
      });
  if (sizes_readable) derive_sizes(size_request(training), training.spec, config.system, issues);
  config.training = training.spec;
  return issues.empty();
}

}  // namespace trainsim::schema
