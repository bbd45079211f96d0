// The search over CPU offload (constraints.optimizer_offload_fraction and
// constraints.activation_offload_layers): each candidate is a config estimate()
// accepts with the same figures, every asked value is tried where Megatron-LM
// allows it (activation offload only with pp 1 and no recompute), the fast path
// returns the exhaustive search's plans, the floors stay below every plan that
// offloads, and a value no plan can take is refused at its constraint's path in
// validate()'s words.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "report/search_result.h"
#include "schema/search_request.h"
#include "search/enumerate.h"
#include "search/evaluator.h"
#include "search/floor.h"
#include "search/search.h"
#include "floor_walk.h"
#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

// An H100 cut to 40 GiB, so that offloading decides which plans fit.
Json offload_search() {
  return Json::parse(R"({"model": {"preset": "llama3-8b", "num_layers": 8},
      "system": {"preset": "h100-sxm-80gb", "gpu": {"hbm_capacity_gib": 40}},
      "num_gpus": 8, "global_batch_size": 32, "seq_len": 4096, "top_k": 6,
      "constraints": {"micro_batch_size": [1, 2], "pp": [1, 2], "tp": [1, 2], "zero_stage": [0, 1],
        "recompute": [{"granularity": "none"}, {"granularity": "selective"}],
        "optimizer_offload_fraction": [0, 0.5, 1], "activation_offload_layers": [4, 0]}})");
}

schema::SearchRequest read(const Json& document) {
  schema::SearchRequest request;
  Issues issues;
  EXPECT_TRUE(schema::read_search_request(document.dump(), request, issues))
      << (issues.empty() ? "" : issues[0].path + ": " + issues[0].message);
  return request;
}

std::vector<Issue> search_issues(const Json& document) {
  schema::SearchRequest request;
  Issues issues;
  schema::read_search_request(document.dump(), request, issues);
  return issues;
}

TEST(OffloadSearchTest, EveryValueIsTriedAndEachCandidateIsItsConfig) {
  const schema::SearchRequest request = read(offload_search());
  const Enumeration all = enumerate_candidates(request.spec);
  CandidateEvaluator evaluator(request.spec, 1e30);
  std::map<double, int> per_fraction;
  std::map<int64_t, int> per_layers;
  for (const Candidate& c : all.candidates) {
    const Json config = report::candidate_config_json(request, c);
    const Json& t = config["training"];
    ++per_fraction[t["optimizer_offload_fraction"].get<double>()];
    const int64_t layers = t["activation_offload_layers"].get<int64_t>();
    ++per_layers[layers];
    if (layers > 0) {
      EXPECT_EQ(c.pp, 1) << config;
      EXPECT_EQ(t["recompute"]["granularity"], "none") << config;
    }
    Config parsed;
    Issues parse_issues;
    ASSERT_TRUE(parse_config(config.dump(), parsed, parse_issues)) << config;
    EXPECT_EQ(evaluator.exact(c).iteration_s, estimate(parsed).time.iteration_s) << config;
    EXPECT_EQ(evaluator.exact(c).peak_bytes, estimate(parsed).memory.peak_bytes) << config;
  }
  ASSERT_EQ(per_fraction.size(), 3u);
  EXPECT_EQ(per_fraction[0.0], per_fraction[0.5]);
  EXPECT_EQ(per_fraction[0.0], per_fraction[1.0]);
  ASSERT_EQ(per_layers.size(), 2u);
  EXPECT_GT(per_layers[4], 0);
  // pp > 1 tries no activation offload (listed second), never an invalid plan with it.
  EXPECT_EQ(all.invalid_by_reason.count(
                "/training/activation_offload_layers: Megatron-LM has no activation CPU offload with "
                "pipeline parallelism"),
            0u);
}

