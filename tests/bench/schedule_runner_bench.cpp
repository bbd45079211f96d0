// Order generation and replay of every pipeline schedule (time/schedule_orders.h,
// time/schedule_runner.h); Google Benchmark, figures only, never a pass/fail test.
// The estimate budget is < 1 ms; pp 16 vpp 2 m 64 must replay far below it.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "time/schedule_orders.h"

namespace {

using trainsim::PipelineScheduleKind;

constexpr PipelineScheduleKind kKinds[] = {
    PipelineScheduleKind::kOneFOneB,     PipelineScheduleKind::kOneFOneB,
    PipelineScheduleKind::kZeroBubbleH1, PipelineScheduleKind::kZeroBubbleH2,
    PipelineScheduleKind::kZeroBubbleV,  PipelineScheduleKind::kDualPipe,
    PipelineScheduleKind::kDualPipeV};
constexpr int64_t kVpp[] = {1, 2, 1, 1, 2, 1, 2};  // the second 1f1b is interleaved

trainsim::ScheduleRunInput make_input(const trainsim::ScheduleOrders& o) {
  trainsim::ScheduleRunInput in;
  in.passes.resize(static_cast<size_t>(o.pp));
  for (int32_t r = 0; r < o.pp; ++r) {
    for (int32_t c = 0; c < o.num_chunks; ++c) {
      in.passes[static_cast<size_t>(r)].push_back({1e-3 * (10 + (3 * r + 5 * c) % 7),
                                                   1e-3 * (12 + (5 * r + 3 * c) % 11),
                                                   1e-3 * (8 + (r + c) % 5)});
    }
  }
  in.link_p2p_s.assign(static_cast<size_t>(o.pp), 3e-4);
  return in;
}

// Arguments: schedule index into kKinds, pp, micro-batches.
void BM_ScheduleOrders(benchmark::State& state) {
  const auto i = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        trainsim::make_schedule_orders(kKinds[i], state.range(1), kVpp[i], state.range(2)));
  }
  state.SetLabel(trainsim::pipeline_schedule_name(kKinds[i]));
}

void BM_ScheduleRun(benchmark::State& state) {
  const auto i = static_cast<size_t>(state.range(0));
  const trainsim::ScheduleOrders orders =
      trainsim::make_schedule_orders(kKinds[i], state.range(1), kVpp[i], state.range(2));
  const trainsim::ScheduleRunInput input = make_input(orders);
  for (auto _ : state) benchmark::DoNotOptimize(trainsim::run_schedule(orders, input));
  state.SetLabel(trainsim::pipeline_schedule_name(kKinds[i]));
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int64_t i = 0; i < 7; ++i) b->Args({i, 16, 256});
  b->Args({1, 16, 64});  // interleaved pp 16 vpp 2 m 64
  b->Args({4, 16, 64});  // zero_bubble_v pp 16 m 64
  b->Args({6, 16, 64});  // dualpipe_v pp 16 m 64
  b->ArgNames({"schedule", "pp", "m"});
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_ScheduleOrders)->Apply(Sizes);
BENCHMARK(BM_ScheduleRun)->Apply(Sizes);

}  // namespace
