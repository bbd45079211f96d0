#include "search/search.h"

#include <algorithm>
#include <tuple>

#include "estimate_options.h"
#include "model/model_plan.h"
#include "search/enumerate.h"
#include "search/memory_bound.h"

namespace trainsim {
namespace {

// Candidates with equal values here have identical op lists (BlockCache's
// contract): the model, seq_len, dtype and training template are the spec's.
using OpKey = std::tuple<int32_t, int32_t, int32_t, int32_t, bool, int32_t, int16_t>;

OpKey op_key(const Candidate& c) {
  return {c.tp, c.cp, c.ep, c.etp, c.sequence_parallel, c.micro_batch_size, c.recompute};
}

class Evaluator {
 public:
  Evaluator(const SearchSpec& spec, SearchOutcome& out)
      : spec_(spec), out_(out), bound_(spec.model), config_(base_config(spec)) {
    out_.memory_budget_bytes = spec.system.gpu.hbm_capacity_bytes * (1.0 - spec.memory_headroom);
    options_.timeline = false;
    options_.reference_formulas = false;
    options_.time_only_within_bytes = out_.memory_budget_bytes;
  }

  // The metrics of a plan that fits, or false (counted as pruned / infeasible).
  bool evaluate(const Candidate& c, CandidateMetrics& metrics) {
    apply_candidate(spec_, c, config_);
    SearchCounts& counts = out_.counts;
    const double budget = out_.memory_budget_bytes;
    if (bound_.lower_bound_bytes(config_) > budget) {
      ++counts.pruned;
      ++counts.pruned_by_reason[kPrunedStaticMemory];
      return false;
    }
    const Estimate e = estimate_with(config_, options_, &caches_[op_key(c)]);
    ++counts.evaluated;
    if (e.memory.peak_bytes > budget) {
      ++counts.infeasible;
      ++counts.infeasible_by_reason[e.fits ? kInfeasibleHeadroom : kInfeasibleCapacity];
      return false;
    }
    ++counts.feasible;
    metrics = {e.time.iteration_s, e.memory.peak_bytes, e.throughput.tokens_per_s_per_gpu,
               e.throughput.mfu};
    return true;
  }

  // The full estimate of a candidate, computed afresh (no shared blocks).
  Estimate full_estimate(const Candidate& c) {
    apply_candidate(spec_, c, config_);
    EstimateOptions full;
    full.timeline = false;
    return estimate_with(config_, full, nullptr);
  }

 private:
  const SearchSpec& spec_;
  SearchOutcome& out_;
  StaticMemoryBound bound_;
  Config config_;
  EstimateOptions options_;
  std::map<OpKey, BlockCache> caches_;
};

}  // namespace

SearchOutcome run_search(const SearchSpec& spec, const SearchPage& page, bool keep_feasible) {
  SearchOutcome out;
  Enumeration all = enumerate_candidates(spec);
  SearchCounts& counts = out.counts;
  counts.considered = all.considered;
  counts.invalid = all.invalid();
  counts.invalid_by_reason = std::move(all.invalid_by_reason);
  const auto total = static_cast<int64_t>(all.candidates.size());
  counts.candidates = total;
  out.page_begin = std::clamp<int64_t>(page.offset, 0, total);
  out.page_end = page.limit < 0 ? total : std::min(total, out.page_begin + page.limit);

  Evaluator evaluator(spec, out);
  std::vector<ScoredCandidate> fits;
  for (int64_t i = out.page_begin; i < out.page_end; ++i) {
    const Candidate& c = all.candidates[static_cast<size_t>(i)];
    CandidateMetrics metrics;
    if (evaluator.evaluate(c, metrics)) fits.push_back({{i, metrics}, c});
  }
  std::vector<RankKey> keys;
  keys.reserve(fits.size());
  for (const ScoredCandidate& s : fits) keys.push_back(s.key);
  for (const size_t p : top_positions(keys, spec.top_k, spec.objective)) {
    out.top.push_back(fits[p]);
    out.top_estimates.push_back(evaluator.full_estimate(fits[p].candidate));
  }
  for (const size_t p : pareto_positions(keys)) out.pareto.push_back(fits[p]);
  if (keep_feasible) out.feasible = std::move(fits);
  return out;
}

}  // namespace trainsim
