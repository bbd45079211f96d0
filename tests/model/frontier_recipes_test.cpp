// The frontier recipes are expressible: every DeepSeek-V3 run of
// tests/validation/data/published_runs_frontier.json (pipeline layouts with
// embedding, MTP and loss slots, group-limited routing, the flex dispatcher,
// the DeepSeek router) estimates, and every frontier model preset estimates on
// a plan of its own. The accuracy bounds over these runs belong to the
// published-runs test, which loads every published_runs*.json; this test
// prints each run's error so the tables can be read from its output.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <set>
#include <string>

#include "test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;

const json& frontier() {
  static const json doc = json::parse(
      testing::read_text_file(testing::test_data_path("validation/data/published_runs_frontier.json")));
  return doc;
}

TEST(FrontierRecipesTest, EveryDeepSeekV3RunIsExpressedAndEstimates) {
  ASSERT_GE(frontier()["cases"].size(), 5u);
  std::set<std::string> ids;
  for (const json& c : frontier()["cases"]) {
    const std::string id = c["id"];
    EXPECT_TRUE(ids.insert(id).second) << "duplicate id " << id;
    ASSERT_EQ(c["measured"]["quantity"], "tokens_per_s_per_gpu") << id;
    const json r = testing::estimate_ok(c["config"]);
    // The layout reaches the plan: stage count pp, and the decoder layers of every
    // stage's chunks add up to the model's.
    const int64_t pp = c["config"]["training"]["pp"].get<int64_t>();
    EXPECT_EQ(static_cast<int64_t>(r["time"]["stages"].size()), pp) << id;
    const double predicted = r["throughput"]["tokens_per_s_per_gpu"].get<double>();
    const double measured = c["measured"]["value"].get<double>();
    ASSERT_GT(predicted, 0.0) << id;
    const json& b = r["time"]["breakdown"];
    std::printf("%-58s measured %6.0f predicted %6.0f tokens/s/GPU (%+5.1f%%), bubble %.2f s, imbalance %.2f s, "
                "EP exposed %.2f s of %.2f s\n",
                id.c_str(), measured, predicted, 100.0 * (predicted / measured - 1.0),
                b["bubble_s"].get<double>(), b["stage_imbalance_s"].get<double>(),
                b["ep_comm_exposed_s"].get<double>(), r["time"]["iteration_s"].get<double>());
  }
  for (const json& s : frontier()["skipped"]) {
    EXPECT_FALSE(s["reason"].get<std::string>().empty()) << s["id"];
    EXPECT_EQ(ids.count(s["id"].get<std::string>()), 0u) << s["id"] << " is both a case and skipped";
  }
}

TEST(FrontierRecipesTest, EveryFrontierPresetEstimates) {
  // One plan per preset (it need not fit in memory): the preset's fields parse and every layer
  // kind (squared ReLU, GeGLU, interleaved MoE, MLA with 384 experts) has ops.
  const struct {
    const char* preset;
    int64_t tp, pp, ep, gpus;
  } kPlans[] = {{"nemotron4-15b", 4, 1, 1, 8},   {"nemotron4-340b", 8, 12, 1, 96},
                {"grok-1", 4, 4, 2, 32},         {"kimi-k2", 1, 1, 64, 64},
                {"llama4-scout", 2, 1, 8, 16},   {"llama4-maverick", 2, 4, 8, 64},
                {"glm4.5", 2, 4, 16, 128}};
  for (const auto& plan : kPlans) {
    json config = {{"model", plan.preset},
                   {"training",
                    {{"seq_len", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 256},
                     {"tp", plan.tp}, {"pp", plan.pp}, {"ep", plan.ep}, {"sequence_parallel", plan.tp > 1},
                     {"recompute", {{"granularity", "full"}, {"method", "uniform"}, {"num_layers", 1}}}}},
                   {"system", {{"preset", "h100-sxm-80gb"}, {"num_gpus", plan.gpus}}}};
    const json r = testing::estimate_ok(config);
    EXPECT_GT(r["throughput"]["mfu"].get<double>(), 0.0) << plan.preset;
    EXPECT_LT(r["throughput"]["mfu"].get<double>(), 1.0) << plan.preset;
  }
}

}  // namespace
}  // namespace trainsim
