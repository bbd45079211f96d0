// Megatron-FSDP's transient unit buffers (memory/stage_statics.cpp add_fsdp_buffers): the
// gathered parameters prefetched up to half the communication unit, the unsharded
// gradients queued for their reduce-scatter up to the unit, and with --fsdp-double-buffer
// a fixed pool of two layers each beside the embedding's and output layer's buckets.
#include <gtest/gtest.h>

#include "test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;

// llama3-8b at tp 2, pp 2, dp 4: stage 0 holds the embedding and 16 layers (per GPU).
constexpr double kEmbedding = 128256.0 * 4096.0 / 2.0;
constexpr double kLayer = (4096.0 * (4096.0 + 2.0 * 1024.0) + 4096.0 * 4096.0 + 3.0 * 4096.0 * 14336.0) / 2.0;

double stage0_buffers(const json& patch) {
  json config = testing::base_config();
  config["training"]["grad_reduce_in_bf16"] = false;
  config.merge_patch(patch);
  return testing::estimate_ok(config)["memory"]["stages"][0]["buffers_bytes"].get<double>();
}

double relative(double a) { return 1e-3 * a; }

TEST(FsdpBuffersTest, DoubleBufferingHoldsTwoLayersBesideTheEmbedding) {
  const double zero1 = stage0_buffers(json::parse(R"({"training": {"zero_stage": 1}})"));
  const double pooled = stage0_buffers(json::parse(R"({"training": {"zero_stage": 3, "fsdp_double_buffer": true}})"));
  // fp32 gradients and bf16 weights of two layers and the embedding.
  const double expected = (4.0 + 2.0) * (2.0 * kLayer + kEmbedding);
  EXPECT_NEAR(pooled - zero1, expected, relative(expected));
  // Without the pool, Megatron-FSDP's default budgets hold more of both.
  const double budget = stage0_buffers(json::parse(R"({"training": {"zero_stage": 3}})"));
  EXPECT_GT(budget, pooled);
}

TEST(FsdpBuffersTest, TheCommunicationUnitSetsTheQueueAndThePrefetch) {
  const double zero1 = stage0_buffers(json::parse(R"({"training": {"zero_stage": 1}})"));
  // 240M elements: the queue keeps two layers (218M), so the unit just completed and the
  // next make 4 layers, or 3 layers and the embedding when the embedding comes next; the
  // prefetch (120M) reaches 2 layers ahead, the embedding and 2 layers the largest window.
  const double unit = 240e6;
  const double small = stage0_buffers(json::parse(
      R"({"training": {"zero_stage": 3, "fsdp_communication_unit_elements": 240000000}})"));
  const double grads = 4.0 * (3.0 * kLayer + kEmbedding);
  const double weights = 2.0 * (2.0 * kLayer + kEmbedding);
  ASSERT_GT(2.0 * kLayer, unit / 2.0);
  ASSERT_LT(2.0 * kLayer, unit);
  EXPECT_NEAR(small - zero1, grads + weights, relative(grads + weights));
  // Larger units never hold less.
  double previous = small;
  for (const char* elements : {"500000000", "1000000000", "4000000000"}) {
    const double b = stage0_buffers(json::parse(
        std::string(R"({"training": {"zero_stage": 3, "fsdp_communication_unit_elements": )") + elements + "}}"));
    EXPECT_GE(b, previous) << elements;
    previous = b;
  }
  // A unit above the whole stage holds every layer's gradients and prefetches them all.
  const double all = 4.0 * (16.0 * kLayer + kEmbedding) + 2.0 * (16.0 * kLayer + kEmbedding);
  EXPECT_NEAR(previous - zero1, all, relative(all));
}

TEST(FsdpBuffersTest, AOneElementUnitNeitherQueuesNorPrefetches) {
  // Half of 1, rounded down as Megatron-FSDP does, is no prefetch: one unit's weights at a
  // time, the embedding the largest; the queue drains to empty, so the unit just completed
  // and the one being produced hold gradients, the embedding and a layer at most.
  const double zero1 = stage0_buffers(json::parse(R"({"training": {"zero_stage": 1}})"));
  const double one = stage0_buffers(
      json::parse(R"({"training": {"zero_stage": 3, "fsdp_communication_unit_elements": 1}})"));
  const double expected = 4.0 * (kLayer + kEmbedding) + 2.0 * kEmbedding;
  EXPECT_NEAR(one - zero1, expected, relative(expected));
}

TEST(FsdpBuffersTest, ZeroTwoQueuesGradientsAndGathersNothing) {
  const double zero1 = stage0_buffers(json::parse(R"({"training": {"zero_stage": 1}})"));
  const double zero2 = stage0_buffers(json::parse(
      R"({"training": {"zero_stage": 2, "fsdp_communication_unit_elements": 240000000}})"));
  const double grads = 4.0 * (3.0 * kLayer + kEmbedding);
  EXPECT_NEAR(zero2 - zero1, grads, relative(grads));
}

}  // namespace
}  // namespace trainsim
