#include "search/batch_resolve.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "search/choices.h"

namespace trainsim {

bool same_layout(const Candidate& a, const Candidate& b) {
  const auto& dimensions = choice_dimensions();
  for (size_t d = 0; d < dimensions.size(); ++d) {
    if (dimensions[d].in_layout && a.choice[d] != b.choice[d]) return false;
  }
  return true;
}

void FitJudge::time(FitPlan& fit, SearchCounts& counts) {
  if (fit.timed) return;
  fit.exact = evaluator_.exact(fit.candidate);
  fit.timed = true;
  ++counts.timed;
  if (spec_.max_gpu_hours > 0.0 && fit.exact.gpu_hours > spec_.max_gpu_hours) {
    fit.over_gpu_hours = true;
    --counts.feasible;
    ++counts.infeasible;
    ++counts.infeasible_by_reason[kInfeasibleGpuHours];
  }
}

bool FitJudge::fits(FitPlan& fit, SearchCounts& counts) {
  if (!fit.replayed) {
    fit.fits = evaluator_.replay_fits(fit.candidate);
    fit.replayed = true;
    ++counts.replayed;
    if (!fit.fits) ++counts.rejected_by_replay;
  }
  return fit.fits;
}

namespace {

ScoredCandidate scored(const FitPlan& f) { return {{f.index, f.exact}, f.candidate}; }

// One class's plans in order of their exact rank, timed lazily: a plan is
// handed out once no plan left untimed can beat it (bounds in rank order).
class ClassStream {
 public:
  ClassStream(const SearchSpec& spec, std::vector<FitPlan>& fits) : spec_(spec), fits_(fits) {
    order_.resize(fits.size());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    std::sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
      return ranks_before({fits_[a].index, fits_[a].bound}, {fits_[b].index, fits_[b].bound},
                          spec_.objective);
    });
  }

  // The best plan left whose exact metrics may still rank (`skip`: true for a
  // bound that cannot, which stays true as the search goes on), or null.
  template <class Skip>
  FitPlan* head(FitJudge& judge, SearchCounts& counts, const Skip& skip) {
    for (; next_ < order_.size(); ++next_) {
      FitPlan& f = fits_[order_[next_]];
      if (best_ && cannot_beat(f.bound, best_->exact, spec_.objective)) break;
      if (skip(f, f.bound)) continue;
      judge.time(f, counts);
      if (f.over_gpu_hours) continue;
      pending_.push_back(&f);
      if (!best_ || ranks_before({f.index, f.exact}, {best_->index, best_->exact}, spec_.objective)) {
        best_ = &f;
      }
    }
    return best_;
  }

  void pop() {
    pending_.erase(std::find(pending_.begin(), pending_.end(), best_));
    best_ = nullptr;
    for (FitPlan* f : pending_) {
      if (!best_ || ranks_before({f->index, f->exact}, {best_->index, best_->exact}, spec_.objective)) {
        best_ = f;
      }
    }
  }

 private:
  const SearchSpec& spec_;
  std::vector<FitPlan>& fits_;
  std::vector<size_t> order_;  ///< by bound, best first
  size_t next_ = 0;
  std::vector<FitPlan*> pending_;  ///< timed, not handed out
  FitPlan* best_ = nullptr;        ///< the best of pending_
};

// The merged top K: heads of every class in rank order, each replayed, until K
// known plans beat the next head.
void resolve_top(const SearchSpec& spec, std::vector<ClassResult>& results, size_t size,
                 const Incumbents& known, FitJudge& judge, ClassResult& verified) {
  std::vector<ClassStream> streams;
  streams.reserve(size);
  for (size_t c = 0; c < size; ++c) streams.emplace_back(spec, results[c].fits);
  std::vector<size_t> owner;  // the class of each verified entry
  const bool per_layout = spec.diversity == SearchDiversity::kPerLayout;
  auto beating = [&](const CandidateMetrics& bound) {
    int64_t n = known.beating(bound);
    for (const ScoredCandidate& s : verified.top) n += cannot_beat(bound, s.key.metrics, spec.objective);
    return n;
  };
  // Per layout, a class's plans after its layout's best (handed out first: the
  // plans still in its stream rank after it). Layouts never span classes.
  auto layout_taken = [&](size_t c, const FitPlan& f) {
    if (!per_layout) return false;
    for (size_t i = 0; i < verified.top.size(); ++i) {
      if (owner[i] == c && same_layout(verified.top[i].candidate, f.candidate)) return true;
    }
    return false;
  };
  for (;;) {
    FitPlan* best = nullptr;
    size_t from = 0;
    for (size_t c = 0; c < size; ++c) {
      const auto skip = [&](const FitPlan& f, const CandidateMetrics& bound) {
        return beating(bound) >= spec.top_k || layout_taken(c, f);
      };
      FitPlan* h = streams[c].head(judge, verified.counts, skip);
      if (h && (!best || ranks_before({h->index, h->exact}, {best->index, best->exact},
                                      spec.objective))) {
        best = h;
        from = c;
      }
    }
    if (!best || beating(best->exact) >= spec.top_k) break;
    streams[from].pop();
    if (layout_taken(from, *best)) continue;
    if (!judge.fits(*best, verified.counts)) continue;
    verified.top.push_back(scored(*best));
    owner.push_back(from);
  }
}

// The merged front: every plan of the batch by ascending memory, replayed
// when it is faster than every plan known to fit with no more memory.
void resolve_front(std::vector<ClassResult>& results, size_t size, const Incumbents& known,
                   FitJudge& judge, ClassResult& verified) {
  std::vector<FitPlan*> all;
  for (size_t c = 0; c < size; ++c) {
    for (FitPlan& f : results[c].fits) all.push_back(&f);
  }
  std::sort(all.begin(), all.end(), [](const FitPlan* x, const FitPlan* y) {
    if (x->bound.peak_bytes != y->bound.peak_bytes) return x->bound.peak_bytes < y->bound.peak_bytes;
    if (x->timed != y->timed) return x->timed;
    if (x->bound.iteration_s != y->bound.iteration_s) {
      return x->bound.iteration_s < y->bound.iteration_s;
    }
    return x->index < y->index;
  });
  double fastest_s = std::numeric_limits<double>::infinity();
  std::vector<ScoredCandidate> kept;
  for (FitPlan* f : all) {
    const double known_s = std::min(fastest_s, known.fastest_within(f->bound.peak_bytes));
    if (!f->timed && known_s < f->bound.iteration_s * (1.0 - kBoundMargin)) continue;
    judge.time(*f, verified.counts);
    // Slower than a plan that fits with no more memory: off the front, fitting or not.
    if (f->over_gpu_hours || f->exact.iteration_s > known_s) continue;
    if (!judge.fits(*f, verified.counts)) continue;
    fastest_s = std::min(fastest_s, f->exact.iteration_s);
    kept.push_back(scored(*f));
  }
  verified.front = front_of(kept);
}

}  // namespace

void resolve_batch(const SearchSpec& spec, std::vector<ClassResult>& results, size_t size,
                   const Collector& collector, FitJudge& judge, ClassResult& verified) {
  const Incumbents known = collector.incumbents();
  resolve_top(spec, results, size, known, judge, verified);
  resolve_front(results, size, known, judge, verified);
}

}  // namespace trainsim
