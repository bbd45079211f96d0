// The search returns what estimating every valid candidate one by one gives:
// the same top K (plans, order and figures), the same Pareto front (both over
// the plans whose memory verdict, allocator replay included, is "fits"), and,
// with the floors off, the same feasible / infeasible counts (the verdict's
// lower bound: allocated instead of reserved memory); pruning never drops a
// plan that fits. With the floors on (the default) the results are the
// same, on any number of threads, and the pages of a search merge into it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

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
  /// The replay rejects a plan that the screening's verdict would put in the top K (the
  /// test checks the case does), so the search must reach past it.
  bool replay_rejects_top = false;
};

// Small models on 8-64 GPUs: dense, MLA + MoE, Mixtral MoE, uneven stages,
// a memory headroom, every objective, per-layout diversity, a GPU-hour cap,
// both CP exchanges, GPU ranges wide enough for the floors to skip, and plans
// the screening ranks first that the allocator replay rejects.
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
    {"gpu_range_time_to_train", R"({"model": {"preset": "llama3-8b", "num_layers": 9},
        "system": "h100-sxm-80gb", "num_gpus": {"min": 8, "max": 64, "step": 8},
        "global_batch_size": 64, "seq_len": 4096, "top_k": 4, "objective": "time_to_train",
        "training": {"train_tokens": 1e11},
        "constraints": {"micro_batch_size": [1, 2], "max_gpu_hours": 2000,
                        "recompute": [{"granularity": "none"}, {"granularity": "selective"}]}})"},
    {"gpu_range_gpu_hours_per_layout", R"({"model": {"preset": "llama3-8b", "num_layers": 8},
        "system": "h100-sxm-80gb", "num_gpus": [16, 32, 64], "global_batch_size": 128,
        "seq_len": 8192, "top_k": 6, "objective": "gpu_hours", "diversity": "per_layout",
        "training": {"train_tokens": 1e11},
        "constraints": {"micro_batch_size": [1, 2], "cp_comm_type": ["p2p", "a2a"],
                        "recompute": [{"granularity": "none"}, {"granularity": "selective"}]}})"},
    // Headrooms that put the memory budget between the allocated and the reserved
    // memory of the fastest plans: the replay rejects the screening's top 3 (one batch of
    // classes), and plans of the top K over three batches of classes.
    {"replay_rejects_the_top", R"({"model": {"preset": "llama3-8b", "num_layers": 8},
        "system": "h100-sxm-80gb", "num_gpus": 4, "global_batch_size": 32, "seq_len": 16384,
        "top_k": 3, "memory_headroom": 0.28,
        "constraints": {"micro_batch_size": [1, 2, 4], "zero_stage": [1],
                        "recompute": [{"granularity": "none"}, {"granularity": "selective"}]}})",
     true},
    {"replay_rejects_top_across_batches", R"({"model": {"preset": "llama3-8b", "num_layers": 8},
        "system": "h100-sxm-80gb", "num_gpus": [2, 4, 8], "global_batch_size": 32,
        "seq_len": 16384, "top_k": 4, "memory_headroom": 0.5,
        "constraints": {"micro_batch_size": [1, 2, 4], "zero_stage": [1],
                        "recompute": [{"granularity": "none"}, {"granularity": "selective"}]}})",
     true},
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
    const double device =
        stage["peak_bytes"].get<double>() + stage["outside_allocator_bytes"].get<double>();
    if (usable - device < headroom * usable) return false;
  }
  return true;
}

struct Brute {
  int64_t index;
  double iteration_s, peak_bytes, tokens_per_s_per_gpu, time_to_train_s, gpu_hours;
  Json layout;
};

Json search_with(const schema::SearchRequest& request, SearchOptions options) {
  options.points = request.include_points;
  const SearchOutcome outcome = run_search(request.spec, {}, options);
  return report::search_result_json(request, outcome);
}

