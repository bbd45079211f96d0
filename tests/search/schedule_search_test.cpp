// The search over pipeline schedules (constraints.pipeline_schedule) and with a
// fixed pipeline_layout in the training template: every candidate is a config
// estimate() accepts with the same figures, the schedules' own rules hold (a V
// schedule runs vpp 2, DualPipe an even pp, none of them at pp 1), and the
// floors that let the search skip blocks stay below every member's step time.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "report/search_result.h"
#include "schema/search_request.h"
#include "search/enumerate.h"
#include "search/evaluator.h"
#include "search/floor.h"
#include "search/memory_bound.h"
#include "search/search.h"
#include "floor_walk.h"
#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

schema::SearchRequest parse_search(const Json& document) {
  schema::SearchRequest request;
  Issues issues;
  EXPECT_TRUE(schema::read_search_request(document.dump(), request, issues))
      << (issues.empty() ? "" : issues[0].path + ": " + issues[0].message);
  return request;
}

const Json kAllSchedules = Json::parse(
    R"(["1f1b", "zero_bubble_h1", "zero_bubble_h2", "zero_bubble_v", "dualpipe", "dualpipe_v"])");

// A dense and an MoE model, each over every schedule.
std::vector<Json> schedule_searches() {
  Json dense = Json::parse(R"({"model": {"preset": "llama3-8b", "num_layers": 8},
      "system": "h100-sxm-80gb", "num_gpus": [8, 16], "global_batch_size": 64, "seq_len": 4096,
      "constraints": {"micro_batch_size": [1, 2], "pp": [1, 2, 4], "tp": [1, 2],
        "recompute": [{"granularity": "none"}, {"granularity": "selective"}]}})");
  Json moe = Json::parse(R"({"model": {"preset": "deepseek-v2-lite", "num_layers": 8,
        "moe": {"num_dense_layers": 0}},
      "system": "h100-sxm-80gb", "num_gpus": 8, "global_batch_size": 32, "seq_len": 2048,
      "constraints": {"micro_batch_size": [1], "pp": [2, 4], "ep": [1, 2], "cp": 1}})");
  dense["constraints"]["pipeline_schedule"] = kAllSchedules;
  moe["constraints"]["pipeline_schedule"] = kAllSchedules;
  return {dense, moe};
}

TEST(ScheduleSearchTest, EverySchedulesCandidatesAreConfigsWithTheirOwnRules) {
  for (const Json& document : schedule_searches()) {
    const schema::SearchRequest request = parse_search(document);
    const Enumeration all = enumerate_candidates(request.spec);
    CandidateEvaluator evaluator(request.spec, 1e30);
    std::map<std::string, int> per_schedule;
    for (const Candidate& c : all.candidates) {
      const Json config = report::candidate_config_json(request, c);
      const Json& t = config["training"];
      const std::string schedule = t.value("pipeline_schedule", std::string("1f1b"));
      ++per_schedule[schedule];
      if (schedule != "1f1b") {
        EXPECT_GT(c.pp, 1) << config;
      }
      if (schedule == "zero_bubble_v" || schedule == "dualpipe_v") {
        EXPECT_EQ(c.vpp, 2) << config;
      }
      if (schedule == "dualpipe") {
        EXPECT_EQ(c.pp % 2, 0) << config;
      }
      if (schedule.rfind("zero_bubble_h", 0) == 0 || schedule == "dualpipe") {
        EXPECT_EQ(c.vpp, 1) << config;
      }
      // The candidate is the config estimate() reads, with the same step time and peak.
      Config parsed;
      Issues issues;
      ASSERT_TRUE(parse_config(config.dump(), parsed, issues)) << config;
      const Estimate reference = estimate(parsed);
      const CandidateMetrics exact = evaluator.exact(c);
      EXPECT_EQ(exact.iteration_s, reference.time.iteration_s) << config;
      EXPECT_EQ(exact.peak_bytes, reference.memory.peak_bytes) << config;
    }
    for (const Json& name : kAllSchedules) {
      EXPECT_GT(per_schedule[name.get<std::string>()], 0) << name << " in " << document["model"];
    }
    // The rejected combinations are counted by the schedule's own reason.
    bool vpp_reason = false;
    for (const auto& [reason, count] : all.invalid_by_reason) {
      vpp_reason = vpp_reason || reason.find("/training/pipeline_schedule") != std::string::npos;
    }
    EXPECT_TRUE(vpp_reason);
  }
}

