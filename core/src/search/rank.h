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
};

struct RankKey {
  int64_t index = 0;  ///< enumeration order
  CandidateMetrics metrics;
};

bool ranks_before(const RankKey& a, const RankKey& b, SearchObjective objective);

// Positions of the best k keys, best first.
std::vector<size_t> top_positions(const std::vector<RankKey>& keys, int64_t k,
                                  SearchObjective objective);

// Positions of the keys no other key beats on both peak memory and step time
// (of equal points the first in enumeration order), by ascending peak memory.
std::vector<size_t> pareto_positions(const std::vector<RankKey>& keys);

}  // namespace trainsim