TEST_P(SearchBruteForceTest, SearchEqualsEstimatingEveryCandidate) {
  schema::SearchRequest request;
  Issues issues;
  ASSERT_TRUE(schema::read_search_request(GetParam().search, request, issues));
  request.include_points = true;
  const SearchSpec& spec = request.spec;
  // The brute-force path: no floors, and the replay for every plan that fits by the screening.
  SearchOptions exhaustive;
  exhaustive.floors = false;
  exhaustive.replay_all = true;
  const Json full = search_with(request, exhaustive);
  const double budget = full["memory_budget_bytes"].get<double>();
  const Enumeration all = enumerate_candidates(spec);
  const StaticMemoryBound bound(spec.model);
  std::vector<Brute> fits;
  int64_t infeasible = 0, pruned = 0;
  std::vector<Brute> rejected;
  for (size_t i = 0; i < all.candidates.size(); ++i) {
    const Json config = report::candidate_config_json(request, all.candidates[i]);
    const Json estimate = Json::parse(estimate_json(config.dump()));
    ASSERT_TRUE(estimate["ok"].get<bool>()) << config;
    const Json& r = estimate["result"];
    const double peak = r["memory"]["peak_bytes"].get<double>();
    Config parsed;
    ASSERT_TRUE(parse_config(config.dump(), parsed, issues));
    if (bound.lower_bound_bytes(parsed) > budget) {
      ++pruned;
      EXPECT_GT(peak, budget) << "pruned a plan that fits: " << config;
      EXPECT_FALSE(fits_with_headroom(r["memory"], spec.memory_headroom)) << config;
      continue;
    }
    const Json& t = r["throughput"];
    const double gpu_hours = t.value("gpu_hours_to_train", 0.0);
    if (!lower_bound_fits(r["memory"], spec.memory_headroom) ||
        (spec.max_gpu_hours > 0.0 && gpu_hours > spec.max_gpu_hours)) {
      ++infeasible;
      continue;
    }
    const Json& c = config["training"];
    std::vector<Brute>& into = fits_with_headroom(r["memory"], spec.memory_headroom)
                                   ? fits
                                   : rejected;  // feasible by the lower bound, not the replay
    into.push_back({all.indices[i], r["time"]["iteration_s"].get<double>(), peak,
                    t["tokens_per_s_per_gpu"].get<double>(), t.value("time_to_train_s", 0.0),
                    gpu_hours,
                    Json::array({config["system"]["num_gpus"], c["tp"], c["pp"], c["cp"], c["ep"],
                                 c["etp"]})});
  }
  // With the floors off every candidate is screened: the counts are brute force's.
  const Json& counts = full["counts"];
  EXPECT_EQ(counts["considered"].get<int64_t>(), all.considered);
  EXPECT_EQ(counts["candidates"].get<int64_t>(), static_cast<int64_t>(all.candidates.size()));
  EXPECT_EQ(counts["pruned"].get<int64_t>(), pruned);
  EXPECT_EQ(counts["infeasible"].get<int64_t>(), infeasible);
  const auto rejected_by_replay = static_cast<int64_t>(rejected.size());
  EXPECT_EQ(counts["feasible"].get<int64_t>(),
            static_cast<int64_t>(fits.size()) + rejected_by_replay);
  // Every feasible plan is replayed on that path.
  EXPECT_EQ(counts["rejected_by_replay"].get<int64_t>(), rejected_by_replay);
  EXPECT_EQ(counts["skipped"].get<int64_t>() + counts["bounded"].get<int64_t>(), 0);
  ASSERT_FALSE(fits.empty());

  // Top K by the objective, then peak memory, then enumeration order (per
  // layout: the best plan of each layout first).
  auto cost = [&](const Brute& b) {
    switch (spec.objective) {
      case SearchObjective::kStepTime: return b.iteration_s;
      case SearchObjective::kTokensPerSecondPerGpu: return -b.tokens_per_s_per_gpu;
      case SearchObjective::kTimeToTrain: return b.time_to_train_s;
      case SearchObjective::kGpuHours: return b.gpu_hours;
    }
    return b.iteration_s;
  };
  const auto rank = [&](std::vector<Brute>& plans) {
    std::sort(plans.begin(), plans.end(), [&](const Brute& a, const Brute& b) {
      return std::tuple(cost(a), a.peak_bytes, a.index) < std::tuple(cost(b), b.peak_bytes, b.index);
    });
  };
  std::vector<Brute> ranked = fits;
  rank(ranked);
  if (GetParam().replay_rejects_top) {
    std::vector<Brute> screened = fits;
    screened.insert(screened.end(), rejected.begin(), rejected.end());
    rank(screened);
    int64_t rejected_in_top = 0;
    for (size_t i = 0; i < std::min<size_t>(screened.size(), static_cast<size_t>(spec.top_k)); ++i) {
      for (const Brute& r : rejected) rejected_in_top += r.index == screened[i].index;
    }
    EXPECT_GT(rejected_in_top, 0) << "the case no longer has the replay reject a top plan";
  }
  if (spec.diversity == SearchDiversity::kPerLayout) {
    std::vector<Brute> bests;
    for (const Brute& b : ranked) {
      bool seen = false;
      for (const Brute& kept : bests) seen = seen || kept.layout == b.layout;
      if (!seen) bests.push_back(b);
    }
    ranked = bests;
  }
  ranked.resize(std::min<size_t>(ranked.size(), static_cast<size_t>(spec.top_k)));

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
  std::sort(front.begin(), front.end());

  // The exhaustive search, the bounded one and the bounded one on 3 threads.
  SearchOptions threads;
  threads.threads = 3;
  const Json bounded = search_with(request, {});
  SearchOptions lazy_exhaustive;  // every plan screened, the replay only for plans that rank
  lazy_exhaustive.floors = false;
  const Json lazy = search_with(request, lazy_exhaustive);
  for (const Json* result : {&full, &bounded, &lazy}) {
    ASSERT_EQ((*result)["top"].size(), ranked.size());
    for (size_t i = 0; i < ranked.size(); ++i) {
      const Json& entry = (*result)["top"][i];
      EXPECT_EQ(entry["index"].get<int64_t>(), ranked[i].index) << "rank " << i + 1;
      EXPECT_EQ(entry["metrics"]["iteration_s"].get<double>(), ranked[i].iteration_s);
      EXPECT_EQ(entry["metrics"]["peak_bytes"].get<double>(), ranked[i].peak_bytes);
      EXPECT_EQ(entry["result"]["time"]["iteration_s"].get<double>(), ranked[i].iteration_s);
    }
    std::vector<int64_t> searched;
    for (const Json& entry : (*result)["pareto"]) searched.push_back(entry["index"].get<int64_t>());
    std::sort(searched.begin(), searched.end());
    EXPECT_EQ(searched, front);
  }
  // The floors only skip work: what is left adds up.
  const Json& c = bounded["counts"];
  EXPECT_EQ(c["considered"], counts["considered"]);
  EXPECT_EQ(c["skipped"].get<int64_t>() + c["invalid"].get<int64_t>() +
                c["candidates"].get<int64_t>(),
            c["considered"].get<int64_t>());
  EXPECT_EQ(c["bounded"].get<int64_t>() + c["pruned"].get<int64_t>() +
                c["evaluated"].get<int64_t>(),
            c["candidates"].get<int64_t>());
  EXPECT_EQ(c["infeasible"].get<int64_t>() + c["feasible"].get<int64_t>(),
            c["evaluated"].get<int64_t>());
  EXPECT_LE(c["rejected_by_replay"].get<int64_t>(), rejected_by_replay);
  // Any number of threads: the same result, counts included.
  EXPECT_EQ(search_with(request, threads).dump(), bounded.dump());
}

