#include "search/rank.h"

#include <algorithm>
#include <numeric>

namespace trainsim {

double objective_cost(const CandidateMetrics& m, SearchObjective objective) {
  switch (objective) {
    case SearchObjective::kStepTime:
      return m.iteration_s;
    case SearchObjective::kTokensPerSecondPerGpu:
      return -m.tokens_per_s_per_gpu;
    case SearchObjective::kTimeToTrain:
      return m.time_to_train_s;
    case SearchObjective::kGpuHours:
      return m.gpu_hours;
  }
  return m.iteration_s;
}

bool ranks_before(const RankKey& a, const RankKey& b, SearchObjective objective) {
  const double x = objective_cost(a.metrics, objective);
  const double y = objective_cost(b.metrics, objective);
  if (x != y) return x < y;
  if (a.metrics.peak_bytes != b.metrics.peak_bytes) {
    return a.metrics.peak_bytes < b.metrics.peak_bytes;
  }
  return a.index < b.index;
}

bool cannot_beat(const CandidateMetrics& bound, const CandidateMetrics& known,
                 SearchObjective objective) {
  const double cost = objective_cost(bound, objective);
  const double margin = kBoundMargin * std::abs(cost);
  return cost - margin > objective_cost(known, objective);
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

CandidateMetrics metrics_for_time(double iteration_s, double peak_bytes, int64_t num_gpus,
                                  const SearchSpec& spec) {
  CandidateMetrics m;
  m.iteration_s = iteration_s;
  m.peak_bytes = peak_bytes;
  const double tokens_per_step =
      static_cast<double>(spec.global_batch_size) * static_cast<double>(spec.training.seq_len);
  const double gpus = static_cast<double>(num_gpus);
  m.tokens_per_s_per_gpu = iteration_s > 0.0 ? tokens_per_step / iteration_s / gpus : 0.0;
  if (spec.training.train_tokens > 0.0 && tokens_per_step > 0.0) {
    m.time_to_train_s = spec.training.train_tokens / (tokens_per_step / iteration_s);
    m.gpu_hours = m.time_to_train_s * gpus / 3600.0;
  }
  return m;
}

}  // namespace trainsim
