// One layout class searched against what earlier work proved (Incumbents):
// blocks whose floors cannot rank are skipped unvalidated, each remaining
// combination is validated, bounded, screened, and the plans that fit are
// timed best bound first while they may still make the top K (or their
// layout's best) or the Pareto front; a timed plan that would enter either
// gets the allocator replay, and leaves both when its replayed memory verdict
// is not "fits" (memory/verdict.h). One ClassWorker per thread.
#pragma once

#include <cstdint>
#include <vector>

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
              double memory_budget_bytes, bool use_floors, bool points);

  ClassResult process(const LayoutClass& layout, const Incumbents& known);

 private:
  struct Fit {
    int64_t index = 0;
    Candidate candidate;
    CandidateMetrics bound;  ///< exact memory, lower bound of the time
    bool timed = false;
    bool over_gpu_hours = false;
    bool replayed = false;
    bool fits = false;  ///< the memory verdict with the allocator replay (once replayed)
    CandidateMetrics exact;
  };

  bool excluded(const CandidateMetrics& bound, double peak_lower_bytes,
                const Incumbents& known) const;
  bool out_of_top(const CandidateMetrics& bound, const Candidate& candidate,
                  const Incumbents& known) const;
  void time_fit(Fit& fit, ClassResult& result);
  bool replayed_fits(Fit& fit, ClassResult& result);
  void time_fits(const Incumbents& known, ClassResult& result);
  void keep_local(const Fit& fit);

  const SearchSpec& spec_;
  const SearchSpace& space_;
  const SearchFloors& floors_;
  double budget_bytes_;
  bool use_floors_;
  uint64_t point_threshold_;
  CandidateChecker checker_;
  CandidateEvaluator evaluator_;
  StaticMemoryBound bound_;
  Config scratch_;
  // The class being processed: plans that fit, and its timed plans.
  std::vector<Fit> fits_;
  std::vector<ScoredCandidate> local_top_;  ///< best first (layout bests with per_layout)
};

}  // namespace trainsim
