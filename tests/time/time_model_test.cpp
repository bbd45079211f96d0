// Time model behaviours: overlap, MoE layer patterns, time to train.
#include <gtest/gtest.h>

#include "interop/interop_test_util.h"
#include "time/collectives.h"
#include "time/op_time.h"

namespace trainsim {
namespace {

nlohmann::json estimate_patch(const char* patch) {
  nlohmann::json config = testing::base_config();
  config.merge_patch(nlohmann::json::parse(patch));
  return testing::estimate_ok(config);
}

TEST(OverlapTest, GradReduceOverlapHidesDpCommButNotItsLastBucket) {
  const char* base = R"({"training": {"tp": 1, "pp": 1, "global_batch_size": 64}, "system": {"num_gpus": 16}})";
  const auto plain = estimate_patch(base);
  nlohmann::json patch = nlohmann::json::parse(base);
  patch["training"]["overlap_grad_reduce"] = true;
  patch["training"]["overlap_param_gather"] = true;
  nlohmann::json config = testing::base_config();
  config.merge_patch(patch);
  const auto overlapped = testing::estimate_ok(config);
  const auto& before = plain["time"]["stages"][0];
  const auto& after = overlapped["time"]["stages"][0];
  EXPECT_EQ(before["dp_comm_s"], after["dp_comm_s"]);
  EXPECT_LT(after["dp_comm_exposed_s"].get<double>(), before["dp_comm_exposed_s"].get<double>());
  EXPECT_GT(after["dp_comm_exposed_s"].get<double>(), 0.0);
}

TEST(OverlapTest, TpCommOverlapNeverIncreasesExposedTpComm) {
  const auto plain = estimate_patch(R"({"training": {"tp": 8, "pp": 1}, "system": {"num_gpus": 16}})");
  const auto overlapped = estimate_patch(
      R"({"training": {"tp": 8, "pp": 1, "tp_comm_overlap": true}, "system": {"num_gpus": 16}})");
  EXPECT_LT(overlapped["time"]["breakdown"]["tp_comm_exposed_s"].get<double>(),
            plain["time"]["breakdown"]["tp_comm_exposed_s"].get<double>());
  EXPECT_LE(overlapped["time"]["iteration_s"].get<double>(), plain["time"]["iteration_s"].get<double>());
}

TEST(OverlapTest, RingAttentionHidesKvExchangeBehindAttention) {
  const auto a2a = estimate_patch(
      R"({"training": {"tp": 1, "pp": 1, "cp": 8, "seq_len": 32768, "global_batch_size": 2, "cp_comm_type": "a2a"}, "system": {"num_gpus": 16}})");
  const auto ring = estimate_patch(
      R"({"training": {"tp": 1, "pp": 1, "cp": 8, "seq_len": 32768, "global_batch_size": 2, "cp_comm_type": "p2p"}, "system": {"num_gpus": 16}})");
  EXPECT_GT(a2a["time"]["breakdown"]["cp_comm_exposed_s"].get<double>(), 0.0);
  EXPECT_LT(ring["time"]["breakdown"]["cp_comm_exposed_s"].get<double>(),
            a2a["time"]["breakdown"]["cp_comm_exposed_s"].get<double>());
}

// A stage's gradient reduction starts when its own last backward ends (Megatron's
// finalize_model_grads runs when the rank's schedule returns). In 1F1B the last
// stage finishes first, so its reduction hides in its cool-down idle and only the
// parameter gather after the optimizer step stays; the first stage, which finishes
// last, exposes its whole reduction as before.
TEST(OverlapTest, LaterPipelineStagesHideTheirGradientReductionInTheCoolDown) {
  const auto r = estimate_patch(
      R"({"training": {"tp": 1, "pp": 4, "global_batch_size": 32}, "system": {"num_gpus": 64}})");
  const auto& stages = r["time"]["stages"];
  const auto& first = stages[0];
  const auto& last = stages[3];
  ASSERT_LT(last["pipeline_s"].get<double>(), first["pipeline_s"].get<double>());
  EXPECT_NEAR(first["dp_comm_exposed_s"].get<double>(), first["dp_comm_s"].get<double>(), 1e-12);
  EXPECT_GT(last["dp_comm_exposed_s"].get<double>(), 0.0);
  EXPECT_LT(last["dp_comm_exposed_s"].get<double>(), 0.5 * last["dp_comm_s"].get<double>());
  EXPECT_LT(last["total_s"].get<double>(), first["total_s"].get<double>());
  EXPECT_EQ(r["time"]["critical_stage"], 0);
}

// A cp 8 ring over tp 2 spans 16 GPUs: on 8-GPU nodes two of its hops go through
// a NIC (50 GB/s per GPU), on a 16-GPU node every hop stays on NVLink. Each step's
// K/V transfer waits on the slowest hop and hides behind one attention block only.
TEST(OverlapTest, RingAttentionAcrossNodesCostsMoreThanInsideOne) {
  nlohmann::json document = testing::base_config();
  document["training"].merge_patch(nlohmann::json::parse(
      R"({"tp": 2, "pp": 1, "cp": 8, "seq_len": 8192, "global_batch_size": 4, "cp_comm_type": "p2p"})"));
  Config config;
  Issues issues;
  ASSERT_TRUE(parse_config(document.dump(), config, issues));
  const Estimate across = estimate(config);
  config.system.gpus_per_node = 16;
  const Estimate inside = estimate(config);
  EXPECT_GT(across.time.breakdown.cp_comm_exposed_s, inside.time.breakdown.cp_comm_exposed_s);
  EXPECT_GT(across.time.iteration_s, inside.time.iteration_s);
}

// Transformer Engine's ring attention backward (AttnFuncWithCPAndKVP2P.backward)
// sends the [K/V, dK/dV] buffer: step 0 K/V only, steps 1 .. cp-2 both, the last
// step dK/dV only, each waited on after that step's attention block. With an op
// whose compute is negligible, forward exposes its cp - 1 K/V steps and backward
// two single and cp - 2 double steps: about twice forward's traffic.
TEST(OverlapTest, RingAttentionBackwardAlsoSendsDkDv) {
  nlohmann::json document = testing::base_config();
  document["training"].merge_patch(nlohmann::json::parse(
      R"({"tp": 1, "pp": 1, "cp": 8, "seq_len": 8192, "global_batch_size": 2, "cp_comm_type": "p2p"})"));
  const Config config = testing::parse_ok(document);
  constexpr double kBlockBytes = 64e6;  // one rank's K/V
  Op op;
  op.name = "attention";
  for (const Pass pass : {Pass::kForward, Pass::kBackwardData}) {
    op.cost[static_cast<size_t>(pass)].bytes = 1.0;  // negligible compute per step
    op.cost[static_cast<size_t>(pass)].kernels = 1.0;
  }
  op.comms.push_back({Pass::kForward, Collective::kAllGather, CommGroup::kCp, 8.0 * kBlockBytes, true});
  op.comms.push_back({Pass::kBackwardData, Collective::kReduceScatter, CommGroup::kCp, 8.0 * kBlockBytes, true});
  const OpTime t = op_time(op, config);
  const ParallelSpec& p = config.training.parallel;
  const double single_s = ring_step_time_s(kBlockBytes, Group::kCp, p, config.system);
  const double double_s = ring_step_time_s(2.0 * kBlockBytes, Group::kCp, p, config.system);
  const double forward_s = t.comm[static_cast<size_t>(Pass::kForward)].cp_s;
  const double backward_s = t.comm[static_cast<size_t>(Pass::kBackwardData)].cp_s;
  const double block_f = t.compute_s[static_cast<size_t>(Pass::kForward)] / 8.0;
  const double block_b = t.compute_s[static_cast<size_t>(Pass::kBackwardData)] / 8.0;
  EXPECT_NEAR(forward_s, 7.0 * (single_s - block_f), 1e-12);
  EXPECT_NEAR(backward_s, 2.0 * (single_s - block_b) + 6.0 * (double_s - block_b), 1e-12);
  EXPECT_GT(backward_s, 1.9 * forward_s);
  EXPECT_LT(backward_s, 2.0 * forward_s + 1e-12);
}

// Every kernel pays the GPU's fixed per-kernel cost, a compute-bound GEMM as much
// as a copy (it used to vanish inside max(math, streaming + fixed)); kernels that
// go round several streams (a grouped linear's expert GEMMs over Transformer
// Engine's 4 compute streams) put only a stream's share of them in series.
TEST(KernelFixedCostTest, ComputeBoundKernelsPayItTooAndStreamsShareIt) {
  nlohmann::json document = testing::base_config();
  const Config config = testing::parse_ok(document);
  const double latency_s = config.system.efficiency.memory.latency_s;
  ASSERT_GT(latency_s, 0.0);
  Op op;
  op.name = "gemm";
  op.kind = OpKind::kLinear;
  op.gemm = {1, 8192, 8192, 8192};
  PassCost& cost = op.cost[static_cast<size_t>(Pass::kForward)];
  cost.flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  cost.bytes = 3.0 * 2.0 * 8192.0 * 8192.0;
  cost.compute = ComputeClass::kGemm;
  cost.kernels = 1.0;
  const OpTime one = op_time(op, config);
  const auto forward = static_cast<size_t>(Pass::kForward);
  ASSERT_FALSE(one.memory_bound);
  cost.kernels = 9.0;
  const OpTime nine = op_time(op, config);
  EXPECT_NEAR(nine.compute_s[forward] - one.compute_s[forward], 8.0 * latency_s, 1e-12);
  cost.streams = 4.0;
  const OpTime spread = op_time(op, config);
  EXPECT_NEAR(spread.compute_s[forward] - one.compute_s[forward], (9.0 / 4.0 - 1.0) * latency_s, 1e-12);
  cost.kernels = 2.0;  // fewer kernels than streams: each still pays once
  const OpTime two = op_time(op, config);
  EXPECT_NEAR(two.compute_s[forward], one.compute_s[forward], 1e-12);
}

TEST(MoeLayerPatternTest, EveryOtherLayerMoeHalvesTheExpertParameters) {
  const char* all = R"({"model": {"name": "toy", "num_layers": 4, "hidden_size": 1024, "num_attention_heads": 8,
      "ffn_hidden_size": 4096, "vocab_size": 32000, "moe": {"num_experts": 8, "top_k": 2, "expert_ffn_hidden_size": 1024}},
      "training": {"tp": 1, "pp": 1, "ep": 8, "global_batch_size": 16}, "system": {"num_gpus": 8}})";
  nlohmann::json every_other = nlohmann::json::parse(all);
  every_other["model"]["moe"]["moe_layer_freq"] = 2;
  nlohmann::json listed = nlohmann::json::parse(all);
  listed["model"]["moe"]["moe_layer_freq"] = {1, 0, 1, 0};
  nlohmann::json config = testing::base_config();
  config.merge_patch(nlohmann::json::parse(all));
  const double all_moe = testing::estimate_ok(config)["memory"]["stages"][0]["expert_parameters"];
  config = testing::base_config();
  config.merge_patch(every_other);
  const auto half = testing::estimate_ok(config);
  config = testing::base_config();
  config.merge_patch(listed);
  const auto half_listed = testing::estimate_ok(config);
  EXPECT_DOUBLE_EQ(half["memory"]["stages"][0]["expert_parameters"].get<double>(), all_moe / 2);
  EXPECT_EQ(half["model"]["num_moe_layers"], 2);
  EXPECT_EQ(half_listed["memory"]["stages"][0]["expert_parameters"],
            half["memory"]["stages"][0]["expert_parameters"]);
}

TEST(TrainingTimeTest, TimeToTrainIsTokensOverThroughput) {
  const auto r = estimate_patch(R"({"training": {"train_tokens": 1e12}})");
  const auto& t = r["throughput"];
  EXPECT_NEAR(t["time_to_train_s"].get<double>(), 1e12 / t["tokens_per_s"].get<double>(), 1e-6);
  EXPECT_NEAR(t["gpu_hours_to_train"].get<double>(), t["gpu_hours_per_trillion_tokens"].get<double>(), 1e-6);
}

}  // namespace
}  // namespace trainsim
