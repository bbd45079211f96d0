// The search returns what estimating every valid candidate one by one gives:
// the same top K (plans, order and figures), the same Pareto front, the same
// feasible / infeasible counts, and pruning never drops a plan that fits.
#include <gtest/gtest.h>

#include <algorithm>

#include "report/search_result.h"
#include "schema/search_request.h"
#include "search/enumerate.h"
#include "search/memory_bound.h"
#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

struct BruteForceCase {
  const char* name;
  const char* search;
};

// Small models on 8-16 GPUs: dense, MLA + MoE, Mixtral MoE, uneven stages,
// a memory headroom, the tokens/s objective.
const BruteForceCase kCases[] = {
    {"dense_llama_16_gpus", R"({"model": {"preset": "llama3-8b", "num_layers": 8},
        "system": "h100-sxm-80gb", "num_gpus": 16, "global_batch_size": 64, "seq_len": 4096,
        "top_k": 5, "constraints": {"zero_stage": [0, 1, 2]}})"},
    {"dense_big_model_prunes", R"({"model": {"preset": "llama3-70b", "num_layers": 16},
        "system": "a100-sxm-80gb", "num_gpus": 8, "global_batch_size": 32, "seq_len": 4096,
        "top_k": 4, "constraints": {"recompute": [{"granularity": "none"},
          {"granularity": "full", "method": "block", "num_layers": "all"}]}})"},
    {"mla_moe_8_gpus", R"({"model": {"preset": "deepseek-v2-lite", "num_layers": 6},
        "system": "h100-sxm-80gb", "num_gpus": 8, "global_batch_size": 16, "seq_len": 2048,
        "top_k": 3, "constraints": {"micro_batch_size": [1, 2]}})"},
    {"mixtral_two_gpu_counts", R"({"model": {"preset": "mixtral-8x7b", "num_layers": 4},
        "system": "h100-sxm-80gb", "num_gpus": [8, 16], "global_batch_size": 32,
        "seq_len": 4096, "top_k": 6, "objective": "tokens_per_s_per_gpu",
        "constraints": {"micro_batch_size": [1, 2]}})"},
    {"uneven_with_headroom", R"({"model": {"preset": "llama3-8b", "num_layers": 10},
        "system": "h100-sxm-80gb", "num_gpus": 8, "global_batch_size": 32, "seq_len": 8192,
        "memory_headroom": 0.2, "top_k": 5,
        "constraints": {"uneven_stages": true, "sequence_parallel": "both"}})"},
};

class SearchBruteForceTest : public ::testing::TestWithParam<BruteForceCase> {};

// The memory verdict of an estimate under another headroom (memory/verdict.h).
bool fits_with_headroom(const Json& memory, double headroom) {
  const Json& verdict = memory["verdict"];
  if (verdict["status"] == "out_of_memory") return false;
  for (const Json& stage : memory["stages"]) {
    if (stage["allocator"]["alloc_retries"].get<int64_t>() > 0) return false;
  }
  return verdict["margin_bytes"].get<double>() >= headroom * verdict["usable_bytes"].get<double>();
}

// The verdict's lower bound: allocated instead of reserved memory.
bool lower_bound_fits(const Json& memory, double headroom) {
  const double usable = memory["verdict"]["usable_bytes"].get<double>();
  for (const Json& stage : memory["stages"]) {
    const double device = stage["peak_bytes"].get<double>() + stage["outside_allocator_bytes"].get<double>();
    if (usable - device < headroom * usable) return false;
  }
  return true;
}

struct Brute {
  int64_t index;
  double iteration_s, peak_bytes, tokens_per_s_per_gpu;
};

