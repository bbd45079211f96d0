// More recomputation never raises the peak: selective core_attn recompute on
// DeepSeek-V2-Lite (MLA without a q compression) stored the latent and
// up-projected tensors again at every split/concat between the projections
// and core attention, and its peak rose above no recompute at all. Megatron's
// core_attn checkpoint wraps core attention alone (its inputs are the finished
// q, k, v: megatron/core/transformer/multi_latent_attention.py forward,
// attention.py _checkpointed_attention_forward).
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;

double peak_of(json config, const json& recompute) {
  config["training"]["recompute"] = recompute;
  return testing::estimate_ok(config)["memory"]["peak_bytes"].get<double>();
}

const json kNone = {{"granularity", "none"}};
const json kCoreAttn = {{"granularity", "selective"}, {"modules", {"core_attn"}}};

TEST(RecomputePeakTest, CoreAttentionRecomputeNeverRaisesTheDeepSeekV2LitePeak) {
  for (const int tp : {1, 2}) {
    for (const int cp : {1, 2}) {
      const json config = {
          {"model", "deepseek-v2-lite"},
          {"training", {{"seq_len", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 8},
                        {"tp", tp}, {"cp", cp}, {"ep", 8 / tp / cp < 8 ? 2 : 8}, {"sequence_parallel", tp > 1}}},
          {"system", {{"preset", "h100-sxm-80gb"}, {"num_gpus", 8}}}};
      const double none = peak_of(config, kNone);
      const double core = peak_of(config, kCoreAttn);
      EXPECT_LT(core, none) << "tp " << tp << " cp " << cp;
    }
  }
}

// Every model preset: none >= core_attn >= core_attn + MLP modules >= full.
TEST(RecomputePeakTest, MoreRecomputeNeverRaisesThePeakOfAnyModelPreset) {
  for (const char* model : {"llama3-8b", "deepseek-v2-lite", "deepseek-v2", "deepseek-v3", "mixtral-8x7b",
                            "qwen3-235b-a22b", "gpt-oss-120b", "gpt3-175b"}) {
    const json preset = json::parse(preset_json(model))["result"]["model"];
    const bool moe = preset.contains("moe");
    const bool mla = preset.contains("mla");
    json config = {{"model", {{"preset", model}, {"num_layers", 4}}},
                   {"training", {{"seq_len", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 8},
                                 {"tp", 1}, {"ep", moe ? 8 : 1}}},
                   {"system", {{"preset", "b200-sxm-180gb"}, {"num_gpus", 8}}}};
    if (moe && preset["moe"].value("num_dense_layers", 0) >= 4) config["model"]["moe"] = {{"num_dense_layers", 1}};
    json more = {"core_attn", moe ? "moe_act" : "mlp"};
    if (mla) more.push_back("mla_up_proj");
    const double none = peak_of(config, kNone);
    const double core = peak_of(config, kCoreAttn);
    const double modules = peak_of(config, {{"granularity", "selective"}, {"modules", more}});
    const double full = peak_of(config, {{"granularity", "full"}, {"method", "uniform"}, {"num_layers", 1}});
    EXPECT_LE(core, none) << model;
    EXPECT_LE(modules, core) << model;
    EXPECT_LE(full, none) << model;
  }
}

}  // namespace
}  // namespace trainsim
