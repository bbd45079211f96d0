#include "search/collector.h"

#include <algorithm>
#include <limits>

namespace trainsim {

uint64_t point_hash(int64_t index) {
  // splitmix64 (Steele, Lea, Flood 2014): a fixed, well-mixed permutation.
  uint64_t z = static_cast<uint64_t>(index) + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Incumbents::Incumbents(std::vector<CandidateMetrics> top,
                       const std::vector<CandidateMetrics>& front, const SearchSpec& spec)
    : top_(std::move(top)), objective_(spec.objective), top_k_(spec.top_k) {
  std::stable_sort(top_.begin(), top_.end(), [&](const CandidateMetrics& a, const CandidateMetrics& b) {
    return objective_cost(a, objective_) < objective_cost(b, objective_);
  });
  if (static_cast<int64_t>(top_.size()) > top_k_) top_.resize(static_cast<size_t>(top_k_));
  std::vector<CandidateMetrics> points = front;
  std::sort(points.begin(), points.end(), [](const CandidateMetrics& a, const CandidateMetrics& b) {
    return a.peak_bytes < b.peak_bytes;
  });
  double fastest = std::numeric_limits<double>::infinity();
  for (const CandidateMetrics& p : points) {
    fastest = std::min(fastest, p.iteration_s);
    front_peak_.push_back(p.peak_bytes);
    front_fastest_.push_back(fastest);
  }
}

int64_t Incumbents::beating(const CandidateMetrics& bound) const {
  const auto end = std::partition_point(top_.begin(), top_.end(), [&](const CandidateMetrics& k) {
    return cannot_beat(bound, k, objective_);
  });
  return static_cast<int64_t>(end - top_.begin());
}

double Incumbents::fastest_within(double peak_bytes) const {
  const auto end = std::upper_bound(front_peak_.begin(), front_peak_.end(), peak_bytes);
  if (end == front_peak_.begin()) return std::numeric_limits<double>::infinity();
  return front_fastest_[static_cast<size_t>(end - front_peak_.begin()) - 1];
}

bool Incumbents::front_excludes(double peak_lower_bytes, double time_lower_s) const {
  return fastest_within(peak_lower_bytes) < time_lower_s * (1.0 - kBoundMargin);
}

void add_counts(SearchCounts& into, const SearchCounts& from) {
  into.layout_classes += from.layout_classes;
  into.considered += from.considered;
  into.skipped += from.skipped;
  into.invalid += from.invalid;
  for (const auto& [reason, n] : from.invalid_by_reason) into.invalid_by_reason[reason] += n;
  into.candidates += from.candidates;
  into.bounded += from.bounded;
  into.pruned += from.pruned;
  for (const auto& [reason, n] : from.pruned_by_reason) into.pruned_by_reason[reason] += n;
  into.evaluated += from.evaluated;
  into.infeasible += from.infeasible;
  for (const auto& [reason, n] : from.infeasible_by_reason) into.infeasible_by_reason[reason] += n;
  into.feasible += from.feasible;
  into.timed += from.timed;
  into.rejected_by_replay += from.rejected_by_replay;
  into.replayed += from.replayed;
  into.uneven_candidates += from.uneven_candidates;
}

std::vector<ScoredCandidate> best_of(std::vector<ScoredCandidate> entries, int64_t k,
                                     SearchObjective objective) {
  std::vector<RankKey> keys;
  keys.reserve(entries.size());
  for (const ScoredCandidate& e : entries) keys.push_back(e.key);
  std::vector<ScoredCandidate> out;
  for (const size_t p : top_positions(keys, k, objective)) out.push_back(entries[p]);
  return out;
}

std::vector<ScoredCandidate> front_of(const std::vector<ScoredCandidate>& entries) {
  std::vector<RankKey> keys;
  keys.reserve(entries.size());
  for (const ScoredCandidate& e : entries) keys.push_back(e.key);
  std::vector<ScoredCandidate> out;
  for (const size_t p : pareto_positions(keys)) out.push_back(entries[p]);
  return out;
}

void thin_points(std::vector<ScoredCandidate>& points) {
  if (static_cast<int64_t>(points.size()) > kMaxSearchPoints) {
    std::nth_element(points.begin(), points.begin() + kMaxSearchPoints, points.end(),
                     [](const ScoredCandidate& a, const ScoredCandidate& b) {
                       return point_hash(a.key.index) < point_hash(b.key.index);
                     });
    points.resize(static_cast<size_t>(kMaxSearchPoints));
  }
  std::sort(points.begin(), points.end(), [](const ScoredCandidate& a, const ScoredCandidate& b) {
    return a.key.index < b.key.index;
  });
}

Collector::Collector(const SearchSpec& spec, SearchBound external)
    : spec_(spec), external_(std::move(external)) {}

void Collector::merge(ClassResult&& r) {
  add_counts(counts_, r.counts);
  if (!r.top.empty()) {
    top_.insert(top_.end(), r.top.begin(), r.top.end());
    top_ = best_of(std::move(top_), spec_.top_k, spec_.objective);
  }
  if (!r.front.empty()) {
    front_.insert(front_.end(), r.front.begin(), r.front.end());
    front_ = front_of(front_);
  }
  if (!r.points.empty()) {
    points_.insert(points_.end(), r.points.begin(), r.points.end());
    if (static_cast<int64_t>(points_.size()) > 2 * kMaxSearchPoints) thin_points(points_);
  }
  if (r.closest) {
    const auto& c = *r.closest;
    if (!closest_ || std::tie(c.key.metrics.peak_bytes, c.key.index) <
                         std::tie(closest_->key.metrics.peak_bytes, closest_->key.index)) {
      closest_ = c;
    }
  }
}

Incumbents Collector::incumbents() const {
  std::vector<CandidateMetrics> top = external_.top;
  for (const ScoredCandidate& s : top_) top.push_back(s.key.metrics);
  std::vector<CandidateMetrics> front = external_.front;
  for (const ScoredCandidate& s : front_) front.push_back(s.key.metrics);
  return Incumbents(std::move(top), front, spec_);
}

}  // namespace trainsim
