// The search over communication overlap (constraints.tp_comm_overlap and
// constraints.overlap_moe_expert_parallel_comm): each value is tried where it
// changes a plan (TP overlap with tp > 1, EP overlap with ep > 1) and only there,
// each candidate is a config estimate() accepts with the same figures, the floors
// stay below every member, the fast path returns the exhaustive search's plans,
// and a value no plan can take is refused at its constraint's path.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

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

Json tp_overlap_search() {
  return Json::parse(R"({"model": {"preset": "llama3-8b", "num_layers": 8},
      "system": "h100-sxm-80gb", "num_gpus": 8, "global_batch_size": 32, "seq_len": 4096, "top_k": 6,
      "constraints": {"micro_batch_size": [1, 2], "pp": [1, 2], "tp": [1, 2, 4],
        "recompute": [{"granularity": "none"}, {"granularity": "selective"}],
        "tp_comm_overlap": [false, true]}})");
}

Json ep_overlap_search() {
  return Json::parse(R"({"model": {"preset": "deepseek-v2-lite", "num_layers": 6,
        "moe": {"num_dense_layers": 1}},
      "system": "h100-sxm-80gb", "num_gpus": 8, "global_batch_size": 32, "seq_len": 2048, "top_k": 6,
      "constraints": {"micro_batch_size": [1, 2], "pp": [1, 2], "ep": [1, 2, 4], "cp": 1, "tp": [1, 2],
        "recompute": [{"granularity": "none"}, {"granularity": "full", "method": "uniform", "num_layers": 1}],
        "overlap_moe_expert_parallel_comm": [false, true]}})");
}

schema::SearchRequest read(const Json& document) {
  schema::SearchRequest request;
  Issues issues;
  EXPECT_TRUE(schema::read_search_request(document.dump(), request, issues))
      << (issues.empty() ? "" : issues[0].path + ": " + issues[0].message);
  return request;
}

Issues search_issues(const Json& document) {
  schema::SearchRequest request;
  Issues issues;
  schema::read_search_request(document.dump(), request, issues);
  return issues;
}

// Per (degree, overlap value): how many candidates; every candidate's config
// parses and estimates to the evaluator's figures.
std::map<std::pair<int64_t, bool>, int> tried(const Json& document, const char* key, const char* degree) {
  const schema::SearchRequest request = read(document);
  const Enumeration all = enumerate_candidates(request.spec);
  CandidateEvaluator evaluator(request.spec, 1e30);
  std::map<std::pair<int64_t, bool>, int> count;
  for (const Candidate& c : all.candidates) {
    const Json config = report::candidate_config_json(request, c);
    const Json& t = config["training"];
    const bool on = t.value(key, false);
    ++count[{t.value(degree, int64_t{1}), on}];
    Config parsed;
    Issues issues;
    EXPECT_TRUE(parse_config(config.dump(), parsed, issues)) << config;
    if (!issues.empty()) continue;
    EXPECT_EQ(evaluator.exact(c).iteration_s, estimate(parsed).time.iteration_s) << config;
    EXPECT_EQ(evaluator.exact(c).peak_bytes, estimate(parsed).memory.peak_bytes) << config;
  }
  return count;
}

TEST(OverlapSearchTest, TpOverlapIsTriedOnTensorParallelPlansOnly) {
  const auto count = tried(tp_overlap_search(), "tp_comm_overlap", "tp");
  EXPECT_EQ(count.count({1, true}), 0u);
  EXPECT_GT(count.at({1, false}), 0);
  for (const int64_t tp : {2, 4}) {
    EXPECT_GT(count.at({tp, true}), 0) << tp;
    EXPECT_EQ(count.at({tp, true}), count.at({tp, false})) << tp;
  }
}

TEST(OverlapSearchTest, EpOverlapIsTriedOnExpertParallelPlansOnly) {
  const schema::SearchRequest request = read(ep_overlap_search());
  const Enumeration all = enumerate_candidates(request.spec);
  const auto by_ep = tried(ep_overlap_search(), "overlap_moe_expert_parallel_comm", "ep");
  EXPECT_EQ(by_ep.count({1, true}), 0u);
  for (const int64_t ep : {2, 4}) {
    EXPECT_GT(by_ep.at({ep, true}), 0) << ep;
    // Fewer with the overlap: full recompute and pp > 1 without vpp are refused with it.
    EXPECT_LT(by_ep.at({ep, true}), by_ep.at({ep, false})) << ep;
  }
  // Megatron-LM's refusals stay per candidate: full recompute with the overlap.
  EXPECT_GT(all.invalid_by_reason.count("/training/recompute/granularity: Megatron-LM refuses full "
                                        "recompute with overlap_moe_expert_parallel_comm"),
            0u);
}

