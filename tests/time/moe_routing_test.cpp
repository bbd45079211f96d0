// How many bytes a routed all-to-all moves (time/moe_routing.h): Megatron's alltoall
// dispatcher sends every (token, expert) copy; the flex dispatcher (DeepEP / HybridEP)
// sends a token once per destination node across nodes and once per destination rank
// inside one NVLink domain. Closed forms from the hypergeometric count of the experts'
// holders a token reaches.
#include <gtest/gtest.h>

#include <cstdint>

#include "time/moe_routing.h"

namespace trainsim {
namespace {

// P(none of k uniform picks out of `total` experts lands in `excluded` of them).
double none_chosen(int64_t total, int64_t excluded, int64_t k) {
  double p = 1.0;
  for (int64_t i = 0; i < k; ++i) {
    p *= static_cast<double>(total - excluded - i) / static_cast<double>(total - i);
  }
  return p;
}

Config moe_config(MoeDispatcher dispatcher, int64_t ep) {
  Config config;
  MoeSpec moe;
  moe.num_experts = 128;  // Qwen3-30B-A3B / Qwen3-235B-A22B routing: 128 experts, top 8
  moe.top_k = 8;
  config.model.moe = moe;
  config.training.moe.dispatcher = dispatcher;
  config.training.parallel.ep = ep;
  return config;
}

TEST(MoeRoutingTest, AllToAllDispatcherSendsEveryCopy) {
  const Config config = moe_config(MoeDispatcher::kAllToAll, 8);
  EXPECT_DOUBLE_EQ(routed_all_to_all_scale(config, 1), 1.0);
  EXPECT_DOUBLE_EQ(routed_all_to_all_scale(config, 4), 1.0);
}

TEST(MoeRoutingTest, FlexInsideOneDomainSendsOneCopyPerDestinationRank) {
  // ep 8 in one NVLink domain: 16 experts per rank; a token reaches
  // 8 (1 - C(112, 8) / C(128, 8)) = 5.34 ranks on average, so 5.34 / 8 of the copies move.
  const Config config = moe_config(MoeDispatcher::kFlex, 8);
  const double ranks = 8.0 * (1.0 - none_chosen(128, 16, 8));
  EXPECT_NEAR(ranks, 5.339, 0.001);
  EXPECT_NEAR(routed_all_to_all_scale(config, 1), ranks / 8.0, 1e-12);
  // ep 128 (one expert per rank): every copy goes to a different rank.
  EXPECT_NEAR(routed_all_to_all_scale(moe_config(MoeDispatcher::kFlex, 128), 1), 1.0, 1e-12);
  // No expert parallelism: nothing to deduplicate, nothing moves anyway.
  EXPECT_DOUBLE_EQ(routed_all_to_all_scale(moe_config(MoeDispatcher::kFlex, 1), 1), 1.0);
}

TEST(MoeRoutingTest, FlexAcrossNodesSendsOneCopyPerDestinationNode) {
  // ep 16 over 2 nodes: the NICs carry 2 (1 - C(64, 8) / C(128, 8)) / 8 of the copies,
  // whatever the ranks per node.
  const Config config = moe_config(MoeDispatcher::kFlex, 16);
  EXPECT_NEAR(routed_all_to_all_scale(config, 2), 2.0 * (1.0 - none_chosen(128, 64, 8)) / 8.0, 1e-12);
}

TEST(MoeRoutingTest, MoreRanksPerTokenNeverMoveFewerBytes) {
  double previous = 0.0;
  for (const int64_t ep : {2, 4, 8, 16, 32, 64, 128}) {
    const double scale = routed_all_to_all_scale(moe_config(MoeDispatcher::kFlex, ep), 1);
    EXPECT_GT(scale, previous) << "ep " << ep;
    EXPECT_LE(scale, 1.0) << "ep " << ep;
    previous = scale;
  }
}

}  // namespace
}  // namespace trainsim