INSTANTIATE_TEST_SUITE_P(Small, SearchBruteForceTest, ::testing::ValuesIn(kCases),
                         [](const auto& test) { return std::string(test.param.name); });

TEST(SearchBruteForceTest, FloorsSkipWorkOnAGpuRange) {
  const Json result = Json::parse(search_json(kCases[5].search))["result"];
  EXPECT_GT(result["counts"]["skipped"].get<int64_t>() + result["counts"]["bounded"].get<int64_t>(),
            result["counts"]["considered"].get<int64_t>() / 4);
}

// The page's protocol: a plan call orders the classes, pages of them run with
// the bound of the pages before, and the merge (with the search document)
// gives the whole search's result: the same top K, front, points, closest
// plan, hints and counts of the space (work counts may differ).
TEST(SearchBruteForceTest, PagesMergeIntoTheWholeSearch) {
  for (const size_t c : {size_t{0}, size_t{5}, size_t{6}}) {
    Json document = Json::parse(kCases[c].search);
    document["include_points"] = true;
    const Json whole = Json::parse(search_json(document.dump()));
    Json plan_document = document;
    plan_document["page"] = {{"plan", true}};
    const Json plan = Json::parse(search_json(plan_document.dump()))["result"];
    const Json order = plan["order"]["classes"];
    ASSERT_EQ(order.size(), plan["search"]["layout_classes"].get<size_t>());
    Json pages = Json::array();
    Json bound = {{"top", Json::array()}, {"front", Json::array()}};
    for (size_t begin = 0; begin < order.size(); begin += 5) {
      Json paged = document;
      paged["page"] = {{"classes", Json::array()}, {"bound", bound}};
      for (size_t i = begin; i < std::min(order.size(), begin + 5); ++i) {
        paged["page"]["classes"].push_back(order[i]);
      }
      pages.push_back(Json::parse(search_json(paged.dump())));
      ASSERT_TRUE(pages.back()["ok"].get<bool>()) << pages.back();
      const Json so_far =
          Json::parse(search_merge_json(Json{{"pages", pages}}.dump()).c_str());
      // Not every class is covered yet: the merge says so; the bound uses the pages' entries.
      for (const Json& e : pages.back()["result"]["top"]) bound["top"].push_back(e["metrics"]);
      for (const Json& e : pages.back()["result"]["pareto"]) {
        bound["front"].push_back({e["metrics"]["peak_bytes"], e["metrics"]["iteration_s"]});
      }
      if (begin + 5 < order.size()) {
        EXPECT_FALSE(so_far["ok"].get<bool>());
      }
    }
    ASSERT_GT(pages.size(), 2u);
    Json merged = Json::parse(search_merge_json(Json{{"search", document}, {"pages", pages}}.dump()));
    ASSERT_TRUE(merged["ok"].get<bool>()) << merged;
    Json expected = whole;
    for (Json* r : {&merged["result"], &expected["result"]}) {
      r->erase("points");  // a sample of the plans each run screened
      for (const char* work : {"skipped", "invalid", "invalid_by_reason", "candidates",
                               "uneven_candidates", "bounded", "pruned", "pruned_by_reason",
                               "evaluated", "infeasible", "infeasible_by_reason", "feasible",
                               "timed", "rejected_by_replay"}) {
        (*r)["counts"].erase(work);
      }
    }
    EXPECT_EQ(merged.dump(), expected.dump()) << kCases[c].name;
  }
}

