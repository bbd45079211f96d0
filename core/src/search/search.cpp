#include "search/search.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "memory/outside_memory.h"
#include "search/enumerate.h"
#include "search/evaluator.h"

namespace trainsim {
namespace {

// Rounding slack between the step-time lower bound and the simulated time
// (both sum the same pass times in different orders).
constexpr double kBoundMargin = 1e-9;

struct Screened {
  int64_t index = 0;
  Candidate candidate;
  CandidateMetrics bound;  ///< exact memory, step time lower bound
  bool timed = false;
  bool replayed = false;
  bool fits = false;  ///< the replayed memory verdict (known once replayed)
  CandidateMetrics exact;
};

// Simulates a plan's pipeline (its exact metrics; the memory verdict is still the
// screening's lower bound).
void time_one(Screened& s, CandidateEvaluator& evaluator) {
  if (s.timed) return;
  s.exact = evaluator.exact(s.candidate);
  s.timed = true;
}

// The allocator replay's verdict, asked only of a plan that would enter the top K
// or the Pareto front: a plan that does not fit leaves the feasible plans.
bool replayed_fits(Screened& s, CandidateEvaluator& evaluator, SearchCounts& counts) {
  if (!s.replayed) {
    s.fits = evaluator.replay_fits(s.candidate);
    s.replayed = true;
    if (!s.fits) ++counts.rejected_by_replay;
  }
  return s.fits;
}

// True when a plan whose step time is at least bound.iteration_s ranks after `worst`.
bool cannot_beat(const CandidateMetrics& bound, const CandidateMetrics& worst,
                 SearchObjective objective) {
  if (objective == SearchObjective::kStepTime) {
    return bound.iteration_s * (1.0 - kBoundMargin) > worst.iteration_s;
  }
  return bound.tokens_per_s_per_gpu * (1.0 + kBoundMargin) < worst.tokens_per_s_per_gpu;
}

// Times plans best bound first until the K-th best exact plan beats every bound left.
void time_top_k(std::vector<Screened>& fits, const SearchSpec& spec,
                CandidateEvaluator& evaluator, SearchCounts& counts) {
  std::vector<size_t> order(fits.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return ranks_before({fits[a].index, fits[a].bound}, {fits[b].index, fits[b].bound},
                        spec.objective);
  });
  auto worse = [&](const RankKey& a, const RankKey& b) {
    return ranks_before(a, b, spec.objective);
  };
  std::vector<RankKey> best;  // max-heap: front is the worst of the best K
  const auto k = static_cast<size_t>(spec.top_k);
  for (const size_t position : order) {
    Screened& s = fits[position];
    if (best.size() == k && cannot_beat(s.bound, best.front().metrics, spec.objective)) break;
    time_one(s, evaluator);
    // The heap only gets better: a plan that does not enter it now never ranks in
    // the top K, so it needs no replay.
    const RankKey key{s.index, s.exact};
    if (best.size() == k && !ranks_before(key, best.front(), spec.objective)) continue;
    if (!replayed_fits(s, evaluator, counts)) continue;
    best.push_back(key);
    std::push_heap(best.begin(), best.end(), worse);
    if (best.size() > k) {
      std::pop_heap(best.begin(), best.end(), worse);
      best.pop_back();
    }
  }
}

// Sweeps by peak memory: a plan whose step-time bound is above the fastest exact
// plan using no more memory is not on the Pareto front.
void time_pareto(std::vector<Screened>& fits, CandidateEvaluator& evaluator, SearchCounts& counts) {
  std::vector<size_t> order(fits.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Screened& x = fits[a];
    const Screened& y = fits[b];
    if (x.bound.peak_bytes != y.bound.peak_bytes) return x.bound.peak_bytes < y.bound.peak_bytes;
    if (x.timed != y.timed) return x.timed;
    if (x.bound.iteration_s != y.bound.iteration_s)
      return x.bound.iteration_s < y.bound.iteration_s;
    return x.index < y.index;
  });
  double fastest_s = std::numeric_limits<double>::infinity();
  for (const size_t position : order) {
    Screened& s = fits[position];
    if (!s.timed) {
      if (fastest_s < s.bound.iteration_s * (1.0 - kBoundMargin)) continue;
      time_one(s, evaluator);
    }
    // A plan slower than a fitting plan with no more memory is off the front
    // whether it fits or not: no replay.
    if (s.exact.iteration_s > fastest_s) continue;
    if (replayed_fits(s, evaluator, counts)) fastest_s = s.exact.iteration_s;
  }
}

