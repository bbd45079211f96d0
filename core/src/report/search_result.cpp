#include "report/search_result.h"

#include <algorithm>

#include "report/result_json.h"
#include "schema/enums.h"
#include "search/choices.h"
#include "search/hints.h"

namespace trainsim::report {
namespace {

using Json = nlohmann::json;
using schema::SearchRequest;

Json metrics_json(const CandidateMetrics& m, double capacity_bytes) {
  Json out = {{"iteration_s", m.iteration_s},
              {"tokens_per_s_per_gpu", m.tokens_per_s_per_gpu},
              {"mfu", m.mfu},
              {"peak_bytes", m.peak_bytes},
              {"memory_fraction", m.peak_bytes / capacity_bytes}};
  if (m.time_to_train_s > 0.0) {
    out["time_to_train_s"] = m.time_to_train_s;
    out["gpu_hours"] = m.gpu_hours;
  }
  return out;
}

Json entry_json(const SearchRequest& request, const ScoredCandidate& s) {
  return {{"index", s.key.index},
          {"metrics", metrics_json(s.key.metrics, request.spec.system.gpu.hbm_capacity_bytes)},
          {"config", candidate_config_json(request, s.candidate)}};
}

Json points_json(const std::vector<ScoredCandidate>& points) {
  Json rows = Json::array();
  for (const ScoredCandidate& s : points) {
    rows.push_back({s.key.index, s.key.metrics.peak_bytes, s.key.metrics.iteration_s,
                    s.key.metrics.tokens_per_s_per_gpu});
  }
  return {{"columns", {"index", "peak_bytes", "iteration_s", "tokens_per_s_per_gpu"}},
          {"rows", rows}};
}

Json order_json(const std::vector<ClassOrder>& order) {
  Json classes = Json::array(), combinations = Json::array();
  for (const ClassOrder& o : order) {
    classes.push_back(o.index);
    combinations.push_back(o.combinations);
  }
  return {{"classes", classes}, {"combinations", combinations}};
}

}  // namespace

Json search_counts_json(const SearchCounts& c) {
  return {{"layout_classes", c.layout_classes},
          {"considered", c.considered},
          {"skipped", c.skipped},
          {"invalid", c.invalid},
          {"invalid_by_reason", c.invalid_by_reason},
          {"candidates", c.candidates},
          {"uneven_candidates", c.uneven_candidates},
          {"bounded", c.bounded},
          {"pruned", c.pruned},
          {"pruned_by_reason", c.pruned_by_reason},
          {"evaluated", c.evaluated},
          {"infeasible", c.infeasible},
          {"infeasible_by_reason", c.infeasible_by_reason},
          {"feasible", c.feasible},
          {"timed", c.timed},
          {"rejected_by_replay", c.rejected_by_replay}};
}

Json search_hints_json(const std::vector<SearchHint>& hints) {
  Json out = Json::array();
  for (const SearchHint& h : hints) {
    out.push_back({{"rule", h.rule},
                   {"count", h.count},
                   {"constraint", h.constraint},
                   {"suggestion", h.suggestion}});
  }
  return out;
}

Json candidate_config_json(const SearchRequest& request, const Candidate& c) {
  Json training = request.training.is_object() ? request.training : Json::object();
  training["seq_len"] = request.spec.training.seq_len;
  if (!request.dtype.empty()) training["dtype"] = request.dtype;
  training["global_batch_size"] = request.spec.global_batch_size;
  training["micro_batch_size"] = c.micro_batch_size;
  training["tp"] = c.tp;
  training["pp"] = c.pp;
  training["dp"] = c.dp;
  training["cp"] = c.cp;
  training["ep"] = c.ep;
  training["etp"] = c.etp;
  training["vpp"] = c.vpp;
  training["sequence_parallel"] = c.sequence_parallel;
  if (c.first_stage_layers > 0) {
    training["num_layers_in_first_stage"] = c.first_stage_layers;
    training["num_layers_in_last_stage"] = c.last_stage_layers;
  }
  Json recompute = request.recompute[static_cast<size_t>(c.recompute)];
  if (request.spec.recompute[static_cast<size_t>(c.recompute)].all_layers) {
    recompute["num_layers"] = c.recompute_num_layers;
  }
  training["recompute"] = recompute;
  training["zero_stage"] = c.zero_stage;
  // A choice key is written when the search chose it or it is not the config default
  // (a plan where the key does not matter takes the default, choices.h fixed_choice).
  const auto& dimensions = choice_dimensions();
  for (size_t d = 0; d < dimensions.size(); ++d) {
    const double value = choice_value(request.spec, d, c.choice[d]);
    if (request.spec.choices[d].size() > 1 || value != dimensions[d].get(TrainingSpec{})) {
      training[dimensions[d].key] = schema::choice_value_json(d, value);
    }
  }
  Json system = request.system.is_string() ? Json{{"preset", request.system}} : request.system;
  system["num_gpus"] = c.num_gpus;
  return {{"model", request.model}, {"training", training}, {"system", system}};
}

Json search_result_json(const SearchRequest& request, const SearchOutcome& outcome) {
  const SearchSpec& spec = request.spec;
  Json result = {{"objective", schema::search_objective_names().of(spec.objective)},
                 {"diversity", schema::search_diversity_names().of(spec.diversity)},
                 {"top_k", spec.top_k},
                 {"capacity_bytes", spec.system.gpu.hbm_capacity_bytes},
                 {"memory_headroom", spec.memory_headroom},
                 {"memory_budget_bytes", outcome.memory_budget_bytes},
                 {"search",
                  {{"layout_classes", outcome.total_classes},
                   {"combinations", outcome.total_combinations}}},
                 {"counts", search_counts_json(outcome.counts)}};
  if (request.page.plan_only) {
    result["order"] = order_json(outcome.order);
    return result;
  }
  if (!request.page.whole) {
    result["page"] = {{"classes", outcome.page_classes}};
    if (request.page.limit >= 0) {
      // A range page: the next offset and the total, in layout classes.
      const int64_t end = std::min(outcome.total_classes,
                                   request.page.offset + std::min(request.page.limit, outcome.total_classes));
      result["page"]["offset"] = std::min(request.page.offset, outcome.total_classes);
      result["page"]["end"] = end;
      result["page"]["candidates"] = outcome.total_classes;
    }
  }
  Json top = Json::array();
  for (size_t i = 0; i < outcome.top.size(); ++i) {
    Json entry = entry_json(request, outcome.top[i]);
    entry["rank"] = i + 1;
    entry["result"] = estimate_to_json(outcome.top_estimates[i]);
    // A ranked plan's numbers are explained by estimating it (the estimate op): a
    // search's pages stay within the documents trainsim reads back (search_merge).
    entry["result"].erase("explanations");
    top.push_back(std::move(entry));
  }
  Json pareto = Json::array();
  for (const ScoredCandidate& s : outcome.pareto) pareto.push_back(entry_json(request, s));
  result["top"] = std::move(top);
  result["pareto"] = std::move(pareto);
  if (outcome.closest) result["closest"] = entry_json(request, *outcome.closest);
  if (request.include_points) result["points"] = points_json(outcome.points);
  if (request.page.whole) {
    const std::optional<double> closest =
        outcome.closest ? std::optional<double>(outcome.closest->key.metrics.peak_bytes) : std::nullopt;
    result["hints"] = search_hints_json(
        search_hints(spec, outcome.counts, outcome.memory_budget_bytes, closest));
  }
  return result;
}

}  // namespace trainsim::report