TEST(ScheduleSearchTest, AListedValueIsNeverAppliedWhereItsKeyDoesNotMatter) {
  // Only a zero-bubble schedule and only activation offload are listed: a pp 1 plan
  // has no schedule to run (1F1B, the default, stands for "none"), and a pp > 1 plan
  // cannot offload, so those plans take the keys' defaults instead of being refused.
  const Json document = Json::parse(R"({"model": {"preset": "llama3-8b", "num_layers": 8},
      "system": "h100-sxm-80gb", "num_gpus": 8, "global_batch_size": 32, "seq_len": 4096,
      "constraints": {"micro_batch_size": [1, 2], "pp": [1, 2], "tp": [1, 2], "vpp": 1,
        "recompute": [{"granularity": "none"}],
        "pipeline_schedule": ["zero_bubble_h1"], "activation_offload_layers": [2]}})");
  const schema::SearchRequest request = parse_search(document);
  const Enumeration all = enumerate_candidates(request.spec);
  EXPECT_EQ(all.invalid(), 0);
  for (const auto& [reason, count] : all.invalid_by_reason) ADD_FAILURE() << reason << ": " << count;
  std::map<int64_t, int> per_pp;
  CandidateEvaluator evaluator(request.spec, 1e30);
  for (const Candidate& c : all.candidates) {
    ++per_pp[c.pp];
    const Json config = report::candidate_config_json(request, c);
    const Json& t = config["training"];
    if (c.pp == 1) {
      EXPECT_EQ(t.value("pipeline_schedule", std::string("1f1b")), "1f1b") << config;
      EXPECT_EQ(t.value("activation_offload_layers", 0), 2) << config;
    } else {
      EXPECT_EQ(t.value("pipeline_schedule", std::string("1f1b")), "zero_bubble_h1") << config;
      EXPECT_EQ(t.value("activation_offload_layers", 0), 0) << config;
    }
    Config parsed;
    Issues issues;
    ASSERT_TRUE(parse_config(config.dump(), parsed, issues)) << config << issues[0].message;
    EXPECT_EQ(evaluator.exact(c).iteration_s, estimate(parsed).time.iteration_s) << config;
  }
  EXPECT_GT(per_pp[1], 0);
  EXPECT_GT(per_pp[2], 0);
}

TEST(ScheduleSearchTest, FloorsBoundEveryScheduleMember) {
  int64_t checked = 0;
  std::set<int> measured_schedules;
  for (const Json& document : schedule_searches()) {
    const schema::SearchRequest request = parse_search(document);
    testing::walk_floors(request, [&](const testing::FloorMember& m) {
      Candidate c = m.candidate;
      EXPECT_LE(m.floor_bytes, m.evaluator.static_bound_bytes(c));
      const CandidateMetrics exact = m.evaluator.exact(c);
      EXPECT_LE(m.floor_s, exact.iteration_s)
          << document["model"] << " schedule " << int{c.choice[1]} << " pp " << c.pp;
      // The screening bound too (pipeline_run_lower_bound of the schedule).
      CandidateMetrics screened;
      if (m.evaluator.screen(c, m.evaluator.static_bound_bytes(c), screened) == Screening::kFits) {
        EXPECT_LE(screened.iteration_s, exact.iteration_s * (1.0 + 1e-12));
      }
      if (m.floor_s > 0.0) {
        ++checked;
        if (c.pp > 1) measured_schedules.insert(c.choice[1]);
      }
    });
  }
  EXPECT_GT(checked, 200);
  // Every schedule's blocks get a floor (the V schedules' representative runs vpp 2).
  EXPECT_EQ(measured_schedules.size(), 6u);
}

