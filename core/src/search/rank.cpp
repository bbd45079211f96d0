#include "search/rank.h"

#include <algorithm>
#include <numeric>

namespace trainsim {

bool ranks_before(const RankKey& a, const RankKey& b, SearchObjective objective) {
  const CandidateMetrics& x = a.metrics;
  const CandidateMetrics& y = b.metrics;
  if (objective == SearchObjective::kStepTime) {
    if (x.iteration_s != y.iteration_s) return x.iteration_s < y.iteration_s;
  } else if (x.tokens_per_s_per_gpu != y.tokens_per_s_per_gpu) {
    return x.tokens_per_s_per_gpu > y.tokens_per_s_per_gpu;
  }
  if (x.peak_bytes != y.peak_bytes) return x.peak_bytes < y.peak_bytes;
  return a.index < b.index;
}

std::vector<size_t> top_positions(const std::vector<RankKey>& keys, int64_t k,
                                  SearchObjective objective) {
  std::vector<size_t> order(keys.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const size_t count = std::min(order.size(), static_cast<size_t>(std::max<int64_t>(k, 0)));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count), order.end(),
                    [&](size_t a, size_t b) { return ranks_before(keys[a], keys[b], objective); });
  order.resize(count);
  return order;
}

std::vector<size_t> pareto_positions(const std::vector<RankKey>& keys) {
  std::vector<size_t> order(keys.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const CandidateMetrics& x = keys[a].metrics;
    const CandidateMetrics& y = keys[b].metrics;
    if (x.peak_bytes != y.peak_bytes) return x.peak_bytes < y.peak_bytes;
    if (x.iteration_s != y.iteration_s) return x.iteration_s < y.iteration_s;
    return keys[a].index < keys[b].index;
  });
  std::vector<size_t> front;
  for (const size_t position : order) {
    // Sorted by memory: a point is on the front when it is faster than every
    // point before it.
    if (front.empty() ||
        keys[position].metrics.iteration_s < keys[front.back()].metrics.iteration_s) {
      front.push_back(position);
    }
  }
  return front;
}

}  // namespace trainsim
