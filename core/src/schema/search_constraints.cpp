// "/constraints" of a search document.
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "schema/json_reader.h"
#include "input_limits.h"
#include "schema/search_request.h"
#include "schema/config_reader.h"
#include "schema/config_schema.h"
#include "schema/enums.h"
#include "search/candidate.h"
#include "search/choices.h"

namespace trainsim::schema {
namespace {

using Json = nlohmann::json;

// The published default (search_fields.cpp): Megatron-LM's three usual
// settings, no recompute, selective core attention (Korthikanti et al. 2022)
// and every layer checkpointed.
Json default_recompute_modes() {
  for (const FieldInfo& field : search_constraint_fields()) {
    if (field.key == "recompute") return field.default_value;
  }
  return nullptr;
}

bool is_full_with_all_layers(const Json& mode) {
  if (!mode.is_object()) return false;
  const auto granularity = mode.find("granularity");
  const auto layers = mode.find("num_layers");
  return granularity != mode.end() && *granularity == "full" && layers != mode.end() &&
         *layers == "all";
}

// A full mode with a list of layer counts stands for one mode per count.
std::vector<Json> expand_layer_counts(const Json& item, const std::string& path, Issues& issues) {
  const auto layers = item.is_object() ? item.find("num_layers") : item.end();
  const auto granularity = item.is_object() ? item.find("granularity") : item.end();
  if (layers == item.end() || !layers->is_array() || granularity == item.end() ||
      *granularity != "full") {
    return {item};
  }
  std::vector<Json> modes;
  for (size_t j = 0; j < layers->size(); ++j) {
    const Json& count = (*layers)[j];
    const bool positive = count.is_number_integer() && count.get<int64_t>() >= 1;
    if (!positive && count != "all") {
      issues.push_back(
          {path + "/num_layers/" + std::to_string(j),
           "expected a positive integer or \"all\", got " + describe_json_value(count)});
      continue;
    }
    Json mode = item;
    mode["num_layers"] = count;
    modes.push_back(std::move(mode));
  }
  if (layers->empty()) {
    issues.push_back({path + "/num_layers", "expected a non-empty array of layer counts"});
  }
  return modes;
}

// One mode, read by the config reader (its issues re-rooted at `path`).
void read_recompute_mode(const Json& item, const std::string& path, SearchRequest& request,
                         Issues& issues) {
  RecomputeMode mode;
  Json value = item;
  if (is_full_with_all_layers(item)) {
    value["num_layers"] = 1;
    mode.all_layers = true;
  }
  const Json training = {
      {"seq_len", 1}, {"micro_batch_size", 1}, {"num_micro_batches", 1}, {"recompute", value}};
  TrainingInput input;
  Issues local;
  read_training_input(training, "", input, local);
  const std::string prefix = "/recompute";
  for (const Issue& issue : local) {
    const bool inside = issue.path.rfind(prefix, 0) == 0;
    issues.push_back({path + (inside ? issue.path.substr(prefix.size()) : ""), issue.message});
  }
  mode.spec = input.spec.recompute;
  request.spec.recompute.push_back(mode);
  request.recompute.push_back(item);
}

void read_recompute_modes(const Json* value, SearchRequest& request, Issues& issues) {
  const Json defaults = default_recompute_modes();
  if (value == nullptr) value = &defaults;
  const std::string path = "/constraints/recompute";
  if (!value->is_array() || value->empty()) {
    issues.push_back({path, "expected a non-empty array of recompute objects, got " +
                                describe_json_value(*value)});
    return;
  }
  std::vector<Json> seen;
  for (size_t i = 0; i < value->size(); ++i) {
    const std::string item_path = path + "/" + std::to_string(i);
    for (const Json& mode : expand_layer_counts((*value)[i], item_path, issues)) {
      if (std::find(seen.begin(), seen.end(), mode) != seen.end()) {
        issues.push_back({item_path, "duplicate mode"});
        continue;
      }
      seen.push_back(mode);
      read_recompute_mode(mode, item_path, request, issues);
    }
  }
}

SequenceParallelPolicy read_sequence_parallel(ObjectReader& r) {
  const Json* value = r.raw("sequence_parallel");
  if (value == nullptr) return SequenceParallelPolicy::kAlways;
  if (value->is_boolean()) {
    return value->get<bool>() ? SequenceParallelPolicy::kAlways : SequenceParallelPolicy::kNever;
  }
  if (*value != "both") {
    r.issues().push_back({r.path_of("sequence_parallel"),
                          "expected true, false or \"both\", got " + describe_json_value(*value)});
  }
  return SequenceParallelPolicy::kBoth;
}

UnevenStages read_uneven_stages(ObjectReader& r) {
  const Json* value = r.raw("uneven_stages");
  if (value == nullptr) return UnevenStages::kAuto;
  if (value->is_boolean()) return value->get<bool>() ? UnevenStages::kAlways : UnevenStages::kNever;
  if (*value != "auto") {
    r.issues().push_back({r.path_of("uneven_stages"),
                          "expected true, false or \"auto\", got " + describe_json_value(*value)});
  }
  return UnevenStages::kAuto;
}

// The training key's row (training_schema.cpp): how the key reads and writes one value.
const Field<TrainingInput>& training_row(const char* key) {
  for (const auto& field : training_table()) {
    if (field.info.key == key) return field;
  }
  throw std::logic_error(std::string("no training key ") + key);  // a row of choices.cpp without a key
}

// One value of a choice key, read as the training key reads it (an enum's
// names; a number in the key's range); nullopt after an issue at `at`.
std::optional<double> read_choice_value(const ChoiceDimension& dimension, const Json& item,
                                        const std::string& at, Issues& issues) {
  const Field<TrainingInput>& row = training_row(dimension.key);
  if (const EnumNames* names = row.info.enumeration) {
    const auto index = item.is_string() ? names->find(item.get<std::string>()) : std::nullopt;
    if (!index) {
      issues.push_back({at, "expected one of " + names->quoted() + ", got " + describe_json_value(item)});
      return std::nullopt;
    }
    return static_cast<double>(*index);
  }
  Issues local;
  Json object = Json::object();
  object[dimension.key] = item;
  ObjectReader r(object, "", local);
  TrainingInput input;
  row.read(r, input, ReadContext{});
  for (const Issue& issue : local) issues.push_back({at, issue.message});
  if (!local.empty()) return std::nullopt;
  return dimension.get(input.spec);
}

// The first issue of the key's rules (validate.h) with `value` on the search's
// template (every degree 1, no recompute), in validate()'s words; "" when none.
std::string value_issue(const ChoiceDimension& dimension, const SearchSpec& spec, double value) {
  if (dimension.value_rules == nullptr) return "";
  Config probe = base_config(spec);
  dimension.set(probe.training, value);
  const Issues found = dimension.value_rules(probe);
  if (found.empty()) return "";
  const std::string own = std::string("/training/") + dimension.key;
  return found[0].path == own ? found[0].message : found[0].path + ": " + found[0].message;
}

bool model_and_system_read(const Issues& issues) {
  return std::none_of(issues.begin(), issues.end(), [](const Issue& issue) {
    return issue.path.rfind("/model", 0) == 0 || issue.path.rfind("/system", 0) == 0;
  });
}

// Each choice key: a value or a list of values, read as the training key reads
// one; the training template's value when absent (search/choices.h).
void read_choices(ObjectReader* r, SearchRequest& request, Issues& issues) {
  const auto& dimensions = choice_dimensions();
  const bool probe = model_and_system_read(issues);
  for (size_t d = 0; d < dimensions.size(); ++d) {
    const ChoiceDimension& dimension = dimensions[d];
    std::vector<double>& values = request.spec.choices[d];
    values = {dimension.get(request.spec.training)};
    const Json* value = r == nullptr ? nullptr : r->raw(dimension.key);
    if (value == nullptr) continue;
    const std::string path = r->path_of(dimension.key);
    if (request.training.is_object() && request.training.contains(dimension.key)) {
      issues.push_back({path, std::string("is fixed at /training/") + dimension.key +
                                  "; set one of the two"});
      continue;
    }
    if (dimension.applies != nullptr && !dimension.applies(request.spec.training)) {
      issues.push_back({path, std::string("applies only to ") + dimension.applies_to});
      continue;
    }
    const Json items = value->is_array() ? *value : Json::array({*value});
    if (items.empty() || items.size() > kMaxChoiceValues) {
      issues.push_back({path, "expected a value or a non-empty array of at most " +
                                  std::to_string(kMaxChoiceValues) + " values, got " +
                                  describe_json_value(*value)});
      continue;
    }
    values.clear();
    for (size_t i = 0; i < items.size(); ++i) {
      const std::string at = value->is_array() ? path + "/" + std::to_string(i) : path;
      const std::optional<double> v = read_choice_value(dimension, items[i], at, issues);
      if (!v) continue;
      if (std::find(values.begin(), values.end(), *v) != values.end()) {
        issues.push_back({at, "duplicate value " + items[i].dump()});
      } else if (const std::string issue = probe ? value_issue(dimension, request.spec, *v) : "";
                 !issue.empty()) {
        issues.push_back({at, issue});
      } else {
        values.push_back(*v);
      }
    }
    if (values.empty()) values = {dimension.get(request.spec.training)};
  }
}

// TP overlap needs sequence parallelism on every plan with tp > 1 (validate.cpp, from
// Megatron-LM arguments.py): a search without sequence parallelism could only refuse
// every such plan, so the contradiction is named where the overlap was asked for.
void check_tp_overlap_needs_sp(ObjectReader& r, const SearchRequest& request, Issues& issues) {
  if (request.spec.sequence_parallel != SequenceParallelPolicy::kNever) return;
  const auto& dimensions = choice_dimensions();
  for (size_t d = 0; d < dimensions.size(); ++d) {
    if (std::string_view(dimensions[d].key) != "tp_comm_overlap") continue;
    const std::vector<double>& values = request.spec.choices[d];
    if (std::find(values.begin(), values.end(), 1.0) == values.end()) return;
    const std::string path =
        r.raw("tp_comm_overlap") != nullptr ? r.path_of("tp_comm_overlap") : "/training/tp_comm_overlap";
    issues.push_back({path, "needs sequence parallelism with tp > 1 (Megatron-LM); "
                            "/constraints/sequence_parallel is false"});
  }
}

// max_gpus drops the larger GPU counts; max_gpu_hours needs the token budget.
void read_caps(ObjectReader& r, SearchRequest& request) {
  SearchSpec& spec = request.spec;
  if (const auto max_gpus = r.optional_int("max_gpus", 1, kMaxGpus)) {
    const size_t before = spec.num_gpus.size();
    std::erase_if(spec.num_gpus, [&](int64_t n) { return n > *max_gpus; });
    if (before > 0 && spec.num_gpus.empty()) {
      r.issues().push_back({r.path_of("max_gpus"), "leaves none of the GPU counts of /num_gpus, got " +
                                                       std::to_string(*max_gpus)});
    }
  }
  spec.max_gpu_hours = r.optional_number("max_gpu_hours", 0.0, 1e15, true).value_or(0.0);
  if (spec.max_gpu_hours > 0.0 && spec.training.train_tokens <= 0.0) {
    r.issues().push_back(
        {r.path_of("max_gpu_hours"), "needs the token budget: set /training/train_tokens"});
  }
}

}  // namespace

Json choice_value_json(size_t dimension, double value) {
  const ChoiceDimension& row = choice_dimensions()[dimension];
  TrainingInput input;
  row.set(input.spec, value);
  Json out = Json::object();
  training_row(row.key).write(input, out);
  return out[row.key];
}

void read_search_constraints(const Json* value, SearchRequest& request, Issues& issues) {
  SearchSpec& spec = request.spec;
  if (value == nullptr) {
    read_recompute_modes(nullptr, request, issues);
    read_choices(nullptr, request, issues);
    return;
  }
  ObjectReader r(*value, "/constraints", issues);
  if (!r.ok()) return;
  spec.tp = read_int_choices(r, "tp", 1, kMaxGpus);
  spec.pp = read_int_choices(r, "pp", 1, kMaxLayers);
  spec.vpp = read_int_choices(r, "vpp", 1, kMaxLayers);
  spec.cp = read_int_choices(r, "cp", 1, kMaxGpus);
  spec.ep = read_int_choices(r, "ep", 1, kMaxExperts);
  spec.etp = read_int_choices(r, "etp", 1, kMaxGpus);
  spec.dp = read_int_choices(r, "dp", 1, kMaxGpus);
  const std::vector<int64_t> micro_batch_sizes =
      read_int_choices(r, "micro_batch_size", 1, kMaxBatch);
  if (!micro_batch_sizes.empty()) spec.micro_batch_size = micro_batch_sizes;
  spec.max_tp = r.optional_int("max_tp", 1, kMaxGpus).value_or(0);
  const std::vector<int64_t> zero_stages = read_int_choices(r, "zero_stage", 0, 3);
  if (!zero_stages.empty()) spec.zero_stage = zero_stages;
  spec.sequence_parallel = read_sequence_parallel(r);
  spec.uneven_stages = read_uneven_stages(r);
  if (spec.uneven_stages == UnevenStages::kAlways && !spec.training.parallel.layout.empty()) {
    issues.push_back({r.path_of("uneven_stages"),
                      "the stage split is fixed by /training/pipeline_layout; remove one of the two"});
  }
  read_recompute_modes(r.raw("recompute"), request, issues);
  read_choices(&r, request, issues);
  check_tp_overlap_needs_sp(r, request, issues);
  read_caps(r, request);
  r.finish();
}

}  // namespace trainsim::schema
