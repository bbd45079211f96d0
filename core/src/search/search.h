// The strategy search, streaming and bounded: the space is counted in closed
// form (space.h), its layout classes are ordered by a lower bound of their
// step time (floor.h) and searched best bound first, in fixed batches whose
// classes run on a thread pool; a class, or a sub-block of one, whose time
// and memory floors cannot make the top K nor the Pareto front is skipped
// unvalidated; inside a class each valid candidate gets the static-memory
// bound, then the op-level memory and a lower bound of the step time, and
// only the plans that may still rank have their pipeline simulated (branch and
// bound; the result equals estimating every candidate). After each batch the
// plans that enter the merged top K or Pareto front, and only they, get the
// memory verdict with the allocator replay, best first (batch_resolve.h): a
// plan it rejects gives its place to the next. Only the top K, the
// Pareto front, a bounded sample of points and counters are kept: memory does
// not grow with the number of candidates. Results and counts do not depend on
// the number of threads (each batch sees only what earlier batches proved).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "search/candidate.h"
#include "search/rank.h"
#include "search/search_spec.h"
#include "trainsim/result.h"

namespace trainsim {

struct ScoredCandidate {
  RankKey key;  ///< key.index: the combination index
  Candidate candidate;
};

struct SearchCounts {
  int64_t layout_classes = 0;  ///< searched (GPU count, tp, cp, pp, ep, etp)
  int64_t considered = 0;      ///< combinations of the allowed values
  /// Combinations never validated: their block's time and memory floors cannot
  /// make the top K nor the Pareto front.
  int64_t skipped = 0;
  int64_t invalid = 0;  ///< rejected by the config rules
  std::map<std::string, int64_t> invalid_by_reason;
  int64_t candidates = 0;  ///< valid combinations
  /// Valid candidates whose static-memory bound and time floor cannot rank.
  int64_t bounded = 0;
  int64_t pruned = 0;  ///< static memory alone exceeds the budget
  std::map<std::string, int64_t> pruned_by_reason;
  int64_t evaluated = 0;   ///< estimated: op-level memory, step time at least bounded
  /// The memory verdict (memory/verdict.h) with its lower bound, allocated memory plus memory
  /// outside the allocator, is not "fits" (the allocator replay runs only for plans that would
  /// enter the top K or the Pareto front), or the plan is over max_gpu_hours.
  int64_t infeasible = 0;
  std::map<std::string, int64_t> infeasible_by_reason;
  int64_t feasible = 0;
  /// Feasible plans whose pipeline was simulated (exact step time); the other
  /// feasible plans are proven out of the top K and the Pareto front by a lower
  /// bound of their step time (time/pipeline_schedule.h, pipeline_lower_bound).
  int64_t timed = 0;
  /// Plans that would enter the merged top K or Pareto front of their batch that the memory
  /// verdict with the allocator replay (reserved memory) finds not to fit: they leave both
  /// lists (they stay counted in `feasible`). Like `timed`, it depends on which plans a run
  /// had to simulate (with SearchOptions::replay_all: every feasible plan is replayed).
  int64_t rejected_by_replay = 0;
  /// Distinct plans given the memory verdict with the allocator replay (not in the JSON
  /// result: a measure of the search's work, like `timed`).
  int64_t replayed = 0;
  int64_t uneven_candidates = 0;  ///< valid candidates with an uneven stage split
};

// What earlier pages of the same search proved (exact metrics of real plans):
// their top K (best first) and Pareto front. Only skips work; never changes results.
struct SearchBound {
  std::vector<CandidateMetrics> top;
  std::vector<CandidateMetrics> front;
};

struct SearchPage {
  bool whole = true;             ///< every layout class
  std::vector<int64_t> classes;  ///< else these (indices in enumeration order)
  /// Or a range of classes [offset, offset + limit) in enumeration order
  /// (limit >= 0), without a bound: pages a caller splits by count.
  int64_t offset = 0;
  int64_t limit = -1;
  bool plan_only = false;        ///< count and order the classes, evaluate nothing
  SearchBound bound;
};

struct SearchOptions {
  int threads = 1;  ///< native thread pool over layout classes (WASM: 1)
  /// Skip and bound by the floors (floor.h). Off, every combination is
  /// validated and every valid one screened: the same results, exact counts
  /// of what fits (the brute-force test compares both with estimate()).
  bool floors = true;
  /// Keep the points sample (include_points): timing its plans costs time.
  bool points = false;
  /// Give every plan that fits by the screening the allocator replay's verdict (the
  /// brute-force path): the same top K and front, exact `rejected_by_replay` counts.
  bool replay_all = false;
};

struct ClassOrder {
  int64_t index = 0;
  int64_t combinations = 0;
  double floor_s = 0.0;  ///< infinity when no member's floor is known
};

inline constexpr int64_t kMaxSearchPoints = 1000;  ///< scatter points kept

struct SearchOutcome {
  SearchCounts counts;
  int64_t total_classes = 0;       ///< of the whole search
  int64_t total_combinations = 0;  ///< of the whole search
  double memory_budget_bytes = 0.0;
  std::vector<ScoredCandidate> top;      ///< best first, at most top_k
  std::vector<Estimate> top_estimates;   ///< full estimate of each top entry (no timeline)
  std::vector<ScoredCandidate> pareto;   ///< ascending peak memory
  /// A deterministic sample of timed feasible plans: feasible by the screening's verdict
  /// (allocated memory, its lower bound); the replay is not run for them.
  std::vector<ScoredCandidate> points;
  std::optional<ScoredCandidate> closest;  ///< the evaluated plan with the least peak memory
  std::vector<ClassOrder> order;           ///< plan_only: classes, best floor first
  std::vector<int64_t> page_classes;       ///< the classes searched (not whole): ascending
};

inline constexpr const char* kPrunedStaticMemory =
    "weights, gradients and optimizer states alone exceed the memory budget";
// The screening's verdict compares allocated memory (the op walk's peak, before the allocator
// replay adds what the cache reserves) plus memory outside the allocator with the usable
// capacity: a lower bound of the need, and the reasons say so.
inline constexpr const char* kInfeasibleCapacity =
    "allocated memory plus memory outside the allocator (a lower bound of the need) exceeds "
    "the usable GPU memory";
inline constexpr const char* kInfeasibleHeadroom =
    "allocated memory plus memory outside the allocator (a lower bound of the need) fits the "
    "usable GPU memory but not the memory headroom";
inline constexpr const char* kInfeasibleGpuHours = "gpu hours to train exceed max_gpu_hours";

// Call within the limits (SearchSpace::limit_issue() empty).
SearchOutcome run_search(const SearchSpec& spec, const SearchPage& page,
                         const SearchOptions& options = {});

// The points sample: a plan is kept when its index hashes below the search's
// threshold, and at most kMaxSearchPoints with the smallest hashes are kept
// (so pages merge to the same sample).
uint64_t point_hash(int64_t index);

}  // namespace trainsim
