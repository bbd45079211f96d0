// One layout class searched against what earlier work proved (Incumbents):
// blocks whose floors cannot rank are skipped unvalidated, each remaining
// combination is validated, bounded and screened; the plans that fit go back
// in the result (ClassResult::fits) for the batch's resolution
// (batch_resolve.h), which gives the allocator replay's verdict to those that
// enter the merged top K or Pareto front. Meanwhile, on the worker's thread,
// the plans that would enter them if every plan fitted are timed best bound
// first (work the resolution then finds done), and the points sample.
// One ClassWorker per thread.
#pragma once

#include <cstdint>
#include <vector>

#include "search/batch_resolve.h"
#include "search/collector.h"
#include "search/enumerate.h"
#include "search/evaluator.h"
#include "search/floor.h"
#include "search/space.h"

namespace trainsim {

class ClassWorker {
 public:
  // floors must have measured the classes this worker is given; it is only read.
  ClassWorker(const SearchSpec& spec, const SearchSpace& space, const SearchFloors& floors,
              double memory_budget_bytes, bool use_floors, bool points, bool replay_all);

  ClassResult process(const LayoutClass& layout, const Incumbents& known);

  // For the batch's resolution, on the caller's thread between batches.
  CandidateEvaluator& evaluator() { return evaluator_; }

 private:
  bool excluded(const CandidateMetrics& bound, double peak_lower_bytes,
                const Incumbents& known) const;
  bool out_of_top(const CandidateMetrics& bound, const Candidate& candidate,
                  const Incumbents& known) const;
  void time_fits(const Incumbents& known, ClassResult& result);
  void keep_local(const FitPlan& fit);

  const SearchSpec& spec_;
  const SearchSpace& space_;
  const SearchFloors& floors_;
  double budget_bytes_;
  bool use_floors_;
  bool replay_all_;
  uint64_t point_threshold_;
  CandidateChecker checker_;
  CandidateEvaluator evaluator_;
  FitJudge judge_;
  StaticMemoryBound bound_;
  Config scratch_;
  // The class being processed: its timed plans as if every plan fitted (best
  // first; layout bests with per_layout), only to decide what to time.
  std::vector<ScoredCandidate> local_top_;
};

}  // namespace trainsim
