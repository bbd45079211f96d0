// Tensor-parallel communication overlap (time/tp_overlap.h): Transformer Engine's
// userbuffers methods against hand-computed closed forms, and end-to-end estimates.
#include <gtest/gtest.h>

#include "test_util.h"
#include "schema/config_reader.h"
#include "time/tp_overlap.h"
#include "validate.h"

namespace trainsim {
namespace {

using nlohmann::json;

TEST(TpOverlapTest, MethodsFollowTransformerEngineDefaults) {
  // initialize_ub: qkv/fc1 fprop and proj/fc2 dgrad all-gathers ring-exchange, proj/fc2
  // fprop reduce-scatters pipeline, the column linears' backward pair is bulk.
  EXPECT_EQ(tp_overlap_method(Collective::kAllGather, Pass::kForward), TpOverlapMethod::kRingExchange);
  EXPECT_EQ(tp_overlap_method(Collective::kAllGather, Pass::kBackwardData), TpOverlapMethod::kRingExchange);
  EXPECT_EQ(tp_overlap_method(Collective::kReduceScatter, Pass::kForward), TpOverlapMethod::kPipeline);
  EXPECT_EQ(tp_overlap_method(Collective::kReduceScatter, Pass::kBackwardData), TpOverlapMethod::kBulk);
  EXPECT_EQ(tp_overlap_method(Collective::kAllGather, Pass::kBackwardWeight), TpOverlapMethod::kBulk);
}

TEST(TpOverlapTest, RingExchangeExposesOnlyStepsLongerThanTheirChunk) {
  // tp 4, GEMM 8 s: 2 s per chunk. Steps of 2 s hide; steps of 3 s expose 1 s each, 3 of them.
  EXPECT_DOUBLE_EQ(tp_overlap_cost(TpOverlapMethod::kRingExchange, 8.0, 6.0, 2.0, 4).exposed_comm_s, 0.0);
  EXPECT_DOUBLE_EQ(tp_overlap_cost(TpOverlapMethod::kRingExchange, 8.0, 9.0, 3.0, 4).exposed_comm_s, 3.0);
  // 4 GEMMs and 3 copies, one GEMM and one collective already counted.
  EXPECT_DOUBLE_EQ(tp_overlap_cost(TpOverlapMethod::kRingExchange, 8.0, 9.0, 3.0, 4).extra_launches, 5.0);
}

TEST(TpOverlapTest, PipelineExposesTheLastChunksReduceScatter) {
  // GEMM 4 s in 4 chunks of 1 s. Reduce-scatter 2 s (0.5 s a chunk): only the last
  // chunk's 0.5 s stays exposed, where hiding behind the whole GEMM would expose nothing.
  EXPECT_DOUBLE_EQ(tp_overlap_cost(TpOverlapMethod::kPipeline, 4.0, 2.0, 0.0, 8).exposed_comm_s, 0.5);
  // Reduce-scatter 8 s (2 s a chunk): 1 + 3 x 2 + 2 = 9 s for 4 s of GEMM.
  EXPECT_DOUBLE_EQ(tp_overlap_cost(TpOverlapMethod::kPipeline, 4.0, 8.0, 0.0, 8).exposed_comm_s, 5.0);
}

TEST(TpOverlapTest, BulkHidesUpToItsGemmAndNothingWithoutTensorParallelism) {
  EXPECT_DOUBLE_EQ(tp_overlap_cost(TpOverlapMethod::kBulk, 4.0, 3.0, 0.0, 2).exposed_comm_s, 0.0);
  EXPECT_DOUBLE_EQ(tp_overlap_cost(TpOverlapMethod::kBulk, 4.0, 7.0, 0.0, 2).exposed_comm_s, 3.0);
  EXPECT_DOUBLE_EQ(tp_overlap_cost(TpOverlapMethod::kPipeline, 4.0, 7.0, 0.0, 1).exposed_comm_s, 0.0);
}

double tp_exposed_s(const json& config) {
  return testing::estimate_ok(config)["time"]["breakdown"]["tp_comm_exposed_s"].get<double>();
}

TEST(TpOverlapTest, OverlapHidesTheLinearsCollectivesButNotTheOthers) {
  for (int64_t tp : {2, 4, 8}) {
    SCOPED_TRACE(tp);
    json plain = testing::base_config();
    plain["training"]["tp"] = tp;
    plain["training"]["pp"] = 1;
    plain["system"]["num_gpus"] = tp;
    json overlap = plain;
    overlap["training"]["tp_comm_overlap"] = true;
    const double a = tp_exposed_s(plain);
    const double b = tp_exposed_s(overlap);
    EXPECT_LT(b, 0.5 * a);
    // The vocab-parallel embedding and loss all-reduces and each pipeline
    // reduce-scatter's last chunk stay exposed.
    EXPECT_GT(b, 0.0);
  }
}

TEST(TpOverlapTest, RefusedWithoutSequenceParallelism) {
  json config = testing::base_config();
  config["training"]["sequence_parallel"] = false;
  config["training"]["tp_comm_overlap"] = true;
  Config parsed;
  Issues issues;
  ASSERT_TRUE(schema::read_config(config.dump(), parsed, issues));
  bool found = false;
  for (const Issue& issue : validate(parsed)) found = found || issue.path == "/training/tp_comm_overlap";
  EXPECT_TRUE(found);
  config["training"]["tp"] = 1;
  config["training"]["pp"] = 2;
  config["system"]["num_gpus"] = 16;
  config["training"]["global_batch_size"] = 64;
  EXPECT_NO_THROW(testing::estimate_ok(config));
}

}  // namespace
}  // namespace trainsim
