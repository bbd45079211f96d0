// Memory model: closed forms the op-level model must reproduce, and the
// Megatron schedule facts it encodes.
#include <gtest/gtest.h>

#include "model/pipeline_layout.h"
#include "test_util.h"
#include "trainsim/units.h"

namespace trainsim {
namespace {

nlohmann::json config_with(const char* patch) {
  nlohmann::json config = testing::base_config();
  config.merge_patch(nlohmann::json::parse(patch));
  return config;
}

TEST(StaticMemoryTest, AdamWithoutZeroTakes18BytesPerParam) {
  // bf16 weight 2 + fp32 main grad 4 + fp32 master/m/v 12 (Megatron
  // theoretical_memory_usage.py without --use-distributed-optimizer).
  const auto r = testing::estimate_ok(config_with(
      R"({"training": {"zero_stage": 0, "tp": 1, "pp": 1, "global_batch_size": 16}, "system": {"num_gpus": 16}})"));
  const auto& s = r["memory"]["stages"][0];
  const double params = s["dense_parameters"].get<double>();
  EXPECT_DOUBLE_EQ(s["parameters_bytes"].get<double>(), 2 * params);
  EXPECT_DOUBLE_EQ(s["gradients_bytes"].get<double>(), 4 * params);
  EXPECT_DOUBLE_EQ(s["optimizer_bytes"].get<double>(), 12 * params);
}

TEST(StaticMemoryTest, DistributedOptimizerShardsStatesOverDpTimesCp) {
  const auto r = testing::estimate_ok(config_with(
      R"({"training": {"zero_stage": 1, "tp": 1, "pp": 1, "cp": 2, "seq_len": 4096, "global_batch_size": 16}, "system": {"num_gpus": 16}})"));
  const auto& s = r["memory"]["stages"][0];
  EXPECT_DOUBLE_EQ(s["optimizer_bytes"].get<double>(), 12 * s["dense_parameters"].get<double>() / 16);
}

TEST(ActivationTest, DenseLayerMatchesTheClosedForm) {
  // SimuMax-validated closed form (digest 3.3, verified on its oracle):
  // A_layer = b*s/tp * (8h + 4ad + 4gd + 2a + 6f) with SP, flash, fused kernels.
  const auto one = testing::estimate_ok(config_with(
      R"({"model": {"preset": "llama3-8b", "num_layers": 2}, "training": {"pp": 1, "tp": 2, "global_batch_size": 8}, "system": {"num_gpus": 2}})"));
  const auto two = testing::estimate_ok(config_with(
      R"({"model": {"preset": "llama3-8b", "num_layers": 4}, "training": {"pp": 1, "tp": 2, "global_batch_size": 8}, "system": {"num_gpus": 2}})"));
  const double per_layer = (two["memory"]["stages"][0]["activations_per_micro_batch_bytes"].get<double>() -
                            one["memory"]["stages"][0]["activations_per_micro_batch_bytes"].get<double>()) / 2;
  const double b = 1, s = 4096, tp = 2, h = 4096, a = 32, g = 8, d = 128, f = 14336;
  EXPECT_DOUBLE_EQ(per_layer, b * s / tp * (8 * h + 4 * a * d + 4 * g * d + 2 * a + 6 * f));
}

TEST(ActivationTest, FullRecomputeKeepsOnlyEachLayersInput) {
  const auto none = testing::estimate_ok(config_with(
      R"({"model": {"preset": "llama3-8b", "num_layers": 4}, "training": {"pp": 1, "tp": 2, "global_batch_size": 8}, "system": {"num_gpus": 2}})"));
  const auto full = testing::estimate_ok(config_with(
      R"({"model": {"preset": "llama3-8b", "num_layers": 4}, "training": {"pp": 1, "tp": 2, "global_batch_size": 8, "recompute": {"granularity": "full", "method": "block", "num_layers": 4}}, "system": {"num_gpus": 2}})"));
  const double head = none["memory"]["stages"][0]["activations_per_micro_batch_bytes"].get<double>() -
                      4 * (4096.0 / 2) * (8 * 4096 + 4 * 32 * 128 + 4 * 8 * 128 + 2 * 32 + 6 * 14336);
  // 2 * b * s * h / tp bytes per layer (bf16 layer input, sequence-parallel shard).
  EXPECT_DOUBLE_EQ(full["memory"]["stages"][0]["activations_per_micro_batch_bytes"].get<double>() - head,
                   4 * 2.0 * 4096 * 4096 / 2);
}

TEST(InFlightTest, StageRHoldsMinOfPpMinusRAndMicroBatches) {
  // Megatron 1F1B: warm-up min(pp - r - 1, m) forwards, then one more in flight.
  const auto r = testing::estimate_ok(config_with(
      R"({"training": {"pp": 4, "tp": 1, "global_batch_size": 32}, "system": {"num_gpus": 16}})"));
  const auto& stages = r["memory"]["stages"];
  for (int s = 0; s < 4; ++s) EXPECT_EQ(stages[s]["in_flight_micro_batches"], 4 - s);
  const auto few = testing::estimate_ok(config_with(
      R"({"training": {"pp": 4, "tp": 1, "global_batch_size": 8}, "system": {"num_gpus": 32}})"));
  EXPECT_EQ(few["memory"]["stages"][0]["in_flight_micro_batches"], 1);  // 1 micro-batch per dp rank
}

TEST(InFlightTest, InterleavingAddsTheVirtualChunksWarmup) {
  const auto r = testing::estimate_ok(config_with(
      R"({"training": {"pp": 4, "vpp": 2, "tp": 1, "global_batch_size": 32}, "system": {"num_gpus": 16}})"));
  // Stage 0 warm-up (pp-1)*2 + (vpp-1)*pp = 10 chunk passes, peak at the 11th.
  EXPECT_EQ(r["memory"]["stages"][0]["in_flight_micro_batches"], 11);
}

ModelSpec layers(int64_t num_layers) {
  ModelSpec model;
  model.num_layers = num_layers;
  return model;
}

TEST(PipelineLayoutTest, UnevenFirstAndLastStages) {
  ParallelSpec p;
  p.pp = 4;
  p.num_layers_in_first_stage = 6;
  p.num_layers_in_last_stage = 6;
  ASSERT_TRUE(pipeline_layout_issues(layers(32), p).empty());
  const PipelineLayout layout = pipeline_layout(layers(32), p);
  EXPECT_EQ(layout[0][0].num_layers, 6);
  EXPECT_EQ(layout[1][0].num_layers, 10);
  EXPECT_EQ(layout[2][0].first_layer, 16);
  EXPECT_EQ(layout[3][0].num_layers, 6);
}

TEST(PipelineLayoutTest, AccountForEmbeddingAndLossTakesALayerSlot) {
  ParallelSpec p;
  p.pp = 4;
  p.account_for_embedding_in_pipeline_split = true;
  p.account_for_loss_in_pipeline_split = true;
  ASSERT_TRUE(pipeline_layout_issues(layers(30), p).empty());
  const PipelineLayout layout = pipeline_layout(layers(30), p);
  EXPECT_EQ(layout[0][0].num_layers, 7);
  EXPECT_EQ(layout[1][0].num_layers, 8);
  EXPECT_EQ(layout[3][0].num_layers, 7);
}

TEST(PipelineLayoutTest, InterleavedChunksTakeLayersRoundRobin) {
  ParallelSpec p;
  p.pp = 2;
  p.vpp = 2;
  const PipelineLayout layout = pipeline_layout(layers(8), p);
  EXPECT_EQ(layout[0][0].first_layer, 0);
  EXPECT_EQ(layout[1][0].first_layer, 2);
  EXPECT_EQ(layout[0][1].first_layer, 4);
  EXPECT_EQ(layout[1][1].first_layer, 6);
}

TEST(MoeMemoryTest, DenseLayersFollowTheirGlobalIndex) {
  // DeepSeek-V3 has 3 leading dense layers: with 2 layers per stage the third
  // dense layer lands on stage 1 (Megatron places layers by global index).
  const auto r = testing::estimate_ok(nlohmann::json::parse(R"({
    "model": {"preset": "deepseek-v3", "num_layers": 8},
    "training": {"seq_len": 4096, "micro_batch_size": 1, "num_micro_batches": 8, "pp": 4, "ep": 2},
    "system": {"preset": "h100-sxm-80gb", "num_gpus": 8}})"));
  const auto& stages = r["memory"]["stages"];
  EXPECT_EQ(stages[0]["expert_parameters"].get<double>(), 0.0);
  EXPECT_LT(stages[1]["expert_parameters"].get<double>(), stages[2]["expert_parameters"].get<double>());
}

TEST(PresetsTest, EveryModelPresetEstimatesOnEverySystem) {
  const nlohmann::json list = nlohmann::json::parse(presets_json())["result"];
  for (const auto& model : list["models"]) {
    for (const auto& system : list["systems"]) {
      const nlohmann::json preset = nlohmann::json::parse(preset_json(model["id"].get<std::string>()))["result"]["model"];
      const int64_t heads = preset["num_attention_heads"];
      nlohmann::json training = {{"seq_len", 4096}, {"micro_batch_size", 1}, {"num_micro_batches", 8},
                                 {"tp", heads % 8 == 0 && preset.value("num_kv_heads", heads) % 8 == 0 ? 8 : 4}};
      if (preset.contains("moe")) training["ep"] = 2;
      const nlohmann::json envelope = testing::run_estimate(
          {{"model", model["id"]}, {"training", training}, {"system", {{"preset", system["id"]}, {"num_gpus", 64}}}});
      EXPECT_TRUE(envelope["ok"].get<bool>()) << model["id"] << " on " << system["id"] << ": " << envelope.dump();
      if (!envelope["ok"].get<bool>()) continue;
      const auto& result = envelope["result"];
      EXPECT_GT(result["memory"]["peak_bytes"].get<double>(), 0.0);
      EXPECT_GT(result["time"]["iteration_s"].get<double>(), 0.0);
      EXPECT_GT(result["throughput"]["mfu"].get<double>(), 0.0);
      EXPECT_LT(result["throughput"]["mfu"].get<double>(), 1.0) << model["id"] << " on " << system["id"];
    }
  }
}

}  // namespace
}  // namespace trainsim