// Pages split by count ({"offset", "limit"} over the layout classes in
// enumeration order, no bound), merged without the search document: the whole
// search's top K, front and closest plan (no hints: the merge needs the
// search document for them).
TEST(SearchBruteForceTest, RangePagesMergeIntoTheWholeSearch) {
  for (const size_t c : {size_t{1}, size_t{6}}) {
    const Json document = Json::parse(kCases[c].search);
    const Json whole = Json::parse(search_json(document.dump()));
    const int64_t total = whole["result"]["search"]["layout_classes"].get<int64_t>();
    Json pages = Json::array();
    for (int64_t offset = 0; offset < total; offset += 3) {
      Json paged = document;
      paged["page"] = {{"offset", offset}, {"limit", 3}};
      pages.push_back(Json::parse(search_json(paged.dump())));
      ASSERT_TRUE(pages.back()["ok"].get<bool>()) << pages.back();
      const Json& range = pages.back()["result"]["page"];
      EXPECT_EQ(range["offset"].get<int64_t>(), offset);
      EXPECT_EQ(range["end"].get<int64_t>(), std::min(total, offset + 3));
      EXPECT_EQ(range["candidates"].get<int64_t>(), total);
    }
    ASSERT_GT(pages.size(), 2u) << kCases[c].name;
    Json merged = Json::parse(search_merge_json(Json{{"pages", pages}}.dump()));
    ASSERT_TRUE(merged["ok"].get<bool>()) << merged;
    for (const char* key : {"top", "pareto", "closest", "search", "objective", "top_k"}) {
      EXPECT_EQ(merged["result"][key], whole["result"][key]) << kCases[c].name << " " << key;
    }
    EXPECT_EQ(merged["result"]["counts"]["considered"], whole["result"]["counts"]["considered"]);
  }
}

TEST(SearchBruteForceTest, PointsAreTimedFeasiblePlans) {
  Json document = Json::parse(kCases[0].search);
  document["include_points"] = true;
  const Json result = Json::parse(search_json(document.dump()))["result"];
  // A small search samples every plan it screened that fits, up to the bound. The
  // screening's verdict decides (allocated memory, its lower bound): the points are not
  // replayed, which would cost a replay per point (the top K and the front are).
  const auto feasible = result["counts"]["feasible"].get<size_t>();
  ASSERT_GT(feasible, 0u);
  EXPECT_EQ(result["points"]["rows"].size(),
            std::min(feasible, static_cast<size_t>(kMaxSearchPoints)));
  EXPECT_GE(result["counts"]["timed"].get<size_t>(), result["points"]["rows"].size());
  int64_t previous = -1;
  for (const Json& row : result["points"]["rows"]) {
    EXPECT_LE(row[1].get<double>(), result["memory_budget_bytes"].get<double>());
    EXPECT_GT(row[0].get<int64_t>(), previous);  // distinct plans in index order
    previous = row[0].get<int64_t>();
  }
}

}  // namespace
}  // namespace trainsim
