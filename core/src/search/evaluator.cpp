#include "search/evaluator.h"

namespace trainsim {
namespace {

EstimateOptions fast_options(const SearchSpec& spec, double budget_bytes, bool lower_bound) {
  EstimateOptions options;
  options.memory_headroom = spec.memory_headroom;
  options.suggestions = false;
  // Without the replay reserved = allocated, a lower bound of the need; replay_fits()
  // replays the allocator for the plans that would enter the top K or the Pareto front.
  options.allocator_replay = false;
  options.memory_need = false;  // a plan that does not fit is dropped: how much it needs is moot
  options.timeline = false;
  options.reference_formulas = false;
  options.model_summary = false;
  options.describe = false;
  options.time_lower_bound = lower_bound;
  options.time_only_within_bytes = budget_bytes;
  return options;
}

}  // namespace

Screening memory_screening(const Estimate& e) {
  if (e.memory.verdict.status == "fits") return Screening::kFits;
  return e.fits ? Screening::kExceedsHeadroom : Screening::kExceedsCapacity;
}

CandidateMetrics metrics_of(const Estimate& e) {
  return {e.time.iteration_s,          e.memory.peak_bytes, e.throughput.tokens_per_s_per_gpu,
          e.throughput.mfu,            e.throughput.time_to_train_s,
          e.throughput.gpu_hours_to_train};
}

CandidateEvaluator::CandidateEvaluator(const SearchSpec& spec, double memory_budget_bytes)
    : spec_(spec),
      budget_bytes_(memory_budget_bytes),
      bound_(spec.model),
      config_(base_config(spec)) {}

BlockCache& CandidateEvaluator::cache_for(const Candidate& c) {
  // Candidates with equal values here have identical op lists (BlockCache's
  // contract): the model, seq_len, dtype and training template are the spec's.
  const OpKey key{c.tp, c.cp, c.ep, c.etp, c.sequence_parallel, c.micro_batch_size, c.recompute,
                  c.choice};
  auto found = caches_.find(key);
  if (found != caches_.end()) return found->second;
  if (caches_.size() >= kMaxCaches) caches_.clear();  // memory stays bounded
  return caches_[key];
}

double CandidateEvaluator::static_bound_bytes(const Candidate& c) {
  apply_candidate(spec_, c, config_);
  return bound_.lower_bound_bytes(config_);
}

Screening CandidateEvaluator::screen(const Candidate& c, double static_bytes,
                                     CandidateMetrics& bound) {
  if (static_bytes > budget_bytes_) return Screening::kPruned;
  apply_candidate(spec_, c, config_);
  const Estimate e = estimate_with(config_, fast_options(spec_, budget_bytes_, true), &cache_for(c));
  const Screening screening = memory_screening(e);
  bound = metrics_of(e);
  return screening;
}

CandidateMetrics CandidateEvaluator::exact(const Candidate& c) {
  apply_candidate(spec_, c, config_);
  return metrics_of(estimate_with(config_, fast_options(spec_, 0.0, false), &cache_for(c)));
}

bool CandidateEvaluator::replay_fits(const Candidate& c) {
  apply_candidate(spec_, c, config_);
  return replayed_memory_fits(config_, spec_.memory_headroom, &cache_for(c));
}

Estimate CandidateEvaluator::time_bound(const Candidate& c) {
  apply_candidate(spec_, c, config_);
  return estimate_with(config_, fast_options(spec_, 0.0, true), &cache_for(c));
}

Estimate CandidateEvaluator::full(const Candidate& c) {
  apply_candidate(spec_, c, config_);
  EstimateOptions options;
  options.timeline = false;
  options.memory_headroom = spec_.memory_headroom;
  return estimate_with(config_, options, nullptr);
}

}  // namespace trainsim
