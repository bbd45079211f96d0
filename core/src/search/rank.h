// Ranking of evaluated plans: the objective, then lower peak memory, then
// enumeration order (so equal plans always come out in the same order), and
// the Pareto front of peak memory vs step time.
#pragma once

#include <cstdint>
#include <vector>

#include "search/search_spec.h"

namespace trainsim {

struct CandidateMetrics {
  double iteration_s = 0.0;
  double peak_bytes = 0.0;
  double tokens_per_s_per_gpu = 0.0;
  double mfu = 0.0;
  double time_to_train_s = 0.0;  ///< 0 without training.train_tokens
  double gpu_hours = 0.0;        ///< to train train_tokens; 0 without them
};

struct RankKey {
  int64_t index = 0;  ///< combination index (enumeration order)
  CandidateMetrics metrics;
};

// The objective's figure, smaller is better (tokens/s per GPU negated).
double objective_cost(const CandidateMetrics& m, SearchObjective objective);

bool ranks_before(const RankKey& a, const RankKey& b, SearchObjective objective);

// Rounding slack between a bound and the exact figure it bounds (both sum the
// same times in different orders).
inline constexpr double kBoundMargin = 1e-9;

// True when every plan whose figures are at least as bad as `bound` (a lower
// bound of its time) ranks after `known` by the objective.
bool cannot_beat(const CandidateMetrics& bound, const CandidateMetrics& known,
                 SearchObjective objective);

// Positions of the best k keys, best first.
std::vector<size_t> top_positions(const std::vector<RankKey>& keys, int64_t k,
                                  SearchObjective objective);

// Positions of the keys no other key beats on both peak memory and step time
// (of equal points the first in enumeration order), by ascending peak memory.
std::vector<size_t> pareto_positions(const std::vector<RankKey>& keys);

// The figures of a plan whose step time is `iteration_s`, as the estimator
// derives them (time/step_time.cpp, fill_throughput): tokens per step are the
// search's (global batch x seq_len). For bounds: a lower bound of the time
// gives upper bounds of the throughputs and lower bounds of the costs.
CandidateMetrics metrics_for_time(double iteration_s, double peak_bytes, int64_t num_gpus,
                                  const SearchSpec& spec);

}  // namespace trainsim
