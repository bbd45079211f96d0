// Numeric safety (issue 7): huge models (10T parameters, 1M-token sequences,
// 100k GPUs), tiny ones (1 layer, 1 GPU) and every integer input at its limit
// (core/src/input_limits.h) give finite, sane results or a clear error naming a
// path, never an internal error, a NaN/Inf or an overflow (the sanitizer build
// runs these under UBSan, which traps on signed overflow and bad casts).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "input_limits.h"
#include "test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;
using testing::base_config;

bool near(double a, double b, double rel) {
  return std::fabs(a - b) <= rel * std::max({std::fabs(a), std::fabs(b), 1e-300});
}

// Checks one envelope; returns it. An ok result must be finite and consistent.
json expect_clear_outcome(const json& config) {
  const std::string text = estimate_json(config.dump());
  const json envelope = json::parse(text);  // throws (fails the test) on NaN text
  EXPECT_FALSE(envelope.contains("internal")) << text.substr(0, 2000);
  if (!envelope.value("ok", false)) {
    EXPECT_FALSE(envelope["errors"].empty());
    for (const json& error : envelope["errors"]) {
      EXPECT_TRUE(error["path"].is_string());
      EXPECT_FALSE(error["message"].get<std::string>().empty());
    }
    return envelope;
  }
  const json& r = envelope["result"];
  const double peak = r["memory"]["peak_bytes"].get<double>();
  EXPECT_TRUE(std::isfinite(peak) && peak > 0.0) << peak;
  for (const json& stage : r["memory"]["stages"]) {
    double parts = 0.0;
    for (const char* key : {"parameters_bytes", "gradients_bytes", "optimizer_bytes",
                            "buffers_bytes", "activations_bytes", "transient_bytes"}) {
      EXPECT_GE(stage[key].get<double>(), 0.0) << key;
      parts += stage[key].get<double>();
    }
    EXPECT_TRUE(near(parts, stage["peak_bytes"].get<double>(), 1e-12));
  }
  const double step = r["time"]["iteration_s"].get<double>();
  EXPECT_TRUE(std::isfinite(step) && step > 0.0) << step;
  double parts = 0.0;
  for (const auto& [name, seconds] : r["time"]["breakdown"].items()) {
    EXPECT_GE(seconds.get<double>(), 0.0) << name;
    parts += seconds.get<double>();
  }
  EXPECT_TRUE(near(parts, step, 1e-9)) << parts << " vs " << step;
  const json& t = r["throughput"];
  EXPECT_GT(t["tokens_per_s"].get<double>(), 0.0);
  EXPECT_GT(t["mfu"].get<double>(), 0.0);
  EXPECT_LE(t["mfu"].get<double>(), 1.0);
  return envelope;
}

json expect_ok(const json& config) {
  const json envelope = expect_clear_outcome(config);
  EXPECT_TRUE(envelope.value("ok", false)) << envelope.dump().substr(0, 2000);
  return envelope.value("result", json::object());
}

json patched(const char* patch) {
  json config = base_config();
  config.merge_patch(json::parse(patch));
  return config;
}

// 250 layers of width 65536 with a 4x MLP and 8x GQA: about 11e12 parameters.
json ten_trillion_model() {
  return {{"num_layers", 250},          {"hidden_size", 65536}, {"num_attention_heads", 512},
          {"num_kv_heads", 64},         {"ffn_hidden_size", 262144},
          {"vocab_size", 256000},       {"activation", "gelu"}};
}

TEST(NumericSafetyTest, TenTrillionParametersMillionTokensHundredThousandGpus) {
  // 100,000 GPUs = tp 8 x cp 4 x pp 25 x dp 125 (10 layers per stage); 1 Mi-token sequences.
  const json config = {
      {"model", ten_trillion_model()},
      {"training",
       {{"seq_len", 1 << 20}, {"micro_batch_size", 1}, {"global_batch_size", 125 * 50},
        {"tp", 8}, {"cp", 4}, {"pp", 25}, {"sequence_parallel", true}, {"zero_stage", 3},
        {"recompute", {{"granularity", "full"}, {"method", "uniform"}, {"num_layers", 1}}}}},
      {"system", {{"preset", "h100-sxm-80gb"}, {"num_gpus", 100000}}}};
  const json r = expect_ok(config);
  EXPECT_GT(r["model"]["parameters"].get<double>(), 1e13);
  EXPECT_EQ(r["memory"]["stages"].size(), 25u);
  EXPECT_FALSE(r["fits"].get<bool>());  // 1 Mi tokens of a 64k-wide model do not fit 80 GB
}

TEST(NumericSafetyTest, TenTrillionParametersOnOneGpu) {
  const json config = {{"model", ten_trillion_model()},
                       {"training", {{"seq_len", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 1}}},
                       {"system", {{"preset", "b200-sxm-180gb"}, {"num_gpus", 1}}}};
  const json r = expect_ok(config);
  // bf16 weights + fp32 grads + Adam states: at least 16 bytes per parameter.
  EXPECT_GT(r["memory"]["peak_bytes"].get<double>(), 16 * 1e13);
  EXPECT_FALSE(r["fits"].get<bool>());
}