TEST_P(SearchBruteForceTest, SearchEqualsEstimatingEveryCandidate) {
  schema::SearchRequest request;
  Issues issues;
  ASSERT_TRUE(schema::read_search_request(GetParam().search, request, issues));
  const Json result = Json::parse(search_json(GetParam().search))["result"];
  const double budget = result["memory_budget_bytes"].get<double>();
  const Enumeration all = enumerate_candidates(request.spec);
  const StaticMemoryBound bound(request.spec.model);
  std::vector<Brute> fits;
  int64_t infeasible = 0, pruned = 0, evaluated = 0, lower_bound_infeasible = 0;
  for (size_t i = 0; i < all.candidates.size(); ++i) {
    const Json config = report::candidate_config_json(request, all.candidates[i]);
    const Json estimate = Json::parse(estimate_json(config.dump()));
    ASSERT_TRUE(estimate["ok"].get<bool>()) << config;
    const Json& r = estimate["result"];
    const double peak = r["memory"]["peak_bytes"].get<double>();
    Config parsed;
    ASSERT_TRUE(parse_config(config.dump(), parsed, issues));
    const bool verdict_fits = fits_with_headroom(r["memory"], request.spec.memory_headroom);
    if (bound.lower_bound_bytes(parsed) > budget) {
      ++pruned;
      EXPECT_GT(peak, budget) << "pruned a plan that fits: " << config;
      EXPECT_FALSE(verdict_fits) << "pruned a plan that fits: " << config;
      continue;
    }
    ++evaluated;
    if (!lower_bound_fits(r["memory"], request.spec.memory_headroom)) ++lower_bound_infeasible;
    if (!verdict_fits) {
      ++infeasible;
      continue;
    }
    fits.push_back({static_cast<int64_t>(i), r["time"]["iteration_s"].get<double>(), peak,
                    r["throughput"]["tokens_per_s_per_gpu"].get<double>()});
  }
  // Feasible / infeasible count the verdict's lower bound (allocated + outside memory);
  // the allocator replay runs for the plans the search times, and those it rejects
  // are counted apart. Top K and Pareto front are exact over the replayed verdict.
  const Json& counts = result["counts"];
  EXPECT_EQ(counts["pruned"].get<int64_t>(), pruned);
  EXPECT_EQ(counts["infeasible"].get<int64_t>(), lower_bound_infeasible);
  EXPECT_EQ(counts["feasible"].get<int64_t>() + counts["infeasible"].get<int64_t>(), evaluated);
  EXPECT_LE(counts["rejected_by_replay"].get<int64_t>(), infeasible - lower_bound_infeasible);
  ASSERT_FALSE(fits.empty());

  // Top K by the objective, then peak memory, then enumeration order.
  const bool by_time = request.spec.objective == SearchObjective::kStepTime;
  std::vector<Brute> ranked = fits;
  std::sort(ranked.begin(), ranked.end(), [&](const Brute& a, const Brute& b) {
    const double x = by_time ? a.iteration_s : -a.tokens_per_s_per_gpu;
    const double y = by_time ? b.iteration_s : -b.tokens_per_s_per_gpu;
    return std::tie(x, a.peak_bytes, a.index) < std::tie(y, b.peak_bytes, b.index);
  });
  ranked.resize(std::min<size_t>(ranked.size(), static_cast<size_t>(request.spec.top_k)));
  ASSERT_EQ(result["top"].size(), ranked.size());
  for (size_t i = 0; i < ranked.size(); ++i) {
    const Json& entry = result["top"][i];
    EXPECT_EQ(entry["index"].get<int64_t>(), ranked[i].index) << "rank " << i + 1;
    EXPECT_EQ(entry["metrics"]["iteration_s"].get<double>(), ranked[i].iteration_s);
    EXPECT_EQ(entry["metrics"]["peak_bytes"].get<double>(), ranked[i].peak_bytes);
    EXPECT_EQ(entry["result"]["time"]["iteration_s"].get<double>(), ranked[i].iteration_s);
  }

  // Pareto front: no other plan is at most as large and strictly faster, or
  // equal and earlier.
  std::vector<int64_t> front;
  for (const Brute& a : fits) {
    bool dominated = false;
    for (const Brute& b : fits) {
      const bool no_worse = b.peak_bytes <= a.peak_bytes && b.iteration_s <= a.iteration_s;
      const bool better =
          b.peak_bytes < a.peak_bytes || b.iteration_s < a.iteration_s || b.index < a.index;
      dominated = dominated || (b.index != a.index && no_worse && better);
    }
    if (!dominated) front.push_back(a.index);
  }
  std::vector<int64_t> searched;
  for (const Json& entry : result["pareto"]) searched.push_back(entry["index"].get<int64_t>());
  std::sort(front.begin(), front.end());
  std::sort(searched.begin(), searched.end());
  EXPECT_EQ(searched, front);
}

INSTANTIATE_TEST_SUITE_P(Small, SearchBruteForceTest, ::testing::ValuesIn(kCases),
                         [](const auto& test) { return std::string(test.param.name); });

TEST(SearchBruteForceTest, PagesMergeIntoTheWholeSearch) {
  const char* text = kCases[0].search;
  const Json document = Json::parse(text);
  const Json whole = Json::parse(search_json(text));
  const int64_t total = whole["result"]["page"]["candidates"].get<int64_t>();
  Json pages = Json::array();
  for (int64_t offset = 0; offset < total; offset += 37) {
    Json paged = document;
    paged["page"] = {{"offset", offset}, {"limit", 37}};
    pages.push_back(Json::parse(search_json(paged.dump())));
    ASSERT_TRUE(pages.back()["ok"].get<bool>());
  }
  ASSERT_GT(pages.size(), 2u);
  Json merged = Json::parse(search_merge_json(Json{{"pages", pages}}.dump()));
  // Each page simulates the pipelines its own top K and front need: "timed" adds
  // up to at least the whole search's. Everything else is identical.
  // So does "rejected_by_replay" (timed plans the allocator replay finds not to fit).
  EXPECT_GE(merged["result"]["counts"]["timed"], whole["result"]["counts"]["timed"]);
  merged["result"]["counts"].erase("timed");
  merged["result"]["counts"].erase("rejected_by_replay");
  Json expected = whole;
  expected["result"]["counts"].erase("timed");
  expected["result"]["counts"].erase("rejected_by_replay");
  EXPECT_EQ(merged.dump(), expected.dump());
}

TEST(SearchBruteForceTest, PointsListEveryFeasiblePlan) {
  Json document = Json::parse(kCases[0].search);
  document["include_points"] = true;
  const Json result = Json::parse(search_json(document.dump()))["result"];
  EXPECT_EQ(result["points"]["rows"].size(), result["counts"]["feasible"].get<size_t>() -
                                                 result["counts"]["rejected_by_replay"].get<size_t>());
  EXPECT_EQ(result["counts"]["timed"], result["counts"]["feasible"]);
}

}  // namespace
}  // namespace trainsim
