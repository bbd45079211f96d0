// When the sizes do not add up (num_gpus not a multiple of tp*pp*cp), the
// reader still names the fields that break their own rules: the root cause
// is often there (tp = 3 on a model with 64 attention heads).
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

bool has_issue(const nlohmann::json& envelope, const std::string& path, const std::string& message) {
  for (const auto& e : envelope["errors"]) {
    if (e["path"] == path && e["message"].get<std::string>().find(message) != std::string::npos) return true;
  }
  return false;
}

TEST(SizeDerivationErrorsTest, TpThatDividesNoHeadCountIsNamedNextToTheGpuCount) {
  const auto envelope = nlohmann::json::parse(estimate_json(R"({
    "model": "llama3-70b",
    "training": {"seq_len": 8192, "micro_batch_size": 1, "global_batch_size": 1024, "tp": 3, "pp": 4},
    "system": {"preset": "h100-sxm-80gb", "num_gpus": 64}})"));
  ASSERT_FALSE(envelope["ok"]);
  EXPECT_TRUE(has_issue(envelope, "/system/num_gpus", "must be a multiple of tp*pp*cp (12)")) << envelope.dump();
  EXPECT_TRUE(has_issue(envelope, "/training/tp", "must divide num_attention_heads (64), got 3")) << envelope.dump();
  EXPECT_TRUE(has_issue(envelope, "/training/tp", "must divide num_kv_heads (8), got 3")) << envelope.dump();
}

TEST(SizeDerivationErrorsTest, NoRuleThatNeedsTheSizesIsGuessed) {
  // dp is unknown here: the world-size and ep*etp | tp*cp*dp rules stay silent.
  const auto envelope = nlohmann::json::parse(estimate_json(R"({
    "model": "mixtral-8x7b",
    "training": {"seq_len": 4096, "micro_batch_size": 1, "global_batch_size": 64, "tp": 2, "pp": 3, "ep": 8},
    "system": {"preset": "h100-sxm-80gb", "num_gpus": 64}})"));
  ASSERT_FALSE(envelope["ok"]);
  EXPECT_TRUE(has_issue(envelope, "/system/num_gpus", "must be a multiple of tp*pp*cp (6)")) << envelope.dump();
  for (const auto& e : envelope["errors"]) {
    EXPECT_EQ(e["message"].get<std::string>().find("tp*pp*dp*cp"), std::string::npos) << e.dump();
    EXPECT_EQ(e["message"].get<std::string>().find("must divide tp*cp*dp"), std::string::npos) << e.dump();
  }
}

TEST(SizeDerivationErrorsTest, AValidSizeDerivationAddsNothing) {
  const auto envelope = nlohmann::json::parse(estimate_json(testing::base_config().dump()));
  EXPECT_TRUE(envelope["ok"]) << envelope.dump();
}

}  // namespace
}  // namespace trainsim
