// Pipeline schedule replay latency (Google Benchmark; figures go to README, never a
// pass/fail test). The estimate budget is < 1 ms, so one replay must stay far below.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "time/pipeline_schedule.h"

namespace {

trainsim::ScheduleInput make_input(int64_t pp, int64_t vpp, int64_t num_micro_batches,
                                   bool record_timeline) {
  trainsim::ScheduleInput input;
  input.num_micro_batches = num_micro_batches;
  input.record_timeline = record_timeline;
  input.phases.assign(static_cast<size_t>(pp),
                      std::vector<trainsim::PhaseTimes>(static_cast<size_t>(vpp)));
  for (int64_t s = 0; s < pp; ++s) {
    for (int64_t c = 0; c < vpp; ++c) {
      input.phases[s][c] = {1e-3 * static_cast<double>(10 + (3 * s + 5 * c) % 7),
                            1e-3 * static_cast<double>(20 + (5 * s + 3 * c) % 11)};
    }
  }
  input.p2p.assign(static_cast<size_t>(pp), {3e-4, 3e-4, 3e-4, 3e-4});
  input.interleaved_p2p_s = 3e-4;
  return input;
}

void BM_InterleavedPp16Vpp2M64(benchmark::State& state) {
  const trainsim::ScheduleInput input = make_input(16, 2, 64, state.range(0) != 0);
  for (auto _ : state) benchmark::DoNotOptimize(trainsim::simulate_pipeline(input));
}
BENCHMARK(BM_InterleavedPp16Vpp2M64)
    ->Arg(0)
    ->Arg(1)
    ->ArgName("timeline")
    ->Unit(benchmark::kMicrosecond);

void BM_OneFOneBPp16M64(benchmark::State& state) {
  const trainsim::ScheduleInput input = make_input(16, 1, 64, state.range(0) != 0);
  for (auto _ : state) benchmark::DoNotOptimize(trainsim::simulate_pipeline(input));
}
BENCHMARK(BM_OneFOneBPp16M64)->Arg(0)->Arg(1)->ArgName("timeline")->Unit(benchmark::kMicrosecond);

}  // namespace