TEST(ScheduleSearchTest, DualPipeMayRankAboveOneFOneBAndTheSearchFindsTheSameBest) {
  // The search with floors on gives the best plan the exhaustive one gives.
  Json document = schedule_searches()[1];
  document["top_k"] = 5;
  const schema::SearchRequest request = parse_search(document);
  SearchOptions exhaustive;
  exhaustive.floors = false;
  const SearchOutcome full = run_search(request.spec, {}, exhaustive);
  const SearchOutcome fast = run_search(request.spec, {}, SearchOptions{});
  const Json a = report::search_result_json(request, full);
  const Json b = report::search_result_json(request, fast);
  ASSERT_FALSE(a["top"].empty());
  ASSERT_EQ(a["top"].size(), b["top"].size());
  for (size_t i = 0; i < a["top"].size(); ++i) {
    EXPECT_EQ(a["top"][i]["config"], b["top"][i]["config"]) << i;
  }
}

// Layers that do not split evenly: DualPipe and the zero-bubble H schedules take the
// uneven splits of a pp-way pipeline; the V schedules need a layout for them.
TEST(ScheduleSearchTest, UnevenSplitsReachEveryScheduleButTheVs) {
  Json document = Json::parse(R"({"model": {"preset": "llama3-8b", "num_layers": 7},
      "system": "h100-sxm-80gb", "num_gpus": 8, "global_batch_size": 64, "seq_len": 4096,
      "constraints": {"micro_batch_size": [1], "pp": [2, 4], "tp": 1, "cp": 1}})");
  document["constraints"]["pipeline_schedule"] = kAllSchedules;
  const schema::SearchRequest request = parse_search(document);
  const Enumeration all = enumerate_candidates(request.spec);
  std::map<std::string, int> uneven;
  for (const Candidate& c : all.candidates) {
    const Json config = report::candidate_config_json(request, c);
    const std::string schedule = config["training"].value("pipeline_schedule", "1f1b");
    if (c.first_stage_layers > 0) ++uneven[schedule];
  }
  for (const char* schedule : {"1f1b", "zero_bubble_h1", "zero_bubble_h2", "dualpipe"}) {
    EXPECT_GT(uneven[schedule], 0) << schedule;
  }
  EXPECT_EQ(uneven["zero_bubble_v"] + uneven["dualpipe_v"], 0);
}

// A fixed layout of 4 virtual stages: pp 2 with vpp 2 or pp 4 with vpp 1, never an
// uneven split; with DualPipe only pp 4 (one stage per direction and rank).
TEST(ScheduleSearchTest, AFixedPipelineLayoutSetsVppAndTheSplit) {
  Json document = Json::parse(R"({"model": {"preset": "llama3-8b", "num_layers": 8},
      "system": "h100-sxm-80gb", "num_gpus": [8, 16], "global_batch_size": 64, "seq_len": 4096,
      "training": {"pipeline_layout": "Et*2|t*2|t*2|t*2L"},
      "constraints": {"micro_batch_size": [1], "pipeline_schedule": ["1f1b", "dualpipe"]}})");
  const schema::SearchRequest request = parse_search(document);
  const Enumeration all = enumerate_candidates(request.spec);
  std::set<std::pair<int, int>> pp_vpp;
  for (const Candidate& c : all.candidates) {
    const Json config = report::candidate_config_json(request, c);
    EXPECT_EQ(config["training"]["pipeline_layout"], "Et*2|t*2|t*2|t*2L") << config;
    EXPECT_EQ(c.first_stage_layers, 0);
    const std::string schedule = config["training"].value("pipeline_schedule", "1f1b");
    EXPECT_EQ(c.pp * (schedule == "dualpipe" ? 1 : c.vpp), 4) << config;
    pp_vpp.insert({c.pp, c.vpp});
    EXPECT_TRUE(Json::parse(estimate_json(config.dump()))["ok"].get<bool>()) << config;
  }
  EXPECT_EQ(pp_vpp, (std::set<std::pair<int, int>>{{2, 2}, {4, 1}}));

  // Asking for uneven splits as well is a contradiction, named at the constraint.
  document["constraints"]["uneven_stages"] = true;
  schema::SearchRequest rejected;
  Issues issues;
  EXPECT_FALSE(schema::read_search_request(document.dump(), rejected, issues));
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].path, "/constraints/uneven_stages");
}

}  // namespace
}  // namespace trainsim
