#include "report/search_result.h"

#include "report/result_json.h"

namespace trainsim::report {
namespace {

using Json = nlohmann::json;
using schema::SearchRequest;

const char* objective_name(SearchObjective objective) {
  return objective == SearchObjective::kStepTime ? "step_time" : "tokens_per_s_per_gpu";
}

Json metrics_json(const CandidateMetrics& m, double capacity_bytes) {
  return {{"iteration_s", m.iteration_s},
          {"tokens_per_s_per_gpu", m.tokens_per_s_per_gpu},
          {"mfu", m.mfu},
          {"peak_bytes", m.peak_bytes},
          {"memory_fraction", m.peak_bytes / capacity_bytes}};
}

Json entry_json(const SearchRequest& request, const ScoredCandidate& s) {
  return {{"index", s.key.index},
          {"metrics", metrics_json(s.key.metrics, request.spec.system.gpu.hbm_capacity_bytes)},
          {"config", candidate_config_json(request, s.candidate)}};
}

Json counts_json(const SearchCounts& c) {
  return {{"considered", c.considered},
          {"invalid", c.invalid},
          {"invalid_by_reason", c.invalid_by_reason},
          {"candidates", c.candidates},
          {"pruned", c.pruned},
          {"pruned_by_reason", c.pruned_by_reason},
          {"evaluated", c.evaluated},
          {"infeasible", c.infeasible},
          {"infeasible_by_reason", c.infeasible_by_reason},
          {"feasible", c.feasible},
          {"timed", c.timed},
          {"rejected_by_replay", c.rejected_by_replay}};
}

Json points_json(const std::vector<ScoredCandidate>& feasible) {
  Json rows = Json::array();
  for (const ScoredCandidate& s : feasible) {
    rows.push_back({s.key.index, s.key.metrics.peak_bytes, s.key.metrics.iteration_s,
                    s.key.metrics.tokens_per_s_per_gpu});
  }
  return {{"columns", {"index", "peak_bytes", "iteration_s", "tokens_per_s_per_gpu"}},
          {"rows", rows}};
}

}  // namespace

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
  Json system = request.system.is_string() ? Json{{"preset", request.system}} : request.system;
  system["num_gpus"] = c.num_gpus;
  return {{"model", request.model}, {"training", training}, {"system", system}};
}

Json search_result_json(const SearchRequest& request, const SearchOutcome& outcome) {
  Json top = Json::array();
  for (size_t i = 0; i < outcome.top.size(); ++i) {
    Json entry = entry_json(request, outcome.top[i]);
    entry["rank"] = i + 1;
    entry["result"] = estimate_to_json(outcome.top_estimates[i]);
    top.push_back(std::move(entry));
  }
  Json pareto = Json::array();
  for (const ScoredCandidate& s : outcome.pareto) pareto.push_back(entry_json(request, s));
  Json result = {{"objective", objective_name(request.spec.objective)},
                 {"top_k", request.spec.top_k},
                 {"capacity_bytes", request.spec.system.gpu.hbm_capacity_bytes},
                 {"memory_budget_bytes", outcome.memory_budget_bytes},
                 {"page",
                  {{"offset", outcome.page_begin},
                   {"end", outcome.page_end},
                   {"candidates", outcome.counts.candidates}}},
                 {"counts", counts_json(outcome.counts)},
                 {"top", top},
                 {"pareto", pareto}};
  if (request.include_points) result["points"] = points_json(outcome.feasible);
  return result;
}

}  // namespace trainsim::report