// The floors (static memory per block, the step-time floor) never exceed a member's.
TEST(OverlapSearchTest, FloorsBoundEveryMemberThatOverlaps) {
  for (const Json& document : {tp_overlap_search(), ep_overlap_search()}) {
    const schema::SearchRequest request = read(document);
    int64_t overlapping = 0;
    testing::walk_floors(request, [&](const testing::FloorMember& m) {
      Config config = base_config(request.spec);
      apply_candidate(request.spec, m.candidate, config);
      const OverlapSpec& o = config.training.overlap;
      if ((o.tp_comm || o.moe_ep_comm) && m.floor_s > 0.0) ++overlapping;
      EXPECT_LE(m.floor_bytes, m.evaluator.static_bound_bytes(m.candidate)) << m.layout.tp << " " << m.layout.ep;
      EXPECT_LE(m.floor_s, m.evaluator.exact(m.candidate).iteration_s) << m.layout.tp << " " << m.layout.ep;
    });
    EXPECT_GT(overlapping, 10);
  }
}

// With the floors (the default) the search returns the exhaustive search's plans and front,
// and on these searches an overlapping plan is among them (the test means something).
TEST(OverlapSearchTest, FastPathReturnsTheExhaustiveSearch) {
  const std::pair<Json, const char*> searches[] = {{tp_overlap_search(), "tp_comm_overlap"},
                                                   {ep_overlap_search(), "overlap_moe_expert_parallel_comm"}};
  for (const auto& [document, key] : searches) {
    const schema::SearchRequest request = read(document);
    SearchOptions exhaustive;
    exhaustive.floors = false;
    exhaustive.replay_all = true;
    const Json full = report::search_result_json(request, run_search(request.spec, {}, exhaustive));
    const Json fast = report::search_result_json(request, run_search(request.spec, {}, SearchOptions{}));
    ASSERT_FALSE(full["top"].empty()) << key;
    ASSERT_EQ(full["top"].size(), fast["top"].size()) << key;
    for (size_t i = 0; i < full["top"].size(); ++i) {
      EXPECT_EQ(full["top"][i]["config"], fast["top"][i]["config"]) << key << " " << i;
    }
    EXPECT_EQ(full["pareto"], fast["pareto"]) << key;
    bool overlaps = false;
    for (const Json& plan : full["top"]) overlaps = overlaps || plan["config"]["training"].value(key, false);
    EXPECT_TRUE(overlaps) << key << " " << full["top"];
  }
}

TEST(OverlapSearchTest, ValuesNoPlanCanTakeAreRefusedAtTheirPath) {
  // A dense model has no expert all-to-all to overlap.
  Json document = tp_overlap_search();
  document["constraints"]["overlap_moe_expert_parallel_comm"] = {false, true};
  Issues issues = search_issues(document);
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].path, "/constraints/overlap_moe_expert_parallel_comm/1");
  EXPECT_NE(issues[0].message.find("needs a mixture-of-experts model"), std::string::npos) << issues[0].message;

  // Megatron-LM refuses shared-expert overlap beside the EP overlap: validate()'s words
  // at the value's path, naming the key that conflicts.
  document = ep_overlap_search();
  document["training"] = {{"moe_shared_expert_overlap", true}};
  issues = search_issues(document);
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].path, "/constraints/overlap_moe_expert_parallel_comm/1");
  EXPECT_NE(issues[0].message.find("/training/moe_shared_expert_overlap"), std::string::npos) << issues[0].message;

  // TP overlap needs sequence parallelism; a search without it is refused, at the
  // constraint or at the training key that asked for the overlap.
  document = tp_overlap_search();
  document["constraints"]["sequence_parallel"] = false;
  issues = search_issues(document);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].path, "/constraints/tp_comm_overlap");
  EXPECT_NE(issues[0].message.find("needs sequence parallelism"), std::string::npos) << issues[0].message;
  document["constraints"].erase("tp_comm_overlap");
  document["training"] = {{"tp_comm_overlap", true}};
  issues = search_issues(document);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].path, "/training/tp_comm_overlap");
  document["training"] = {{"tp_comm_overlap", false}};
  EXPECT_TRUE(search_issues(document).empty());

  // Fixed in the template and listed: one of the two.
  document = tp_overlap_search();
  document["training"] = {{"tp_comm_overlap", true}};
  issues = search_issues(document);
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].path, "/constraints/tp_comm_overlap");
  EXPECT_EQ(issues[0].message, "is fixed at /training/tp_comm_overlap; set one of the two");
}

}  // namespace
}  // namespace trainsim
