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

}  // namespace
