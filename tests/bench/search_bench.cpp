// Strategy search speed (Google Benchmark; figures go to README, never a
// pass/fail test). Issue "Strategy search and what-if": >= 100,000 candidate
// evaluations per second on one core, and a full search for a 70B dense model
// on 1024 GPUs (all degrees, 4 micro-batch sizes, 4 recompute modes) < 1 s.
#include <benchmark/benchmark.h>

#include <string>

#include "schema/search_request.h"
#include "search/enumerate.h"
#include "search/evaluator.h"
#include "search/search.h"
#include "trainsim/trainsim.h"

namespace {

const char* kLlama70bOn1024Gpus = R"({
  "model": "llama3-70b", "system": "h100-sxm-80gb", "num_gpus": 1024,
  "global_batch_size": 1024, "seq_len": 8192,
  "constraints": {
    "micro_batch_size": [1, 2, 4, 8],
    "recompute": [{"granularity": "none"}, {"granularity": "selective"},
                  {"granularity": "selective", "modules": ["core_attn", "mlp"]},
                  {"granularity": "full", "method": "uniform", "num_layers": 1}]}
})";

trainsim::schema::SearchRequest parse(const char* text) {
  trainsim::schema::SearchRequest request;
  trainsim::Issues issues;
  trainsim::schema::read_search_request(text, request, issues);
  return request;
}

// Per search: candidates, evaluated (memory estimated, step time at least
// bounded), timed (pipeline simulated); candidates per second over all runs.
void add_counters(benchmark::State& state, const trainsim::SearchCounts& c) {
  state.counters["candidates"] = static_cast<double>(c.candidates);
  state.counters["evaluated"] = static_cast<double>(c.evaluated);
  state.counters["timed"] = static_cast<double>(c.timed);
  state.counters["candidates_per_s"] = benchmark::Counter(
      static_cast<double>(c.candidates) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}

// The whole search from a parsed document: enumeration, pruning, estimates,
// ranking and the full estimates of the top 10.
void BM_SearchLlama70bOn1024Gpus(benchmark::State& state) {
  const trainsim::schema::SearchRequest request = parse(kLlama70bOn1024Gpus);
  trainsim::SearchCounts counts;
  for (auto _ : state) {
    const trainsim::SearchOutcome out = trainsim::run_search(request.spec, {}, false);
    counts = out.counts;
    benchmark::DoNotOptimize(out.top.data());
  }
  add_counters(state, counts);
}
BENCHMARK(BM_SearchLlama70bOn1024Gpus)->Unit(benchmark::kMillisecond);

// The same through the string API (parse, search, JSON of the top 10 with full results).
void BM_SearchJsonLlama70bOn1024Gpus(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(trainsim::search_json(kLlama70bOn1024Gpus));
}
BENCHMARK(BM_SearchJsonLlama70bOn1024Gpus)->Unit(benchmark::kMillisecond);

// Enumeration alone (every combination through validate()).
void BM_EnumerateLlama70bOn1024Gpus(benchmark::State& state) {
  const trainsim::schema::SearchRequest request = parse(kLlama70bOn1024Gpus);
  for (auto _ : state) {
    benchmark::DoNotOptimize(trainsim::enumerate_candidates(request.spec).candidates.data());
  }
}
BENCHMARK(BM_EnumerateLlama70bOn1024Gpus)->Unit(benchmark::kMillisecond);

// Candidate evaluations as the search does them: static-memory bound, op-level
// memory and a step-time lower bound, over every valid candidate of the search.
void BM_CandidateScreening(benchmark::State& state) {
  const trainsim::schema::SearchRequest request = parse(kLlama70bOn1024Gpus);
  const auto candidates = trainsim::enumerate_candidates(request.spec).candidates;
  trainsim::CandidateEvaluator evaluator(request.spec, request.spec.system.gpu.hbm_capacity_bytes);
  for (auto _ : state) {
    for (const trainsim::Candidate& c : candidates) {
      trainsim::CandidateMetrics metrics;
      benchmark::DoNotOptimize(evaluator.screen(c, metrics));
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(candidates.size()));
}
BENCHMARK(BM_CandidateScreening)->Unit(benchmark::kMillisecond);

// Exact estimates (op-level memory and the simulated pipeline, no timeline)
// of every valid candidate, fitting or not.
void BM_CandidateExactEstimates(benchmark::State& state) {
  const trainsim::schema::SearchRequest request = parse(kLlama70bOn1024Gpus);
  const auto candidates = trainsim::enumerate_candidates(request.spec).candidates;
  trainsim::CandidateEvaluator evaluator(request.spec, request.spec.system.gpu.hbm_capacity_bytes);
  for (auto _ : state) {
    for (const trainsim::Candidate& c : candidates) {
      benchmark::DoNotOptimize(evaluator.exact(c).iteration_s);
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(candidates.size()));
}
BENCHMARK(BM_CandidateExactEstimates)->Unit(benchmark::kMillisecond);

}  // namespace
