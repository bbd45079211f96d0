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

}  // namespace

ClassWorker::ClassWorker(const SearchSpec& spec, const SearchSpace& space,
                         const SearchFloors& floors, double memory_budget_bytes, bool use_floors,
                         bool points, bool replay_all)
    : spec_(spec),
      space_(space),
      floors_(floors),
      budget_bytes_(memory_budget_bytes),
      use_floors_(use_floors),
      replay_all_(replay_all),
      point_threshold_(points ? points_threshold(space.combinations()) : 0),
      checker_(spec),
      evaluator_(spec, memory_budget_bytes),
      judge_(spec, evaluator_),
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
  local_top_.clear();
  const std::vector<StagePlan>& plans = space_.stage_plans(layout.pp);
  int64_t index = layout.first_index;
  for (const SubBlock& block : space_.sub_blocks(layout)) {
    const double floor_s = use_floors_ ? floors_.time_floor_s(layout, block) : 0.0;
    if (floor_s > 0.0) {
      const double floor_bytes = static_floor_bytes(spec_, bound_, scratch_, layout, block);
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
      result.fits.push_back({i, c, bound, false, false, false, false, {}});
    }
  }
  time_fits(known, result);
  return result;
}

void ClassWorker::keep_local(const FitPlan& fit) {
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
// memory axis until no plan left can join the Pareto front, as if every timed
// plan fitted (the batch's resolution decides with the replay); then the points.
// With replay_all every plan that fits is timed and replayed (the brute-force path).
void ClassWorker::time_fits(const Incumbents& known, ClassResult& result) {
  std::vector<FitPlan>& fits = result.fits;
  SearchCounts& counts = result.counts;
  if (replay_all_) {
    for (FitPlan& f : fits) {
      judge_.time(f, counts);
      if (!f.over_gpu_hours) judge_.fits(f, counts);
    }
  }
  std::vector<size_t> order(fits.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return ranks_before({fits[a].index, fits[a].bound}, {fits[b].index, fits[b].bound},
                        spec_.objective);
  });
  for (const size_t p : order) {
    FitPlan& f = fits[p];
    if (out_of_top(f.bound, f.candidate, known)) continue;
    judge_.time(f, counts);
    if (f.over_gpu_hours || (f.replayed && !f.fits)) continue;
    if (!out_of_top(f.exact, f.candidate, known)) keep_local(f);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const FitPlan& x = fits[a];
    const FitPlan& y = fits[b];
    if (x.bound.peak_bytes != y.bound.peak_bytes) return x.bound.peak_bytes < y.bound.peak_bytes;
    if (x.timed != y.timed) return x.timed;
    if (x.bound.iteration_s != y.bound.iteration_s) return x.bound.iteration_s < y.bound.iteration_s;
    return x.index < y.index;
  });
  double fastest_s = std::numeric_limits<double>::infinity();
  for (const size_t p : order) {
    FitPlan& f = fits[p];
    const double known_s = std::min(fastest_s, known.fastest_within(f.bound.peak_bytes));
    if (!f.timed) {
      if (known_s < f.bound.iteration_s * (1.0 - kBoundMargin)) continue;
      judge_.time(f, counts);
    }
    if (f.over_gpu_hours || (f.replayed && !f.fits)) continue;
    fastest_s = std::min(fastest_s, f.exact.iteration_s);
  }
  // The points: a sample of the timed plans that fit by the screening's verdict
  // (allocated memory; the replay is kept for the plans that rank).
  for (FitPlan& f : fits) {
    if (point_hash(f.index) >= point_threshold_) continue;
    judge_.time(f, counts);
    if (!f.over_gpu_hours) result.points.push_back({{f.index, f.exact}, f.candidate});
  }
}

}  // namespace trainsim