// The floors (static memory per block, the step-time floor) never exceed a member's:
// offloaded optimizer states leave the GPU, offloaded activations add exposed copies.
TEST(OffloadSearchTest, FloorsBoundEveryMemberThatOffloads) {
  for (const char* model : {"llama3-8b", "deepseek-v2-lite"}) {
    Json document = offload_search();
    document["model"] = {{"preset", model}, {"num_layers", 6}};
    document["constraints"]["zero_stage"] = {0, 1, 3};
    if (std::string(model) == "deepseek-v2-lite") {
      document["model"]["moe"] = {{"num_dense_layers", 1}};
      document["constraints"]["ep"] = {1, 2};
      document["constraints"]["activation_offload_layers"] = {0, 2};
    }
    const schema::SearchRequest request = read(document);
    int64_t offloading = 0;
    testing::walk_floors(request, [&](const testing::FloorMember& m) {
      Config config = base_config(request.spec);
      apply_candidate(request.spec, m.candidate, config);
      const TrainingSpec& t = config.training;
      if (t.optimizer_offload_fraction > 0.0 && m.floor_s > 0.0) ++offloading;
      EXPECT_LE(m.floor_bytes, m.evaluator.static_bound_bytes(m.candidate))
          << model << " offload " << t.optimizer_offload_fraction << " zero " << t.zero_stage;
      EXPECT_LE(m.floor_s, m.evaluator.exact(m.candidate).iteration_s)
          << model << " activation offload " << t.activation_offload_layers;
    });
    EXPECT_GT(offloading, 50) << model;
  }
}

// With the floors (the default) the search returns the exhaustive search's plans and front.
TEST(OffloadSearchTest, FastPathReturnsTheExhaustiveSearch) {
  const schema::SearchRequest request = read(offload_search());
  SearchOptions exhaustive;
  exhaustive.floors = false;
  exhaustive.replay_all = true;
  const Json full = report::search_result_json(request, run_search(request.spec, {}, exhaustive));
  const Json fast = report::search_result_json(request, run_search(request.spec, {}, SearchOptions{}));
  ASSERT_FALSE(full["top"].empty());
  ASSERT_EQ(full["top"].size(), fast["top"].size());
  for (size_t i = 0; i < full["top"].size(); ++i) {
    EXPECT_EQ(full["top"][i]["config"], fast["top"][i]["config"]) << i;
  }
  EXPECT_EQ(full["pareto"], fast["pareto"]);
  // On 40 GiB some plan that fits offloads (the test means something).
  bool offloads = false;
  for (const Json& plan : full["top"]) {
    const Json& t = plan["config"]["training"];
    offloads = offloads || t["optimizer_offload_fraction"].get<double>() > 0.0 ||
               t["activation_offload_layers"].get<int64_t>() > 0;
  }
  for (const Json& plan : full["pareto"]) {
    const Json& t = plan["config"]["training"];
    offloads = offloads || t["optimizer_offload_fraction"].get<double>() > 0.0 ||
               t["activation_offload_layers"].get<int64_t>() > 0;
  }
  EXPECT_TRUE(offloads) << full["top"];
}

TEST(OffloadSearchTest, ValuesNoPlanCanTakeAreRefusedAtTheirPath) {
  Json document = offload_search();
  document["constraints"]["optimizer_offload_fraction"] = {0, 1.5};
  auto issues = search_issues(document);
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].path, "/constraints/optimizer_offload_fraction/1");
  EXPECT_EQ(issues[0].message, "must be at most 1, got 1.5");

  document = offload_search();
  document["constraints"]["activation_offload_layers"] = {0, 8};
  issues = search_issues(document);
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].path, "/constraints/activation_offload_layers/1");
  EXPECT_NE(issues[0].message.find("must be below the model's 8 layers"), std::string::npos) << issues[0].message;

  // A system without host figures (the MI300X preset states none): validate()'s
  // rule, at the value's path.
  document = offload_search();
  document["system"] = "mi300x-192gb";
  document["constraints"]["optimizer_offload_fraction"] = 0.5;
  document["constraints"].erase("activation_offload_layers");
  issues = search_issues(document);
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].path, "/constraints/optimizer_offload_fraction");
  EXPECT_NE(issues[0].message.find("needs the system's host figures"), std::string::npos) << issues[0].message;

  document = offload_search();
  document["training"] = {{"optimizer_offload_fraction", 0.5}};
  issues = search_issues(document);
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].path, "/constraints/optimizer_offload_fraction");
  EXPECT_EQ(issues[0].message, "is fixed at /training/optimizer_offload_fraction; set one of the two");
}

}  // namespace
}  // namespace trainsim
