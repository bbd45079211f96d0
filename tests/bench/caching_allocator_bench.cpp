// Caching-allocator replay throughput (Google Benchmark; figures go to the
// README, never a pass/fail test). The trace imitates training steps: per
// step, each layer's forward allocates activation-sized tensors that stay
// live plus short-lived temporaries (freed LIFO), and the backward frees the
// stored activations in reverse while gradients come and go.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "memory/caching_allocator.h"

namespace {

using trainsim::AllocatorOptions;
using trainsim::AllocEvent;

std::vector<AllocEvent> training_like_trace(int64_t target_events) {
  std::mt19937_64 rng(7);
  constexpr int64_t kAllocMiB = trainsim::kAllocMiB;
  // Activation-like sizes: a few hidden-sized tensors (seq * hidden * 2 B at
  // slightly varying sequence lengths), MLP-wide ones, and small bias/norm ones.
  const auto activation = [&rng]() -> int64_t {
    const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
    const int64_t seq = 4096 - 64 * std::uniform_int_distribution<int64_t>(0, 3)(rng);
    if (kind < 5) return seq * 4096 * 2;                            // ~32 MiB
    if (kind < 8) return seq * 14336 * 2;                           // ~112 MiB
    return std::uniform_int_distribution<int64_t>(256, kAllocMiB)(rng);  // small
  };
  std::vector<AllocEvent> trace;
  trace.reserve(static_cast<size_t>(target_events) + 1024);
  int64_t next_id = 0;
  std::vector<int64_t> stored;
  while (static_cast<int64_t>(trace.size()) < target_events) {
    for (int layer = 0; layer < 32; ++layer) {  // forward
      for (int t = 0; t < 4; ++t) {
        const int64_t id = next_id++;
        trace.push_back({id, activation(), false});
        stored.push_back(id);
      }
      const int64_t tmp_a = next_id++;
      const int64_t tmp_b = next_id++;
      trace.push_back({tmp_a, activation(), false});
      trace.push_back({tmp_b, activation(), false});
      trace.push_back({tmp_b, 0, true});
      trace.push_back({tmp_a, 0, true});
    }
    while (!stored.empty()) {  // backward: gradients in, stored activations out
      const int64_t grad = next_id++;
      trace.push_back({grad, activation(), false});
      trace.push_back({stored.back(), 0, true});
      stored.pop_back();
      trace.push_back({grad, 0, true});
    }
  }
  return trace;
}

void BM_ReplayTrainingLikeTrace(benchmark::State& state, bool expandable) {
  const std::vector<AllocEvent> trace = training_like_trace(state.range(0));
  AllocatorOptions options;
  options.expandable_segments = expandable;
  options.capacity_bytes = int64_t{80} << 30;
  options.timeline_points = 512;
  int64_t reserved = 0;
  for (auto _ : state) {
    const trainsim::AllocatorReplay r = trainsim::replay(trace, options);
    reserved = r.stats.peak_reserved_bytes;
    benchmark::DoNotOptimize(reserved);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(trace.size()));
  state.counters["events"] = static_cast<double>(trace.size());
  state.counters["peak_reserved_GiB"] = static_cast<double>(reserved) / (1 << 30);
}
BENCHMARK_CAPTURE(BM_ReplayTrainingLikeTrace, cudaMalloc_segments, false)
    ->Arg(100000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReplayTrainingLikeTrace, expandable_segments, true)
    ->Arg(100000)
    ->Arg(1000000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
