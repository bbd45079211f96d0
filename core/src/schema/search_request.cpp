// Search document -> SearchRequest. Same reader and error style as configs:
// every problem is reported at once with its JSON path.
#include "schema/search_request.h"

#include <algorithm>

#include "schema/config_reader.h"
#include "schema/enums.h"
#include "schema/json_reader.h"
#include "input_limits.h"
#include "schema/config_reader.h"
#include "trainsim/spec.h"

namespace trainsim::schema {
namespace {

constexpr int64_t kMaxGpuCounts = 1024;  // GPU counts one search may cover
constexpr int64_t kMaxTopK = 1000;
constexpr int64_t kMaxBoundFront = 100'000;

using Json = nlohmann::json;

}  // namespace

std::vector<int64_t> read_int_choices(ObjectReader& r, const char* key, int64_t min_value,
                                      int64_t max_value) {
  const Json* value = r.raw(key);
  if (value == nullptr) return {};
  Issues& issues = r.issues();
  const std::string path = r.path_of(key);
  auto check = [&](const Json& item, const std::string& item_path, std::vector<int64_t>& out) {
    if (!item.is_number_integer()) {
      issues.push_back({item_path, "expected integer, got " + describe_json_value(item)});
      return;
    }
    if (item.is_number_unsigned() && item.get<uint64_t>() > static_cast<uint64_t>(max_value)) {
      issues.push_back(
          {item_path, "must be at most " + std::to_string(max_value) + ", got " + item.dump()});
      return;
    }
    const int64_t v = item.get<int64_t>();
    if (v < min_value || v > max_value) {
      issues.push_back(
          {item_path, std::string(v < min_value ? "must be at least " : "must be at most ") +
                          std::to_string(v < min_value ? min_value : max_value) + ", got " +
                          std::to_string(v)});
    } else if (std::find(out.begin(), out.end(), v) != out.end()) {
      issues.push_back({item_path, "duplicate value " + std::to_string(v)});
    } else {
      out.push_back(v);
    }
  };
  std::vector<int64_t> out;
  if (value->is_array() && !value->empty()) {
    for (size_t i = 0; i < value->size(); ++i)
      check((*value)[i], path + "/" + std::to_string(i), out);
  } else if (value->is_number()) {
    check(*value, path, out);
  } else {
    issues.push_back({path, "expected integer or non-empty array of integers, got " +
                                describe_json_value(*value)});
  }
  return out;
}

namespace {

// 64, [64, 128], or {"min": 64, "max": 512, "step": 64}.
std::vector<int64_t> read_gpu_counts(ObjectReader& r) {
  const Json* value = r.raw("num_gpus");
  if (value == nullptr) {
    r.issues().push_back({"/num_gpus", "missing required key"});
    return {};
  }
  if (!value->is_object()) return read_int_choices(r, "num_gpus", 1, kMaxGpus);
  ObjectReader range(*value, "/num_gpus", r.issues());
  const int64_t low = range.required_int("min", 1, kMaxGpus);
  const int64_t high = range.required_int("max", 1, kMaxGpus);
  const int64_t step = range.int_or("step", 1, 1, kMaxGpus);
  range.finish();
  if (high < low) {
    r.issues().push_back({"/num_gpus/max", "must be at least min (" + std::to_string(low) +
                                               "), got " + std::to_string(high)});
    return {};
  }
  if ((high - low) / step + 1 > kMaxGpuCounts) {
    r.issues().push_back({"/num_gpus", "range holds " + std::to_string((high - low) / step + 1) +
                                           " GPU counts, at most " + std::to_string(kMaxGpuCounts) +
                                           " allowed"});
    return {};
  }
  std::vector<int64_t> counts;
  for (int64_t n = low; n <= high; n += step) counts.push_back(n);
  return counts;
}

void read_batch(ObjectReader& r, int64_t seq_len, SearchSpec& spec) {
  const auto sequences = r.optional_int("global_batch_size", 1, kMaxBatch);
  const auto tokens = r.optional_int("global_batch_tokens", 1, kMaxBatch * kMaxSeqLen / 1024);
  if (r.has("global_batch_size") && r.has("global_batch_tokens")) {
    r.issues().push_back(
        {"/global_batch_tokens", "set either global_batch_size or global_batch_tokens, not both"});
  } else if (!r.has("global_batch_size") && !r.has("global_batch_tokens")) {
    r.issues().push_back(
        {"/global_batch_size", "missing required key (or set global_batch_tokens)"});
  } else if (sequences) {
    spec.global_batch_size = *sequences;
  } else if (tokens && seq_len > 0) {
    if (*tokens % seq_len != 0) {
      r.issues().push_back({"/global_batch_tokens", "must be a multiple of seq_len (" +
                                                        std::to_string(seq_len) + "), got " +
                                                        std::to_string(*tokens)});
    } else {
      spec.global_batch_size = *tokens / seq_len;
    }
  }
}

// Training keys a search chooses itself, and where the document sets them instead.
const std::vector<std::pair<std::string, std::string>>& searched_training_keys() {
  static const std::vector<std::pair<std::string, std::string>> keys = {
      {"seq_len", "is set at /seq_len in a search document"},
      {"dtype", "is set at /dtype in a search document"},
      {"global_batch_size",
       "is set at /global_batch_size or /global_batch_tokens in a search document"},
      {"num_micro_batches",
       "is set at /global_batch_size or /global_batch_tokens in a search document"},
      {"micro_batch_size",
       "is chosen by the search (constrain it with /constraints/micro_batch_size)"},
      {"tp", "is chosen by the search (constrain it with /constraints/tp)"},
      {"pp", "is chosen by the search (constrain it with /constraints/pp)"},
      {"dp", "is chosen by the search (constrain it with /constraints/dp)"},
      {"cp", "is chosen by the search (constrain it with /constraints/cp)"},
      {"ep", "is chosen by the search (constrain it with /constraints/ep)"},
      {"etp", "is chosen by the search (constrain it with /constraints/etp)"},
      {"vpp", "is chosen by the search (constrain it with /constraints/vpp)"},
      {"sequence_parallel",
       "is chosen by the search (constrain it with /constraints/sequence_parallel)"},
      {"recompute", "is chosen by the search (list the modes in /constraints/recompute)"},
      {"zero_stage", "is chosen by the search (constrain it with /constraints/zero_stage)"},
      {"num_layers_in_first_stage", "is chosen by the search (see /constraints/uneven_stages)"},
      {"num_layers_in_last_stage", "is chosen by the search (see /constraints/uneven_stages)"}};
  return keys;
}

// The fixed training keys, read by the config reader with placeholders for
// the keys the search sets per candidate.
void read_training_template(const Json* value, int64_t seq_len, const std::string& dtype,
                            SearchRequest& request, Issues& issues) {
  Json fixed = value == nullptr ? Json::object() : *value;
  if (fixed.is_object()) {
    for (const auto& [key, message] : searched_training_keys()) {
      if (fixed.contains(key)) {
        issues.push_back({"/training/" + key, message});
        fixed.erase(key);
      }
    }
    request.training = fixed;
    fixed["seq_len"] = std::max<int64_t>(seq_len, 1);
    fixed["micro_batch_size"] = 1;
    fixed["num_micro_batches"] = 1;
    if (!dtype.empty()) fixed["dtype"] = dtype;
  }
  TrainingInput input;
  read_training_input(fixed, "/training", input, issues);
  request.spec.training = input.spec;
}

void read_model_and_system(ObjectReader& r, SearchRequest& request) {
  Issues& issues = r.issues();
  SearchSpec& spec = request.spec;
  if (const Json* model = r.raw("model")) {
    request.model = *model;
    const Json resolved = resolve_preset_reference(*model, "model", "/model", issues);
    if (!resolved.is_null()) read_model(resolved, "/model", spec.model, issues);
  } else {
    issues.push_back({"/model", "missing required key"});
  }
  if (const Json* system = r.raw("system")) {
    request.system = *system;
    const Json resolved = resolve_preset_reference(*system, "system", "/system", issues);
    if (resolved.is_object() && resolved.contains("num_gpus")) {
      issues.push_back({"/system/num_gpus", "is set at /num_gpus in a search document"});
    }
    if (!resolved.is_null()) read_system(resolved, "/system", spec.system, issues);
  } else {
    issues.push_back({"/system", "missing required key"});
  }
}

// {"top": [metrics, ...], "front": [[peak_bytes, iteration_s], ...]}: what
// earlier pages of the same search proved (their results' top and pareto).
void read_bound(const Json& value, const std::string& path, SearchBound& bound, Issues& issues) {
  ObjectReader r(value, path, issues);
  if (!r.ok()) return;
  auto number = [&](const Json& item, const std::string& at) {
    if (!item.is_number() || !(item.get<double>() >= 0.0) || item.get<double>() > 1e30) {
      issues.push_back({at, "expected a number from 0 to 1e30, got " + describe_json_value(item)});
      return 0.0;
    }
    return item.get<double>();
  };
  if (const Json* top = r.raw("top")) {
    if (!top->is_array() || top->size() > static_cast<size_t>(kMaxTopK)) {
      issues.push_back({path + "/top", "expected an array of at most " + std::to_string(kMaxTopK) +
                                           " metrics objects"});
    } else {
      for (size_t i = 0; i < top->size(); ++i) {
        ObjectReader m((*top)[i], path + "/top/" + std::to_string(i), issues);
        if (!m.ok()) continue;
        CandidateMetrics metrics;
        metrics.iteration_s = m.required_number("iteration_s", 0.0, 1e30, false);
        metrics.peak_bytes = m.required_number("peak_bytes", 0.0, 1e30, false);
        metrics.tokens_per_s_per_gpu = m.number_or("tokens_per_s_per_gpu", 0.0, 0.0, 1e30, false);
        metrics.mfu = m.number_or("mfu", 0.0, 0.0, 1e30, false);
        metrics.time_to_train_s = m.number_or("time_to_train_s", 0.0, 0.0, 1e30, false);
        metrics.gpu_hours = m.number_or("gpu_hours", 0.0, 0.0, 1e30, false);
        m.raw("memory_fraction");
        m.finish();
        bound.top.push_back(metrics);
      }
    }
  }
  if (const Json* front = r.raw("front")) {
    if (!front->is_array() || front->size() > static_cast<size_t>(kMaxBoundFront)) {
      issues.push_back({path + "/front", "expected an array of at most " +
                                             std::to_string(kMaxBoundFront) +
                                             " [peak_bytes, iteration_s] pairs"});
    } else {
      for (size_t i = 0; i < front->size(); ++i) {
        const Json& pair = (*front)[i];
        const std::string at = path + "/front/" + std::to_string(i);
        if (!pair.is_array() || pair.size() != 2) {
          issues.push_back({at, "expected [peak_bytes, iteration_s], got " + describe_json_value(pair)});
          continue;
        }
        CandidateMetrics metrics;
        metrics.peak_bytes = number(pair[0], at + "/0");
        metrics.iteration_s = number(pair[1], at + "/1");
        bound.front.push_back(metrics);
      }
    }
  }
  r.finish();
}

// {"classes": [i, ...], "bound": {...}} or {"plan": true} (README "Progress and cancel").
void read_page(const Json& value, SearchPage& page, Issues& issues) {
  ObjectReader p(value, "/page", issues);
  if (!p.ok()) return;
  page.plan_only = p.bool_or("plan", false);
  for (const char* key : {"classes", "offset", "limit"}) p.raw(key);  // known keys
  if (p.has("classes")) {
    page.whole = false;
    const std::vector<int64_t> classes =
        read_int_choices(p, "classes", 0, kMaxLayoutClasses - 1);
    page.classes = classes;
  }
  // A range of classes in enumeration order (pages split by count, no bound).
  const bool range = p.has("offset") || p.has("limit");
  if (range) {
    page.offset = p.int_or("offset", 0, 0, kMaxLayoutClasses);
    page.limit = p.required_int("limit", 1, kMaxLayoutClasses);
  }
  if (const Json* bound = p.raw("bound")) read_bound(*bound, "/page/bound", page.bound, issues);
  if (range && (page.plan_only || !page.whole || !page.bound.top.empty() ||
                !page.bound.front.empty())) {
    issues.push_back({"/page/offset", "a range (offset, limit) takes no plan, classes or bound"});
  }
  if (range) page.whole = false;
  if (page.plan_only && !page.whole) {
    issues.push_back({"/page/classes", "set either plan or classes, not both"});
  }
  if (!page.plan_only && page.whole) {
    issues.push_back(
        {"/page", "expected \"plan\": true, a list of \"classes\" or \"offset\" and \"limit\""});
  }
  p.finish();
}

void read_ranking(ObjectReader& r, SearchRequest& request) {
  SearchSpec& spec = request.spec;
  spec.memory_headroom =
      r.number_or("memory_headroom", kDefaultSearchMemoryHeadroom, 0.0, 0.99, false);
  spec.top_k = r.int_or("top_k", 10, 1, kMaxTopK);
  spec.objective = static_cast<SearchObjective>(r.enum_or("objective", search_objective_names().names, 0));
  spec.diversity = static_cast<SearchDiversity>(r.enum_or("diversity", search_diversity_names().names, 0));
  if (const Json* page = r.raw("page")) read_page(*page, request.page, r.issues());
  request.include_points = r.bool_or("include_points", false);
  const bool needs_tokens = spec.objective == SearchObjective::kTimeToTrain ||
                            spec.objective == SearchObjective::kGpuHours;
  if (needs_tokens && spec.training.train_tokens <= 0.0) {
    r.issues().push_back({"/objective", "\"" + search_objective_names().of(spec.objective) +
                                            "\" needs the token budget: set /training/train_tokens"});
  }
}

}  // namespace

bool read_search_request(std::string_view text, SearchRequest& request, Issues& issues) {
  Json document;
  if (!parse_document(text, "", document, issues)) return false;
  ObjectReader r(document, "", issues);
  if (!r.ok()) return false;
  if (const auto version = r.optional_int("schema_version", 1, 1000);
      version && *version != kSchemaVersion) {
    issues.push_back({"/schema_version", "unsupported schema version " + std::to_string(*version) +
                                             " (this build reads version " +
                                             std::to_string(kSchemaVersion) + ")"});
  }
  r.optional_string("name");
  read_model_and_system(r, request);
  SearchSpec& spec = request.spec;
  spec.num_gpus = read_gpu_counts(r);
  const int64_t seq_len = r.required_int("seq_len", 1, kMaxSeqLen);
  read_batch(r, seq_len, spec);
  const EnumNames& dtypes = dtype_names();
  if (const auto dtype = r.optional_enum("dtype", dtypes.names)) request.dtype = dtypes.names[*dtype];
  read_training_template(r.raw("training"), seq_len, request.dtype, request, issues);
  read_search_constraints(r.raw("constraints"), request, issues);
  read_ranking(r, request);
  r.finish();
  return issues.empty();
}

}  // namespace trainsim::schema
