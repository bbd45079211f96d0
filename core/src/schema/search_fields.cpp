// The published keys of search and what-if documents (the readers are
// search_request.cpp, search_constraints.cpp and whatif_request.cpp; the test
// SchemaTest.EverySearchKeyIsAccepted keeps these lists and the readers in step).
#include "input_limits.h"
#include "schema/config_schema.h"
#include "search/choices.h"
#include "schema/search_request.h"
#include "schema/whatif_request.h"
#include "whatif/sensitivity.h"

namespace trainsim::schema {
namespace {

FieldInfo field(const char* key, Type type, Presence presence, Meta meta,
                nlohmann::json default_value = nullptr) {
  FieldInfo info;
  info.key = key;
  info.type = type;
  info.presence = presence;
  info.unit = meta.unit;
  info.label = meta.label;
  info.help = meta.help;
  info.default_value = std::move(default_value);
  return info;
}

FieldInfo bounded(FieldInfo info, double min, double max, bool min_exclusive = false) {
  info.min = min;
  info.max = max;
  info.min_exclusive = min_exclusive;
  return info;
}

FieldInfo with_items(FieldInfo info, Type items, const EnumNames* names = nullptr) {
  info.items = items;
  info.enumeration = names;
  return info;
}

constexpr Presence kRequired = Presence::kRequired;
constexpr Presence kDefault = Presence::kDefault;
constexpr Presence kOptional = Presence::kOptional;

// A degree the search chooses: a value or a list of values.
FieldInfo degree(const char* key, const char* label, int64_t max, const char* help) {
  return with_items(bounded(field(key, Type::kArray, kOptional, {"", label, help}), 1, static_cast<double>(max)),
                    Type::kInt);
}

}  // namespace

std::vector<FieldInfo> search_fields() {
  return {
      field("name", Type::kString, kOptional, {"", "Name", "the search's name"}),
      field("model", Type::kObject, kRequired, {"", "Model", "a preset id, a model object, or a preset with overrides"}),
      field("system", Type::kObject, kRequired,
            {"", "System", "a preset id, a system object, or a preset with overrides (without num_gpus)"}),
      with_items(bounded(field("num_gpus", Type::kArray, kRequired,
                               {"", "GPUs", "a count, a list, or {\"min\", \"max\", \"step\"} (at most 1024 counts)"}),
                         1, static_cast<double>(kMaxGpus)),
                 Type::kInt),
      bounded(field("seq_len", Type::kInt, kRequired, {"tokens", "Sequence length", "training's seq_len for every plan"}),
              1, static_cast<double>(kMaxSeqLen)),
      bounded(field("global_batch_size", Type::kInt, kOptional,
                    {"sequences", "Global batch size", "sequences per step (training's global_batch_size; its num_micro_batches follows); exactly one of global_batch_size and global_batch_tokens"}),
              1, static_cast<double>(kMaxBatch)),
      bounded(field("global_batch_tokens", Type::kInt, kOptional,
                    {"tokens", "Global batch tokens", "tokens per step, a multiple of seq_len"}),
              1, static_cast<double>(kMaxBatch * kMaxSeqLen / 1024)),
      [] {
        FieldInfo dtype = field("dtype", Type::kEnum, kDefault, {"", "Precision", "training's dtype for every plan"}, "bf16");
        dtype.enumeration = &dtype_names();
        return dtype;
      }(),
      field("training", Type::kObject, kOptional,
            {"", "Shared training keys", "training keys every plan shares; the keys the search chooses (constraints, seq_len, dtype, the batch, num_layers_in_first/last_stage) are errors here"}),
      field("constraints", Type::kObject, kOptional, {"", "Constraints", "the values the search may choose"}),
      bounded(field("memory_headroom", Type::kNumber, kDefault,
                    {"", "Memory headroom", "a plan fits when its device memory (allocator reserved + outside it) leaves this fraction of the usable capacity free (the memory verdict)"},
                    kDefaultSearchMemoryHeadroom),
              0.0, 0.99),
      bounded(field("top_k", Type::kInt, kDefault, {"", "Top K", "plans returned with their full results"}, 10), 1, 1000),
      [] {
        FieldInfo objective = field("objective", Type::kEnum, kDefault,
                                    {"", "Objective", "what ranks the plans; time_to_train and gpu_hours need training.train_tokens"},
                                    "step_time");
        objective.enumeration = &search_objective_names();
        return objective;
      }(),
      [] {
        FieldInfo diversity = field("diversity", Type::kEnum, kDefault,
                                    {"", "Diversity", "per_layout: the top K are the best plan of each layout (GPUs, tp, pp, cp, ep, etp)"},
                                    "none");
        diversity.enumeration = &search_diversity_names();
        return diversity;
      }(),
      field("include_points", Type::kBool, kDefault,
            {"", "Include points", "a sample of at most 1000 plans the search timed (for a scatter)"}, false),
      field("page", Type::kObject, kOptional,
            {"", "Page", "{\"plan\": true}: count and order the layout classes; {\"classes\": [...], \"bound\": {...}}: search those only; {\"offset\": o, \"limit\": l}: the classes [o, o + l) in enumeration order"}),
  };
}

std::vector<FieldInfo> search_constraint_fields() {
  std::vector<FieldInfo> fields = {
      degree("tp", "TP", kMaxGpus, "tensor parallel sizes; default 1 .. max_tp"),
      degree("pp", "PP", kMaxLayers, "pipeline parallel sizes; default every divisor of the GPU count"),
      degree("vpp", "VPP", kMaxLayers, "virtual pipeline chunks; default every divisor of each stage's layers"),
      degree("cp", "CP", kMaxGpus, "context parallel sizes; default every divisor of the GPU count"),
      degree("ep", "EP", kMaxExperts, "expert parallel sizes; default every divisor of num_experts"),
      degree("etp", "ETP", kMaxGpus, "expert tensor parallel sizes; default 1 .. max_tp"),
      degree("dp", "DP", kMaxGpus, "data parallel sizes; default GPUs / (tp*cp*pp)"),
      [] {
        FieldInfo mbs = degree("micro_batch_size", "Micro-batch", kMaxBatch, "micro-batch sizes");
        mbs.presence = kDefault;
        mbs.default_value = {1, 2, 4, 8};
        return mbs;
      }(),
      bounded(field("max_tp", Type::kInt, kOptional, {"", "Max TP", "largest tp and etp tried; default gpus_per_node"}),
              1, static_cast<double>(kMaxGpus)),
      [] {
        FieldInfo zero = with_items(field("zero_stage", Type::kArray, kDefault, {"", "ZeRO stages", "ZeRO stages to try"}, {1}),
                                    Type::kInt);
        return bounded(zero, 0, 3);
      }(),
      field("sequence_parallel", Type::kBool, kDefault,
            {"", "Sequence parallel", "true: on whenever tp > 1; false: off; \"both\": try both"}, true),
      field("uneven_stages", Type::kBool, kDefault,
            {"", "Uneven stages", "\"auto\": try fewer layers on the first and last stage when the layers do not split evenly; true: always; false: never"},
            "auto"),
      bounded(field("max_gpus", Type::kInt, kOptional, {"", "Max GPUs", "drop the GPU counts above it"}), 1,
              static_cast<double>(kMaxGpus)),
      bounded(field("max_gpu_hours", Type::kNumber, kOptional,
                    {"GPU hours", "Max GPU hours", "plans that need more to train training.train_tokens are infeasible"}),
              0.0, 1e15, true),
      with_items(field("recompute", Type::kArray, kDefault,
                       {"", "Recompute modes", "config recompute objects; full also with \"num_layers\": \"all\" or a list of counts"},
                       nlohmann::json::array({{{"granularity", "none"}},
                                              {{"granularity", "selective"}},
                                              {{"granularity", "full"}, {"method", "uniform"}, {"num_layers", 1}}})),
                 Type::kObject),
  };
  // The choice keys (search/choices.h): lists of the training key's values (its
  // enum, or its type and range).
  for (const ChoiceDimension& dimension : choice_dimensions()) {
    for (const auto& row : training_table()) {
      if (row.info.key != dimension.key) continue;
      FieldInfo info = with_items(field(dimension.key, Type::kArray, kOptional,
                                        {"", row.info.label.c_str(), "values to try; default: training's value"}),
                                  row.info.type, row.info.enumeration);
      info.label = row.info.label;
      info.unit = row.info.unit;
      info.min = row.info.min;
      info.max = row.info.max;
      info.min_exclusive = row.info.min_exclusive;
      fields.push_back(info);
    }
  }
  return fields;
}

std::vector<FieldInfo> whatif_fields() {
  nlohmann::json factors = nlohmann::json::array();
  for (const double factor : kDefaultWhatIfFactors) factors.push_back(factor);
  return {
      with_items(bounded(field("factors", Type::kArray, kDefault, {"", "Factors", "each figure is scaled by each factor"}, factors),
                         0.0, 1000.0, true),
                 Type::kNumber),
      with_items(field("figures", Type::kArray, kDefault, {"", "Figures", "the system figures to scale"},
                       whatif_figure_names().names),
                 Type::kEnum, &whatif_figure_names()),
  };
}

}  // namespace trainsim::schema