TEST(NumericSafetyTest, MillionTokenSequenceOnOneGpu) {
  const json r = expect_ok(patched(R"({"training": {"seq_len": 1048576, "tp": 1, "pp": 1,
      "sequence_parallel": false, "global_batch_size": 1}, "system": {"num_gpus": 1}})"));
  EXPECT_FALSE(r["fits"].get<bool>());
}

TEST(NumericSafetyTest, HundredThousandGpusOfDataParallelism) {
  const json r = expect_ok(patched(R"({"training": {"tp": 1, "pp": 1, "sequence_parallel": false,
      "global_batch_size": 200000}, "system": {"num_gpus": 100000}})"));
  EXPECT_EQ(r["throughput"]["tokens_per_step"].get<double>(), 200000.0 * 4096);
}

TEST(NumericSafetyTest, OneLayerModelOnOneGpu) {
  const json r = expect_ok({{"model", {{"num_layers", 1}, {"hidden_size", 64},
                                       {"num_attention_heads", 1}, {"ffn_hidden_size", 64},
                                       {"vocab_size", 16}}},
                            {"training", {{"seq_len", 1}, {"micro_batch_size", 1},
                                          {"global_batch_size", 1}}},
                            {"system", {{"preset", "h100-sxm-80gb"}, {"num_gpus", 1}}}});
  EXPECT_TRUE(r["fits"].get<bool>());
  EXPECT_EQ(r["memory"]["stages"].size(), 1u);
}

TEST(NumericSafetyTest, SmallestModelEveryInputAtItsLowerLimit) {
  expect_ok({{"model", {{"num_layers", 1}, {"hidden_size", 1}, {"num_attention_heads", 1},
                        {"ffn_hidden_size", 1}, {"vocab_size", 1},
                        {"make_vocab_size_divisible_by", 1}}},
             {"training", {{"seq_len", 1}, {"micro_batch_size", 1}, {"num_micro_batches", 1}}},
             {"system", {{"preset", "a100-pcie-80gb"}, {"num_gpus", 1}}}});
}

TEST(NumericSafetyTest, OneLayerMoeMlaModelOnOneGpu) {
  expect_ok({{"model", {{"num_layers", 1}, {"hidden_size", 64}, {"num_attention_heads", 2},
                        {"head_dim", 48}, {"ffn_hidden_size", 64}, {"vocab_size", 16},
                        {"mla", {{"kv_lora_rank", 8}, {"qk_nope_head_dim", 32},
                                 {"qk_rope_head_dim", 16}, {"v_head_dim", 32}}},
                        {"moe", {{"num_experts", 2}, {"top_k", 1}, {"expert_ffn_hidden_size", 8}}}}},
             {"training", {{"seq_len", 2}, {"micro_batch_size", 1}, {"global_batch_size", 1}}},
             {"system", {{"preset", "h100-sxm-80gb"}, {"num_gpus", 1}}}});
}

// Each integer input at its upper limit: a finite result or a clear error.
struct LimitCase {
  const char* name;
  const char* patch;  ///< merge patch of the base config (llama3-8b, tp 2, pp 2, 16 GPUs)
};

