// When nothing fits, the search says which rule blocked the candidates and
// which constraint of the search document would lift it; when a plan fits it
// says nothing. The suggested change is applied and must then find plans.
#include <gtest/gtest.h>

#include "test_util.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

Json search(const Json& document) {
  const Json envelope = Json::parse(search_json(document.dump()));
  EXPECT_TRUE(envelope["ok"].get<bool>()) << envelope;
  return envelope["result"];
}

bool has_hint(const Json& result, const std::string& constraint, const std::string& rule_prefix) {
  for (const Json& h : result["hints"]) {
    if (h["constraint"] == constraint && h["rule"].get<std::string>().rfind(rule_prefix, 0) == 0 &&
        h["count"].get<int64_t>() > 0 && !h["suggestion"].get<std::string>().empty()) {
      return true;
    }
  }
  return false;
}

// 126 layers on 4 or 8 stages: without uneven stages no split is valid.
TEST(SearchHintsTest, PipelineSplitNamesUnevenStagesAndItLiftsTheRule) {
  Json document = Json::parse(R"({"model": {"preset": "llama3-8b", "num_layers": 30},
      "system": "h100-sxm-80gb", "num_gpus": 32, "global_batch_size": 64, "seq_len": 4096,
      "constraints": {"pp": [4, 8], "tp": 8, "micro_batch_size": 1, "uneven_stages": false}})");
  const Json blocked = search(document);
  ASSERT_EQ(blocked["counts"]["feasible"].get<int64_t>(), 0);
  ASSERT_EQ(blocked["counts"]["candidates"].get<int64_t>(), 0);
  EXPECT_TRUE(has_hint(blocked, "/constraints/uneven_stages", "/training/pp: must divide num_layers"))
      << blocked["hints"];
  document["constraints"]["uneven_stages"] = "auto";
  const Json lifted = search(document);
  EXPECT_GT(lifted["counts"]["feasible"].get<int64_t>(), 0);
  EXPECT_GT(lifted["counts"]["uneven_candidates"].get<int64_t>(), 0);
  EXPECT_TRUE(lifted["hints"].empty());
}

// A V schedule held to vpp 1: its own rule is named with the vpp constraint, and
// allowing vpp 2 lifts it.
TEST(SearchHintsTest, ScheduleRuleNamesVppAndItLiftsTheRule) {
  Json document = Json::parse(R"({"model": {"preset": "llama3-8b", "num_layers": 8},
      "system": "h100-sxm-80gb", "num_gpus": 8, "global_batch_size": 64, "seq_len": 4096,
      "constraints": {"pp": 4, "vpp": 1, "micro_batch_size": 1,
                      "pipeline_schedule": "zero_bubble_v"}})");
  const Json blocked = search(document);
  ASSERT_EQ(blocked["counts"]["candidates"].get<int64_t>(), 0);
  EXPECT_TRUE(has_hint(blocked, "/constraints/vpp", "/training/pipeline_schedule: zero_bubble_v needs vpp 2"))
      << blocked["hints"];
  document["constraints"]["vpp"] = 2;
  const Json lifted = search(document);
  EXPECT_GT(lifted["counts"]["feasible"].get<int64_t>(), 0);
  EXPECT_TRUE(lifted["hints"].empty());
}

// A 70B model on 8 GPUs with ZeRO 1 and no full recompute: the memory budget
// blocks every plan; ZeRO 3 and full recompute are named, with the least peak.
TEST(SearchHintsTest, MemoryBudgetNamesZeroStageAndRecompute) {
  Json document = Json::parse(R"({"model": "llama3-70b", "system": "h100-sxm-80gb",
      "num_gpus": 8, "global_batch_size": 16, "seq_len": 4096,
      "constraints": {"micro_batch_size": 1, "recompute": [{"granularity": "none"}]}})");
  const Json blocked = search(document);
  ASSERT_EQ(blocked["counts"]["feasible"].get<int64_t>(), 0);
  ASSERT_GT(blocked["counts"]["candidates"].get<int64_t>(), 0);
  EXPECT_TRUE(has_hint(blocked, "/constraints/zero_stage", "the memory budget")) << blocked["hints"];
  EXPECT_TRUE(has_hint(blocked, "/constraints/recompute", "the memory budget")) << blocked["hints"];
  EXPECT_TRUE(has_hint(blocked, "/num_gpus", "the memory budget")) << blocked["hints"];
  // The closest plan, when any got past the static bound, does not fit either.
  EXPECT_EQ(blocked.contains("closest"), blocked["counts"]["evaluated"].get<int64_t>() > 0);
  if (blocked.contains("closest")) {
    EXPECT_GT(blocked["closest"]["metrics"]["peak_bytes"].get<double>(),
              blocked["memory_budget_bytes"].get<double>());
  }
  document["num_gpus"] = 64;  // the last hint applied
  document["constraints"]["zero_stage"] = {1, 3};
  const Json lifted = search(document);
  EXPECT_GT(lifted["counts"]["feasible"].get<int64_t>(), 0);
  EXPECT_TRUE(lifted["hints"].empty());
}

// A GPU-hour cap below every plan: the cap is the one blocking rule.
TEST(SearchHintsTest, GpuHourCapNamesItself) {
  const Json document = Json::parse(R"({"model": {"preset": "llama3-8b", "num_layers": 8},
      "system": "h100-sxm-80gb", "num_gpus": 8, "global_batch_size": 32, "seq_len": 4096,
      "training": {"train_tokens": 1e12},
      "constraints": {"micro_batch_size": 1, "max_gpu_hours": 1}})");
  const Json blocked = search(document);
  ASSERT_EQ(blocked["counts"]["feasible"].get<int64_t>(), 0);
  ASSERT_EQ(blocked["hints"].size(), 1u) << blocked["hints"];
  EXPECT_EQ(blocked["hints"][0]["constraint"], "/constraints/max_gpu_hours");
}

}  // namespace
}  // namespace trainsim
