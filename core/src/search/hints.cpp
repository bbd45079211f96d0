#include "search/hints.h"

#include <algorithm>
#include <cstdio>

#include "search/choices.h"

namespace trainsim {
namespace {

constexpr size_t kMaxRuleHints = 3;

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return text;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

// The constraint that would lift a config rule, and how.
SearchHint rule_hint(const SearchSpec& spec, const std::string& reason, int64_t count) {
  SearchHint h{reason, count, "/constraints", "allow other values of the degrees this rule names"};
  const bool splits = starts_with(reason, "/training/pp: must divide num_layers") ||
                      starts_with(reason, "/training/num_layers_in_");
  if (splits && spec.uneven_stages == UnevenStages::kNever) {
    h.constraint = "/constraints/uneven_stages";
    h.suggestion = "set uneven_stages to \"auto\": first and last stages then take fewer layers";
  } else if (splits) {
    h.constraint = "/constraints/pp";
    h.suggestion = "allow pipeline sizes that split the layers (uneven first/last stages are tried)";
  } else if (starts_with(reason, "/training/ep") || starts_with(reason, "/training/etp")) {
    h.constraint = "/constraints/ep";
    h.suggestion = "allow ep and etp values whose product divides tp*cp*dp";
  } else if (starts_with(reason, "/training/global_batch_size")) {
    h.constraint = "/global_batch_size";
    h.suggestion = "use a global batch that is a multiple of micro_batch_size*dp, or allow "
                   "micro_batch_size 1 and more pp or cp (less dp)";
  } else if (starts_with(reason, "/training/cp_comm_type")) {
    h.constraint = "/constraints/cp_comm_type";
    h.suggestion = "try \"p2p\": it needs no head count divisible by tp*cp";
  } else if (starts_with(reason, "/training/pipeline_schedule")) {
    // The schedules' own rules (time/schedule_orders.cpp schedule_supported,
    // model/pipeline_layout.cpp): micro-batch counts, vpp, an even pp, the split.
    if (reason.find("micro-batches") != std::string::npos) {
      h.constraint = "/global_batch_size";
      h.suggestion = "use a larger global batch, or smaller micro-batches or less dp: the schedule "
                     "needs more micro-batches per pipeline";
    } else if (reason.find("needs vpp") != std::string::npos) {
      h.constraint = "/constraints/vpp";
      h.suggestion = "allow the vpp the schedule runs: 2 for zero_bubble_v and dualpipe_v, 1 for "
                     "the others";
    } else {
      h.constraint = "/constraints/pipeline_schedule";
      h.suggestion = "allow another schedule, or give the split as /training/pipeline_layout";
    }
  } else if (starts_with(reason, "/system/num_gpus")) {
    h.constraint = "/num_gpus";
    h.suggestion = "use GPU counts that are multiples of tp*cp*pp";
  } else if (starts_with(reason, "/training/")) {
    const std::string key = reason.substr(10, reason.find(':') - 10);
    for (const char* constraint : {"tp", "pp", "vpp", "cp", "micro_batch_size", "recompute"}) {
      if (starts_with(key, constraint)) {
        h.constraint = std::string("/constraints/") + constraint;
        h.suggestion = std::string("allow ") + constraint + " values this rule accepts";
      }
    }
  }
  return h;
}

bool has_full_all_layers(const SearchSpec& spec) {
  return std::any_of(spec.recompute.begin(), spec.recompute.end(), [](const RecomputeMode& m) {
    return m.spec.granularity == RecomputeGranularity::kFull && m.all_layers;
  });
}

void memory_hints(const SearchSpec& spec, const SearchCounts& c, double budget_bytes,
                  std::optional<double> closest, std::vector<SearchHint>& hints) {
  const int64_t blocked = c.pruned + c.infeasible;
  std::string rule = "the memory budget (" + gib(budget_bytes) + ")";
  if (closest) rule += "; the least peak estimated was " + gib(*closest);
  auto add = [&](const char* constraint, std::string suggestion) {
    hints.push_back({rule, blocked, constraint, std::move(suggestion)});
  };
  if (std::find(spec.zero_stage.begin(), spec.zero_stage.end(), 3) == spec.zero_stage.end()) {
    add("/constraints/zero_stage", "allow ZeRO stage 3 (weights, gradients and optimizer states "
                                   "sharded over data parallelism)");
  }
  if (!has_full_all_layers(spec)) {
    add("/constraints/recompute", "add full recompute of every layer: {\"granularity\": \"full\", "
                                  "\"method\": \"block\", \"num_layers\": \"all\"}");
  }
  if (*std::min_element(spec.micro_batch_size.begin(), spec.micro_batch_size.end()) > 1) {
    add("/constraints/micro_batch_size", "allow micro_batch_size 1");
  }
  for (const auto& [key, values] : {std::pair{"tp", &spec.tp}, std::pair{"pp", &spec.pp},
                                    std::pair{"ep", &spec.ep}, std::pair{"cp", &spec.cp}}) {
    if (!values->empty()) {
      add((std::string("/constraints/") + key).c_str(),
          std::string("allow larger ") + key + " (it shards the weights or activations)");
    }
  }
  const auto headroom = c.infeasible_by_reason.find(kInfeasibleHeadroom);
  if (spec.memory_headroom > 0.0 && headroom != c.infeasible_by_reason.end()) {
    add("/memory_headroom", std::to_string(headroom->second) +
                                " plans fit the GPU but not the headroom: lower it");
  }
  add("/num_gpus", "more GPUs (each shards the model further)");
}

}  // namespace

std::vector<SearchHint> search_hints(const SearchSpec& spec, const SearchCounts& counts,
                                     double memory_budget_bytes,
                                     std::optional<double> closest_peak_bytes) {
  std::vector<SearchHint> hints;
  if (counts.feasible > counts.rejected_by_replay) return hints;  // a plan fits
  if (counts.considered == 0) {
    hints.push_back({"no combination of the allowed degrees multiplies to the GPU count", 0,
                     "/num_gpus", "allow more tp, cp or pp values, or other GPU counts"});
    return hints;
  }
  std::vector<std::pair<std::string, int64_t>> reasons(counts.invalid_by_reason.begin(),
                                                       counts.invalid_by_reason.end());
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (counts.candidates == 0) {
    for (size_t i = 0; i < reasons.size() && i < kMaxRuleHints; ++i) {
      hints.push_back(rule_hint(spec, reasons[i].first, reasons[i].second));
    }
    return hints;
  }
  const auto gpu_hours = counts.infeasible_by_reason.find(kInfeasibleGpuHours);
  if (gpu_hours != counts.infeasible_by_reason.end() &&
      counts.pruned + counts.infeasible == gpu_hours->second) {
    hints.push_back({kInfeasibleGpuHours, gpu_hours->second, "/constraints/max_gpu_hours",
                     "raise max_gpu_hours, or lower training.train_tokens"});
    return hints;
  }
  memory_hints(spec, counts, memory_budget_bytes, closest_peak_bytes, hints);
  return hints;
}

}  // namespace trainsim
