// The strategy search: enumerate the valid candidates, prune those whose
// static memory alone exceeds the budget, estimate the memory of the rest and
// a lower bound of their step time, simulate the pipeline of the plans that
// may still make the top K or the Pareto front (branch and bound: best bound
// first; the result equals estimating every candidate), and return the top K
// with their full estimates, the Pareto front of peak memory vs step time, and
// the counts. Pure and deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "search/candidate.h"
#include "search/rank.h"
#include "search/search_spec.h"
#include "trainsim/result.h"

namespace trainsim {

struct ScoredCandidate {
  RankKey key;  ///< key.index: position in the enumeration
  Candidate candidate;
};

struct SearchCounts {
  int64_t considered = 0;  ///< combinations of the allowed values (whole search)
  int64_t invalid = 0;     ///< rejected by the config rules (whole search)
  std::map<std::string, int64_t> invalid_by_reason;
  int64_t candidates = 0;  ///< valid combinations (whole search)
  // The rest covers the evaluated page of candidates.
  int64_t pruned = 0;  ///< static memory alone exceeds the budget
  std::map<std::string, int64_t> pruned_by_reason;
  int64_t evaluated = 0;   ///< estimated: op-level memory, step time at least bounded
  /// The memory verdict (memory/verdict.h) with its lower bound, allocated memory plus memory
  /// outside the allocator, is not "fits" (the allocator replay runs for timed plans only).
  int64_t infeasible = 0;
  std::map<std::string, int64_t> infeasible_by_reason;
  int64_t feasible = 0;
  /// Feasible plans whose pipeline was simulated (exact step time); the other
  /// feasible plans are proven out of the top K and the Pareto front by a lower
  /// bound of their step time (time/pipeline_schedule.h, pipeline_lower_bound).
  int64_t timed = 0;
  /// Plans simulated for the top K or the Pareto front that the memory verdict with the
  /// allocator replay (reserved memory) finds not to fit: they leave both lists. Like
  /// `timed`, it depends on which plans a run had to simulate.
  int64_t rejected_by_replay = 0;
};

// A slice [offset, offset + limit) of the valid candidates (limit < 0: to the end).
struct SearchPage {
  int64_t offset = 0;
  int64_t limit = -1;
};

struct SearchOutcome {
  SearchCounts counts;
  int64_t page_begin = 0;  ///< candidates [page_begin, page_end) were evaluated
  int64_t page_end = 0;
  double memory_budget_bytes = 0.0;
  std::vector<ScoredCandidate> top;       ///< best first, at most top_k
  std::vector<Estimate> top_estimates;    ///< full estimate of each top entry (no timeline)
  std::vector<ScoredCandidate> pareto;    ///< ascending peak memory
  std::vector<ScoredCandidate> feasible;  ///< every plan that fits, in enumeration order (if asked;
                                          ///< then every feasible plan is timed)
};

inline constexpr const char* kPrunedStaticMemory =
    "weights, gradients and optimizer states alone exceed the memory budget";
inline constexpr const char* kInfeasibleCapacity = "peak memory exceeds the GPU memory";
inline constexpr const char* kInfeasibleHeadroom =
    "peak memory fits the GPU but not the memory headroom";

SearchOutcome run_search(const SearchSpec& spec, const SearchPage& page, bool keep_feasible);

}  // namespace trainsim