const LimitCase kLimitCases[] = {
    {"num_layers", R"({"model": {"preset": "llama3-8b", "num_layers": 100000}})"},
    {"hidden_size", R"({"model": {"preset": "llama3-8b", "hidden_size": 16777216}})"},
    {"ffn_hidden_size", R"({"model": {"preset": "llama3-8b", "ffn_hidden_size": 16777216}})"},
    {"head_dim", R"({"model": {"preset": "llama3-8b", "head_dim": 16777216}})"},
    {"heads", R"({"model": {"preset": "llama3-8b", "num_attention_heads": 65536, "num_kv_heads": 65536, "head_dim": 1}})"},
    {"vocab_size", R"({"model": {"preset": "llama3-8b", "vocab_size": 67108864}})"},
    {"vocab_divisor", R"({"model": {"preset": "llama3-8b", "vocab_size": 67108864, "make_vocab_size_divisible_by": 1048576}})"},
    {"learned_positions", R"({"model": {"preset": "llama3-8b", "position_embedding": "learned", "max_position_embeddings": 67108864}})"},
    {"seq_len", R"({"training": {"seq_len": 67108864}})"},
    {"micro_batch_size", R"({"training": {"micro_batch_size": 1073741824, "global_batch_size": null, "num_micro_batches": 1}})"},
    {"seq_len_and_micro_batch", R"({"training": {"seq_len": 67108864, "micro_batch_size": 1073741824, "global_batch_size": null, "num_micro_batches": 1}})"},
    {"global_batch_size", R"({"training": {"global_batch_size": 1073741824}})"},
    {"num_micro_batches", R"({"training": {"global_batch_size": null, "num_micro_batches": 1073741824}})"},
    {"num_micro_batches_one_gpu", R"({"training": {"tp": 1, "pp": 1, "sequence_parallel": false, "global_batch_size": null, "num_micro_batches": 1073741824}, "system": {"num_gpus": 1}})"},
    {"interleaved_micro_batches", R"({"training": {"vpp": 2, "global_batch_size": null, "num_micro_batches": 268435456}})"},
    {"num_gpus_dp", R"({"training": {"tp": 1, "pp": 1, "sequence_parallel": false, "global_batch_size": 16777216}, "system": {"num_gpus": 16777216}})"},
    {"tp", R"({"training": {"tp": 16777216}, "system": {"num_gpus": 33554432}})"},
    {"cp", R"({"training": {"cp": 16777216}, "system": {"num_gpus": null}})"},
    {"degrees_product", R"({"training": {"tp": 16777216, "cp": 16777216, "pp": 100000, "dp": 16777216}, "system": {"num_gpus": null}})"},
    {"degrees_product_from_gpus", R"({"training": {"tp": 16777216, "cp": 16777216, "pp": 100000}, "system": {"num_gpus": 16777216}})"},
    {"pp_and_vpp", R"({"model": {"preset": "llama3-8b", "num_layers": 100000}, "training": {"pp": 100000, "vpp": 100000, "global_batch_size": null, "num_micro_batches": 1073741824}, "system": {"num_gpus": null}})"},
    {"uneven_stages", R"({"training": {"num_layers_in_first_stage": 100000, "num_layers_in_last_stage": 100000}})"},
    {"recompute_layers", R"({"training": {"recompute": {"granularity": "full", "method": "uniform", "num_layers": 100000}}})"},
    {"gpus_per_node", R"({"system": {"gpus_per_node": 1048576}})"},
    {"capacity_and_bandwidth", R"({"system": {"gpu": {"hbm_capacity_gib": 1000000, "hbm_bandwidth_gb_per_s": 10000000, "peak_tflops": {"bf16": 10000000, "fp16": 10000000}}}})"},
    {"tiny_hardware", R"({"system": {"gpu": {"hbm_capacity_gib": 1e-300, "hbm_bandwidth_gb_per_s": 1e-300, "peak_tflops": {"bf16": 1e-300, "fp16": 1e-300}}, "intra_node": {"bandwidth_gb_per_s": 1e-300}, "inter_node": {"bandwidth_gb_per_s": 1e-300}}})"},
    {"slow_latency", R"({"system": {"intra_node": {"latency_us": 1000000}, "inter_node": {"latency_us": 1000000}, "efficiency": {"memory": {"efficiency": 1e-300, "latency_us": 1000000}}}})"},
    {"efficiency_extremes", R"({"system": {"efficiency": {"gemm": {"bf16": 1e-300}, "grouped_gemm": {"bf16": 10}, "attention": {"forward": {"128": {"causal": {"1": 1e-300}}}, "backward": {"1": {"causal": {"67108864": 10}}}}, "gemm_k_half": 1000000000, "num_sms": 1048576, "tile_m": 65536, "tile_n": 65536}}})"},
    {"straggler", R"({"system": {"straggler_coefficient": 10}})"},
    {"te_version", R"({"training": {"te_version": "99.999.2147483647"}})"},
};

class LimitTest : public ::testing::TestWithParam<LimitCase> {};

TEST_P(LimitTest, GivesAFiniteResultOrAClearError) { expect_clear_outcome(patched(GetParam().patch)); }

INSTANTIATE_TEST_SUITE_P(EveryInputAtItsLimit, LimitTest, ::testing::ValuesIn(kLimitCases),
                         [](const auto& row) { return std::string(row.param.name); });

// A MoE model with every MoE size at its limit, alone and combined with the
// largest tokens per micro-batch.
TEST(NumericSafetyTest, MoeSizesAtTheirLimits) {
  json config = base_config();
  config["model"] = {{"preset", "mixtral-8x7b"}, {"moe", {{"num_experts", kMaxExperts},
                                                          {"top_k", kMaxExperts},
                                                          {"expert_ffn_hidden_size", kMaxWidth},
                                                          {"shared_expert_ffn_hidden_size", kMaxWidth}}}};
  config["training"]["tp"] = 1;
  config["training"]["sequence_parallel"] = false;
  config["training"]["pp"] = 1;
  config["training"]["ep"] = 16;
  config["training"]["moe_pad_to_capacity"] = true;
  config["training"]["moe_capacity_factor"] = 1e6;
  expect_clear_outcome(config);
  config["training"]["seq_len"] = kMaxSeqLen;
  config["training"]["micro_batch_size"] = kMaxBatch;
  config["training"].erase("global_batch_size");
  config["training"]["num_micro_batches"] = 1;
  expect_clear_outcome(config);
}

}  // namespace
}  // namespace trainsim
