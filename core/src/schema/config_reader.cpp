// Whole config document: top-level keys, preset resolution, and the values
// that need two sections at once (dp from num_gpus, micro-batches from the
// global batch).
#include "schema/config_reader.h"

#include <algorithm>

#include "schema/json_reader.h"
#include "input_limits.h"
#include "schema/preset_store.h"
#include "schema/training_input.h"

namespace trainsim::schema {
namespace {

void resolve_parallel_sizes(TrainingInput& input, SystemSpec& system, Issues& issues) {
  ParallelSpec& parallel = input.spec.parallel;
  const int64_t model_parallel = parallel.tp * parallel.pp * parallel.cp;
  if (input.dp) {
    parallel.dp = *input.dp;
    if (system.num_gpus == 0) system.num_gpus = model_parallel * parallel.dp;
  } else if (system.num_gpus > 0) {
    if (system.num_gpus % model_parallel != 0) {
      issues.push_back({"/system/num_gpus",
                        "must be a multiple of tp*pp*cp (" + std::to_string(model_parallel) +
                            ") when training.dp is not set, got " +
                            std::to_string(system.num_gpus)});
      return;
    }
    parallel.dp = system.num_gpus / model_parallel;
  } else {
    issues.push_back({"/training/dp", "missing required key (or set /system/num_gpus)"});
    return;
  }
  const int64_t sequences_per_micro_batch_round = input.spec.micro_batch_size * parallel.dp;
  if (input.num_micro_batches) {
    input.spec.num_micro_batches = *input.num_micro_batches;
  } else if (input.global_batch_size) {
    if (*input.global_batch_size % sequences_per_micro_batch_round != 0) {
      issues.push_back({input.batch_path,
                        "must be a multiple of micro_batch_size*dp (" +
                            std::to_string(sequences_per_micro_batch_round) + "), got " +
                            std::to_string(*input.global_batch_size)});
      return;
    }
    input.spec.num_micro_batches = *input.global_batch_size / sequences_per_micro_batch_round;
  }
  // Simulating more passes would take minutes and gigabytes (limits.h). In double:
  // pp * vpp * micro-batches can exceed int64 before validation bounds pp * vpp.
  const double passes = static_cast<double>(parallel.pp) * static_cast<double>(parallel.vpp) *
                        static_cast<double>(input.spec.num_micro_batches);
  if (passes > static_cast<double>(kMaxPipelinePasses)) {
    issues.push_back({input.num_micro_batches ? "/training/num_micro_batches" : input.batch_path,
                      "too many micro-batches to simulate: num_micro_batches*pp*vpp must be at most " +
                          std::to_string(kMaxPipelinePasses) + ", got " +
                          std::to_string(input.spec.num_micro_batches) + "*" +
                          std::to_string(parallel.pp) + "*" + std::to_string(parallel.vpp)});
  }
}

}  // namespace

nlohmann::json resolve_preset_reference(const nlohmann::json& value, const char* kind,
                                        const std::string& path, Issues& issues) {
  const std::string section = std::string(kind) == "model" ? "model" : "system";
  auto lookup = [&](const std::string& id, const std::string& id_path) -> nlohmann::json {
    const nlohmann::json* preset = find_preset(kind, id);
    if (preset == nullptr) {
      std::string message = "unknown " + std::string(kind) + " preset \"" + id + "\"";
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
  if (sizes_readable) resolve_parallel_sizes(training, config.system, issues);
  config.training = training.spec;
  return issues.empty();
}

}  // namespace trainsim::schema
