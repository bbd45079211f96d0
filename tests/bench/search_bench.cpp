// Strategy search speed (Google Benchmark; figures go to README, never a
// pass/fail test): a 70B dense model on 1024 GPUs (all degrees, 4 micro-batch
// sizes, 4 recompute modes), and the frontier-scale searches: DeepSeek-V3 on
// 1024 GPUs with uneven stages, DeepSeek-V3 over 512-4096 GPUs, Llama-3-405B
// on 1024 GPUs with every default. peak_rss_mib is the process's peak
// resident memory (getrusage): run one benchmark per process
// (--benchmark_filter) to read it per search.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

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

const char* kDeepSeekV3On1024Gpus = R"({
  "model": "deepseek-v3", "system": "h100-sxm-80gb", "num_gpus": 1024,
  "global_batch_size": 4096, "seq_len": 4096,
  "constraints": {"uneven_stages": true}
})";

const char* kDeepSeekV3On512To4096Gpus = R"({
  "model": "deepseek-v3", "system": "h100-sxm-80gb", "num_gpus": [512, 1024, 2048, 4096],
  "global_batch_size": 4096, "seq_len": 4096
})";

const char* kLlama405bOn1024Gpus = R"({
  "model": "llama3-405b", "system": "h100-sxm-80gb", "num_gpus": 1024,
  "global_batch_size": 2048, "seq_len": 8192
})";

double peak_rss_mib() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: KiB
}

trainsim::schema::SearchRequest parse(const char* text) {
  trainsim::schema::SearchRequest request;
  trainsim::Issues issues;
  trainsim::schema::read_search_request(text, request, issues);
  return request;
}

// Per search: candidates, evaluated (memory estimated, step time at least
// bounded), timed (pipeline simulated); candidates per second over all runs.
void add_counters(benchmark::State& state, const trainsim::SearchCounts& c) {
  state.counters["combinations"] = static_cast<double>(c.considered);
  state.counters["candidates"] = static_cast<double>(c.candidates);
  state.counters["skipped"] = static_cast<double>(c.skipped + c.bounded);
  state.counters["evaluated"] = static_cast<double>(c.evaluated);
  state.counters["timed"] = static_cast<double>(c.timed);
  state.counters["feasible"] = static_cast<double>(c.feasible);
  state.counters["replay_rejected"] = static_cast<double>(c.rejected_by_replay);
  state.counters["replayed"] = static_cast<double>(c.replayed);
  state.counters["peak_rss_mib"] = peak_rss_mib();
}

// The whole search from a parsed document on `threads` threads: counting,
// floors, validation, pruning, estimates, ranking and the full estimates of the top 10.
void search(benchmark::State& state, const char* text, bool points = false) {
  const trainsim::schema::SearchRequest request = parse(text);
  trainsim::SearchOptions options;
  options.threads = static_cast<int>(state.range(0));
  options.points = points;
  trainsim::SearchCounts counts;
  for (auto _ : state) {
    const trainsim::SearchOutcome out = trainsim::run_search(request.spec, {}, options);
    counts = out.counts;
    benchmark::DoNotOptimize(out.top.data());
  }
  add_counters(state, counts);
}

void BM_SearchLlama70bOn1024Gpus(benchmark::State& state) { search(state, kLlama70bOn1024Gpus); }
BENCHMARK(BM_SearchLlama70bOn1024Gpus)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same with the scatter's points sample, as the page asks for it (include_points): every
// sampled plan that fits is timed and gets the memory verdict with the allocator replay.
void BM_SearchLlama70bOn1024GpusWithPoints(benchmark::State& state) {
  search(state, kLlama70bOn1024Gpus, true);
}
BENCHMARK(BM_SearchLlama70bOn1024GpusWithPoints)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SearchDeepSeekV3UnevenOn1024Gpus(benchmark::State& state) {
  search(state, kDeepSeekV3On1024Gpus);
}
BENCHMARK(BM_SearchDeepSeekV3UnevenOn1024Gpus)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SearchDeepSeekV3On512To4096Gpus(benchmark::State& state) {
  search(state, kDeepSeekV3On512To4096Gpus);
}
BENCHMARK(BM_SearchDeepSeekV3On512To4096Gpus)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_SearchLlama405bOn1024Gpus(benchmark::State& state) { search(state, kLlama405bOn1024Gpus); }
BENCHMARK(BM_SearchLlama405bOn1024Gpus)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same through the string API (parse, count, search, JSON of the top 10 with full results).
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
      benchmark::DoNotOptimize(evaluator.screen(c, evaluator.static_bound_bytes(c), metrics));
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
