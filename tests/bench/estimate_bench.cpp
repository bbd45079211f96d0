// Estimate latency (Google Benchmark; figures go to README, never a pass/fail test).
#include <benchmark/benchmark.h>

#include <string>

#include "trainsim/trainsim.h"

namespace {

const char* kLlama70bConfig = R"({
  "model": {"preset": "llama3-8b", "num_layers": 80, "hidden_size": 8192, "num_attention_heads": 64,
            "ffn_hidden_size": 28672},
  "training": {"seq_len": 8192, "micro_batch_size": 1, "global_batch_size": 1024, "tp": 8, "pp": 4,
               "sequence_parallel": true, "recompute": {"granularity": "selective"}},
  "system": {"preset": "h100-sxm-80gb", "num_gpus": 1024}
})";

// Issue "Time model": a 128-layer MoE model with pp=16, vpp=2 and 64 micro-batches
// (the full pipeline simulation and timeline included) must stay under 1 ms.
const char* kMoe128Config = R"({
  "model": {"preset": "deepseek-v3", "num_layers": 128},
  "training": {"seq_len": 4096, "micro_batch_size": 1, "num_micro_batches": 64, "tp": 1, "pp": 16,
               "vpp": 2, "ep": 8, "recompute": {"granularity": "selective", "modules": ["moe_act"]}},
  "system": {"preset": "h100-sxm-80gb", "num_gpus": 128}
})";

void BM_EstimateMoe128LayersPp16Vpp2Mb64(benchmark::State& state) {
  trainsim::Config config;
  trainsim::Issues issues;
  if (!trainsim::parse_config(kMoe128Config, config, issues)) {
    state.SkipWithError("config did not parse");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(trainsim::estimate(config));
}
BENCHMARK(BM_EstimateMoe128LayersPp16Vpp2Mb64)->Unit(benchmark::kMicrosecond);

void BM_EstimateJsonMoe128LayersPp16Vpp2Mb64(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(trainsim::estimate_json(kMoe128Config));
}
BENCHMARK(BM_EstimateJsonMoe128LayersPp16Vpp2Mb64)->Unit(benchmark::kMicrosecond);

void BM_EstimateJson80Layers(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(trainsim::estimate_json(kLlama70bConfig));
}
BENCHMARK(BM_EstimateJson80Layers);

void BM_Estimate80LayersParsedOnce(benchmark::State& state) {
  trainsim::Config config;
  trainsim::Issues issues;
  if (!trainsim::parse_config(kLlama70bConfig, config, issues)) {
    state.SkipWithError("config did not parse");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(trainsim::estimate(config));
}
BENCHMARK(BM_Estimate80LayersParsedOnce);

// B200 carries measured per-shape GEMM tables (SimuMax's b200 configs): every
// GEMM pass not in the table is calibrated on them (time/gemm_calibration.h),
// whose string keys an estimate parses once (GemmCalibrationTables), not at
// every lookup.
const char* kB200MeasuredTablesConfig = R"({
  "model": {"preset": "llama3-8b", "num_layers": 80, "hidden_size": 8192, "num_attention_heads": 64,
            "ffn_hidden_size": 28672},
  "training": {"seq_len": 8192, "micro_batch_size": 1, "global_batch_size": 1024, "tp": 4, "pp": 4,
               "sequence_parallel": true},
  "system": {"preset": "b200-sxm-180gb", "num_gpus": 1024}
})";

void BM_EstimateB200MeasuredGemmTables(benchmark::State& state) {
  trainsim::Config config;
  trainsim::Issues issues;
  if (!trainsim::parse_config(kB200MeasuredTablesConfig, config, issues)) {
    state.SkipWithError("config did not parse");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(trainsim::estimate(config));
}
BENCHMARK(BM_EstimateB200MeasuredGemmTables)->Unit(benchmark::kMillisecond);

}  // namespace
