// Estimates the candidates of one search on the fast path: a static-memory
// lower bound first (memory_bound.h), then the op-level memory and a lower
// bound of the step time (pipeline not simulated), then, for plans that may
// rank, the exact step time. Blocks are shared between candidates with the
// same ops (model/model_plan.h, BlockCache); no timeline or descriptions.
// Every figure equals what estimate() gives for the candidate's config.
#pragma once

#include <array>
#include <map>
#include <tuple>

#include "estimate_options.h"
#include "model/model_plan.h"
#include "search/candidate.h"
#include "search/memory_bound.h"
#include "search/rank.h"
#include "search/search_spec.h"
#include "trainsim/result.h"

namespace trainsim {

enum class Screening { kPruned, kExceedsCapacity, kExceedsHeadroom, kFits };

// Whether an estimated plan fits, and if not why: the one place the search
// decides it, by the estimate's memory verdict (memory/verdict.h) under the
// search's headroom. On the fast path (no allocator replay) the verdict
// counts allocated instead of reserved memory: a lower bound of the need.
Screening memory_screening(const Estimate& estimate);

CandidateMetrics metrics_of(const Estimate& estimate);

class CandidateEvaluator {
 public:
  CandidateEvaluator(const SearchSpec& spec, double memory_budget_bytes);

  // The static-memory lower bound of a validated candidate.
  double static_bound_bytes(const Candidate& candidate);

  // Exact peak memory and, when the plan fits the budget, lower bounds of the
  // step time (and upper bounds of tokens/s and MFU) in `bound`. `static_bytes`:
  // static_bound_bytes() of the same candidate.
  Screening screen(const Candidate& candidate, double static_bytes, CandidateMetrics& bound);

  // Exact metrics of a plan (pipeline simulated; memory without the allocator replay,
  // which changes no metric, only the verdict).
  CandidateMetrics exact(const Candidate& candidate);

  // The memory verdict with the allocator replay is "fits" (the screening's verdict
  // is a lower bound of the need). The replay costs far more than the rest of an
  // estimate, so the search asks only for plans that would enter its results.
  bool replay_fits(const Candidate& candidate);

  // A time-only lower-bound estimate of a valid plan (no memory cutoff).
  Estimate time_bound(const Candidate& candidate);

  // The full estimate, as estimate() gives it without the timeline (no shared blocks).
  Estimate full(const Candidate& candidate);

 private:
  // Everything a block depends on besides the spec (BlockCache's contract).
  using OpKey = std::tuple<int32_t, int32_t, int32_t, int32_t, bool, int32_t, int16_t,
                           std::array<int8_t, kMaxChoiceDimensions>>;
  // Caches kept at once: a class needs a few dozen; a search visits thousands.
  static constexpr size_t kMaxCaches = 192;
  BlockCache& cache_for(const Candidate& candidate);

  const SearchSpec& spec_;
  double budget_bytes_;
  StaticMemoryBound bound_;
  Config config_;
  std::map<OpKey, BlockCache> caches_;
};

}  // namespace trainsim
