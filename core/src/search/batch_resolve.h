// The allocator replay's place in the search: after each batch of layout
// classes, only the plans that can enter the merged top K or the Pareto front
// get the memory verdict with the allocator replay (reserved memory), best
// first; a plan it rejects leaves both lists and the next plan of its class
// takes its place (timed on demand). The replay only rejects plans (the
// screening's verdict counts allocated memory, a lower bound of the need) and
// changes no time, so the result equals replaying every plan that fits
// (SearchOptions::replay_all; tests/search/brute_force_test.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "search/collector.h"
#include "search/evaluator.h"

namespace trainsim {

// Plans of one layout for diversity "per_layout": equal choice keys that are part of a layout.
bool same_layout(const Candidate& a, const Candidate& b);

// Times and replays FitPlans once each, counting into the given counts.
class FitJudge {
 public:
  FitJudge(const SearchSpec& spec, CandidateEvaluator& evaluator)
      : spec_(spec), evaluator_(evaluator) {}

  // Exact metrics (pipeline simulated); a plan over max_gpu_hours becomes infeasible.
  void time(FitPlan& fit, SearchCounts& counts);
  // The memory verdict with the allocator replay is "fits" (replayed once).
  bool fits(FitPlan& fit, SearchCounts& counts);

 private:
  const SearchSpec& spec_;
  CandidateEvaluator& evaluator_;
};

// The verified top K and Pareto front entries of one batch (their FitPlans in
// `results[i].fits`, i < size), against what the collector already holds (and
// its external bound): fills `verified.top` (best first) and `verified.front`
// and counts its timing and replays in `verified.counts`.
void resolve_batch(const SearchSpec& spec, std::vector<ClassResult>& results, size_t size,
                   const Collector& collector, FitJudge& judge, ClassResult& verified);

}  // namespace trainsim
