// What a search keeps while it streams over its layout classes: the top K,
// the Pareto front, a bounded sample of points, the closest plan and the
// counts (sizes independent of the number of candidates), and what they prove
// about the plans still to come (Incumbents).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "search/search.h"

namespace trainsim {

// Exact plans known so far, as bounds: a plan is out of the top K when K known
// plans beat it, and off the Pareto front when a known plan has no more
// memory and strictly less time.
class Incumbents {
 public:
  Incumbents() = default;
  Incumbents(std::vector<CandidateMetrics> top, const std::vector<CandidateMetrics>& front,
             const SearchSpec& spec);

  // Known plans that beat every plan with at least these costs (bound: lower
  // bounds of time and costs, upper bound of throughput).
  int64_t beating(const CandidateMetrics& bound) const;
  bool fills_top() const { return static_cast<int64_t>(top_.size()) >= top_k_; }
  // The least step time of a known plan with at most this peak (infinity when none).
  double fastest_within(double peak_bytes) const;
  bool front_excludes(double peak_lower_bytes, double time_lower_s) const;

 private:
  std::vector<CandidateMetrics> top_;  ///< best first
  std::vector<double> front_peak_;     ///< ascending
  std::vector<double> front_fastest_;  ///< least time among front_peak_[0..i]
  SearchObjective objective_ = SearchObjective::kStepTime;
  int64_t top_k_ = 0;
};

// A plan the screening found to fit (allocated memory, a lower bound of the
// need), with what was learnt of it since: exact metrics once timed, the
// memory verdict with the allocator replay once replayed.
struct FitPlan {
  int64_t index = 0;
  Candidate candidate;
  CandidateMetrics bound;  ///< exact memory, lower bound of the time
  bool timed = false;
  bool over_gpu_hours = false;
  bool replayed = false;
  bool fits = false;  ///< the replayed verdict (once replayed)
  CandidateMetrics exact;
};

// What one layout class (or a page of them) found.
struct ClassResult {
  SearchCounts counts;
  std::vector<ScoredCandidate> top;     ///< its best plans (or its layout bests), best first
  std::vector<ScoredCandidate> front;   ///< its own Pareto front
  std::vector<ScoredCandidate> points;  ///< sampled (point_hash below the threshold)
  std::optional<ScoredCandidate> closest;
  /// A class's plans that fit by the screening, for its batch's resolution
  /// (batch_resolve.h), which fills `top` and `front`; emptied by the merge.
  std::vector<FitPlan> fits;
};

void add_counts(SearchCounts& into, const SearchCounts& from);

class Collector {
 public:
  explicit Collector(const SearchSpec& spec, SearchBound external = {});
  void merge(ClassResult&& result);
  Incumbents incumbents() const;  ///< the external bound and everything merged

  SearchCounts& counts() { return counts_; }
  std::vector<ScoredCandidate>& top() { return top_; }
  std::vector<ScoredCandidate>& front() { return front_; }
  std::vector<ScoredCandidate>& points() { return points_; }
  std::optional<ScoredCandidate>& closest() { return closest_; }

 private:
  const SearchSpec& spec_;
  SearchBound external_;
  SearchCounts counts_;
  std::vector<ScoredCandidate> top_;
  std::vector<ScoredCandidate> front_;
  std::vector<ScoredCandidate> points_;
  std::optional<ScoredCandidate> closest_;
};

// The best k of `entries` (best first) and their Pareto front (by memory).
std::vector<ScoredCandidate> best_of(std::vector<ScoredCandidate> entries, int64_t k,
                                     SearchObjective objective);
std::vector<ScoredCandidate> front_of(const std::vector<ScoredCandidate>& entries);
// At most kMaxSearchPoints with the smallest point_hash, in index order.
void thin_points(std::vector<ScoredCandidate>& points);

}  // namespace trainsim