std::vector<Screened> screen_page(const Enumeration& all, const SearchOutcome& range,
                                  CandidateEvaluator& evaluator, SearchCounts& counts) {
  std::vector<Screened> fits;
  for (int64_t i = range.page_begin; i < range.page_end; ++i) {
    Screened s;
    s.index = i;
    s.candidate = all.candidates[static_cast<size_t>(i)];
    const Screening screening = evaluator.screen(s.candidate, s.bound);
    if (screening == Screening::kPruned) {
      ++counts.pruned;
      ++counts.pruned_by_reason[kPrunedStaticMemory];
      continue;
    }
    ++counts.evaluated;
    if (screening == Screening::kFits) {
      fits.push_back(s);
      continue;
    }
    ++counts.infeasible;
    ++counts.infeasible_by_reason[screening == Screening::kExceedsCapacity ? kInfeasibleCapacity
                                                                           : kInfeasibleHeadroom];
  }
  counts.feasible = static_cast<int64_t>(fits.size());
  return fits;
}

}  // namespace

SearchOutcome run_search(const SearchSpec& spec, const SearchPage& page, bool keep_feasible) {
  SearchOutcome out;
  const Enumeration all = enumerate_candidates(spec);
  SearchCounts& counts = out.counts;
  counts.considered = all.considered;
  counts.invalid = all.invalid();
  counts.invalid_by_reason = all.invalid_by_reason;
  const auto total = static_cast<int64_t>(all.candidates.size());
  counts.candidates = total;
  out.page_begin = std::clamp<int64_t>(page.offset, 0, total);
  out.page_end = page.limit < 0 ? total : std::min(total, out.page_begin + page.limit);
  // Static memory above this cannot pass the verdict: it needs allocated + outside
  // memory <= (1 - headroom) x usable capacity.
  out.memory_budget_bytes = usable_capacity_bytes(spec.system.gpu) * (1.0 - spec.memory_headroom);

  CandidateEvaluator evaluator(spec, out.memory_budget_bytes);
  std::vector<Screened> fits = screen_page(all, out, evaluator, counts);
  if (keep_feasible) {
    for (Screened& s : fits) {
      time_one(s, evaluator);
      replayed_fits(s, evaluator, counts);
    }
  } else {
    time_top_k(fits, spec, evaluator, counts);
    time_pareto(fits, evaluator, counts);
  }
  std::vector<ScoredCandidate> timed;
  for (const Screened& s : fits) {
    // Timed plans never replayed rank neither in the top K nor on the front.
    if (s.timed && s.replayed && s.fits) timed.push_back({{s.index, s.exact}, s.candidate});
  }
  counts.timed = static_cast<int64_t>(
      std::count_if(fits.begin(), fits.end(), [](const Screened& s) { return s.timed; }));
  std::vector<RankKey> keys;
  for (const ScoredCandidate& s : timed) keys.push_back(s.key);
  for (const size_t p : top_positions(keys, spec.top_k, spec.objective)) {
    out.top.push_back(timed[p]);
    out.top_estimates.push_back(evaluator.full(timed[p].candidate));
  }
  for (const size_t p : pareto_positions(keys)) out.pareto.push_back(timed[p]);
  if (keep_feasible) out.feasible = std::move(timed);
  return out;
}

}  // namespace trainsim
