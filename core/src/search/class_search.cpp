#include "search/class_search.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "search/choices.h"

namespace trainsim {
namespace {

// The sample keeps about four times kMaxSearchPoints of the combinations'
// hashes (most combinations never fit), then thins to the smallest.
uint64_t points_threshold(int64_t combinations) {
  const double rate = 4.0 * static_cast<double>(kMaxSearchPoints) /
                      static_cast<double>(std::max<int64_t>(combinations, 1));
  if (rate >= 1.0) return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(rate * 18446744073709551615.0);
}

// Plans of one layout for diversity "per_layout": equal choice keys that are part of a layout.
bool same_layout(const Candidate& a, const Candidate& b) {
  const auto& dimensions = choice_dimensions();
  for (size_t d = 0; d < dimensions.size(); ++d) {
    if (dimensions[d].in_layout && a.choice[d] != b.choice[d]) return false;
  }
  return true;
}

}  // namespace

ClassWorker::ClassWorker(const SearchSpec& spec, const SearchSpace& space,
                         const SearchFloors& floors, double memory_budget_bytes, bool use_floors,
                         bool points)
    : spec_(spec),
      space_(space),
      floors_(floors),
      budget_bytes_(memory_budget_bytes),
      use_floors_(use_floors),
      point_threshold_(points ? points_threshold(space.combinations()) : 0),
      checker_(spec),
      evaluator_(spec, memory_budget_bytes),
      bound_(spec.model),
      scratch_(base_config(spec)) {}

// Out of the top K and off the front, by what earlier classes proved (the
// class's own plans are timed after its enumeration, in time_fits).
bool ClassWorker::excluded(const CandidateMetrics& bound, double peak_lower_bytes,
                           const Incumbents& known) const {
  return known.beating(bound) >= spec_.top_k &&
         known.front_excludes(peak_lower_bytes, bound.iteration_s);
}

// Out of the top K, or per layout below the best plan of its layout.
bool ClassWorker::out_of_top(const CandidateMetrics& bound, const Candidate& c,
                             const Incumbents& known) const {
  int64_t beating = known.beating(bound);
  for (const ScoredCandidate& s : local_top_) {
    const bool beats = cannot_beat(bound, s.key.metrics, spec_.objective);
    if (spec_.diversity == SearchDiversity::kPerLayout) {
      if (beats && same_layout(s.candidate, c)) return true;
    } else {
      beating += beats ? 1 : 0;
    }
  }
  return beating >= spec_.top_k;
}

ClassResult ClassWorker::process(const LayoutClass& layout, const Incumbents& known) {
  ClassResult result;
  SearchCounts& counts = result.counts;
  counts.layout_classes = 1;
  counts.considered = layout.combinations;
  fits_.clear();
  local_top_.clear();
  const std::vector<StagePlan>& plans = space_.stage_plans(layout.pp);
  int64_t index = layout.first_index;
  for (const SubBlock& block : space_.sub_blocks(layout)) {
    const double floor_s = use_floors_ ? floors_.time_floor_s(layout, block) : 0.0;
    if (floor_s > 0.0) {
      const double floor_bytes = static_floor_bytes(bound_, scratch_, layout, block);
      const CandidateMetrics m = metrics_for_time(floor_s, floor_bytes, layout.num_gpus, spec_);
      if (excluded(m, floor_bytes, known)) {
        counts.skipped += static_cast<int64_t>(plans.size());
        index += static_cast<int64_t>(plans.size());
        continue;
      }
    }
    for (const StagePlan& plan : plans) {
      Candidate c = make_candidate(layout, block, plan);
      const int64_t i = index++;
      if (const std::string* reason = checker_.check(c)) {
        ++counts.invalid;
        ++counts.invalid_by_reason[*reason];
        continue;
      }
      ++counts.candidates;
      if (c.first_stage_layers > 0) ++counts.uneven_candidates;
      const double static_bytes = evaluator_.static_bound_bytes(c);
      if (static_bytes > budget_bytes_) {
        ++counts.pruned;
        ++counts.pruned_by_reason[kPrunedStaticMemory];
        continue;
      }
      if (floor_s > 0.0 &&
          excluded(metrics_for_time(floor_s, static_bytes, c.num_gpus, spec_), static_bytes, known)) {
        ++counts.bounded;
        continue;
      }
      CandidateMetrics bound;
      const Screening screening = evaluator_.screen(c, static_bytes, bound);
      ++counts.evaluated;
      if (!result.closest || bound.peak_bytes < result.closest->key.metrics.peak_bytes) {
        result.closest = ScoredCandidate{{i, bound}, c};
      }
      if (screening != Screening::kFits) {
        ++counts.infeasible;
        ++counts.infeasible_by_reason[screening == Screening::kExceedsCapacity
                                          ? kInfeasibleCapacity
                                          : kInfeasibleHeadroom];
        continue;
      }
      if (spec_.max_gpu_hours > 0.0 &&
          bound.gpu_hours * (1.0 - kBoundMargin) > spec_.max_gpu_hours) {
        ++counts.infeasible;
        ++counts.infeasible_by_reason[kInfeasibleGpuHours];
        continue;
      }
      ++counts.feasible;
      fits_.push_back({i, c, bound, false, false, false, false, {}});
    }
  }
  time_fits(known, result);
  return result;
}

void ClassWorker::time_fit(Fit& fit, ClassResult& result) {
  if (fit.timed) return;
  fit.exact = evaluator_.exact(fit.candidate);
  fit.timed = true;
  ++result.counts.timed;
  if (spec_.max_gpu_hours > 0.0 && fit.exact.gpu_hours > spec_.max_gpu_hours) {
    fit.over_gpu_hours = true;
    --result.counts.feasible;
    ++result.counts.infeasible;
    ++result.counts.infeasible_by_reason[kInfeasibleGpuHours];
    return;
  }
}

// The allocator replay's verdict (reserved memory), asked only of a plan that
// would enter the top K or the Pareto front: the screening's verdict counted
// allocated memory, a lower bound of the need.
bool ClassWorker::replayed_fits(Fit& fit, ClassResult& result) {
  if (!fit.replayed) {
    fit.fits = evaluator_.replay_fits(fit.candidate);
    fit.replayed = true;
    if (!fit.fits) ++result.counts.rejected_by_replay;
  }
  return fit.fits;
}

void ClassWorker::keep_local(const Fit& fit) {
  const ScoredCandidate s{{fit.index, fit.exact}, fit.candidate};
  if (spec_.diversity == SearchDiversity::kPerLayout) {
    for (ScoredCandidate& best : local_top_) {
      if (same_layout(best.candidate, s.candidate)) {
        if (ranks_before(s.key, best.key, spec_.objective)) best = s;
        return;
      }
    }
  }
  local_top_.push_back(s);
  local_top_ = best_of(std::move(local_top_), spec_.top_k, spec_.objective);
}

// Best bound first until K known plans beat every bound left, then along the
// memory axis until no plan left can join the Pareto front; then the points.
void ClassWorker::time_fits(const Incumbents& known, ClassResult& result) {
  std::vector<size_t> order(fits_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return ranks_before({fits_[a].index, fits_[a].bound}, {fits_[b].index, fits_[b].bound},
                        spec_.objective);
  });
  for (const size_t p : order) {
    Fit& f = fits_[p];
    if (out_of_top(f.bound, f.candidate, known)) continue;
    time_fit(f, result);
    // Out of the top by its exact metrics: no replay needed.
    if (f.over_gpu_hours || out_of_top(f.exact, f.candidate, known)) continue;
    if (replayed_fits(f, result)) keep_local(f);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Fit& x = fits_[a];
    const Fit& y = fits_[b];
    if (x.bound.peak_bytes != y.bound.peak_bytes) return x.bound.peak_bytes < y.bound.peak_bytes;
    if (x.timed != y.timed) return x.timed;
    if (x.bound.iteration_s != y.bound.iteration_s) return x.bound.iteration_s < y.bound.iteration_s;
    return x.index < y.index;
  });
  double fastest_s = std::numeric_limits<double>::infinity();
  for (const size_t p : order) {
    Fit& f = fits_[p];
    const double known_s = std::min(fastest_s, known.fastest_within(f.bound.peak_bytes));
    if (!f.timed) {
      if (known_s < f.bound.iteration_s * (1.0 - kBoundMargin)) continue;
      time_fit(f, result);
    }
    // Slower than a fitting plan with no more memory: off the front whether it
    // fits or not, so no replay (and leaving it out of `timed` changes no front).
    if (f.over_gpu_hours || f.exact.iteration_s > known_s) continue;
    if (replayed_fits(f, result)) fastest_s = std::min(fastest_s, f.exact.iteration_s);
  }
  std::vector<ScoredCandidate> timed;
  for (Fit& f : fits_) {
    if (point_hash(f.index) < point_threshold_) {
      time_fit(f, result);
      if (!f.over_gpu_hours && replayed_fits(f, result)) {
        result.points.push_back({{f.index, f.exact}, f.candidate});
      }
    }
    // Only replayed plans that fit rank (a timed plan not replayed is out of both lists).
    if (f.timed && !f.over_gpu_hours && f.replayed && f.fits) {
      timed.push_back({{f.index, f.exact}, f.candidate});
    }
  }
  result.top = local_top_;
  result.front = front_of(timed);
}

}  // namespace trainsim
