// Multi-token prediction (Megatron-Core multi_token_prediction.py): each MTP
// layer adds enorm, hnorm, eh_proj (2h -> h), a transformer layer of the last
// decoder layer's kind and a final norm on the last pipeline stage, which also
// keeps a copy of the word embeddings when the pipeline has several stages.
#include <gtest/gtest.h>

#include "model/param_count.h"
#include "test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;

json deepseek(int64_t mtp, int64_t pp, int64_t layers = 8) {
  json doc = {
      {"model", {{"preset", "deepseek-v3"}, {"num_layers", layers}, {"mtp_num_layers", mtp}}},
      {"training",
       {{"seq_len", 4096},
        {"micro_batch_size", 1},
        {"num_micro_batches", 8},
        {"pp", pp},
        {"tp", 2},
        {"ep", 4},
        {"sequence_parallel", true}}},
      {"system", {{"preset", "h100-sxm-80gb"}, {"num_gpus", 8 * pp}}}};
  return doc;
}

// DeepSeek-V3's shapes with 8 layers (3 dense, 5 MoE), as the preset gives them.
ModelSpec deepseek_spec() {
  ModelSpec m;
  m.num_layers = 8;
  m.hidden_size = 7168;
  m.num_attention_heads = 128;
  m.num_kv_heads = 128;
  m.head_dim = 192;
  m.ffn_hidden_size = 18432;
  m.vocab_size = 129280;
  m.mla = MlaSpec{1536, 512, 128, 64, 128};
  m.moe = MoeSpec{};
  m.moe->num_experts = 256;
  m.moe->top_k = 8;
  m.moe->expert_ffn_hidden_size = 2048;
  m.moe->shared_expert_ffn_hidden_size = 2048;
  m.moe->num_dense_layers = 3;
  return m;
}

// The model total grows by one MoE layer (DeepSeek-V3's last layer kind), two
// h x h halves of eh_proj and three norms per MTP layer; the embedding and the
// output layer are shared and not counted again.
TEST(MtpTest, ParametersAddOneLayerOfTheLastKindPerMtpLayer) {
  const json without = testing::estimate_ok(deepseek(0, 1));
  const json with_two = testing::estimate_ok(deepseek(2, 1));
  const double h = 7168;
  const double one = layer_params(deepseek_spec(), 7).total() + 2.0 * h * h + 3.0 * h;
  EXPECT_DOUBLE_EQ(
      with_two["model"]["parameters"].get<double>() - without["model"]["parameters"].get<double>(),
      2.0 * one);
  // Active: the MTP layer's routed experts count top_k of num_experts.
  const double inactive = 248.0 * 3.0 * h * 2048.0;
  EXPECT_DOUBLE_EQ(with_two["model"]["active_parameters"].get<double>() -
                       without["model"]["active_parameters"].get<double>(),
                   2.0 * (one - inactive));
}

// Per GPU of the last stage: the layer's dense part over tp (norms, router and
// MLA down projections replicated), its experts over ep, and with pp > 1 the
// word-embedding copy (vocab / tp rows). Earlier stages are unchanged.
TEST(MtpTest, TheLastStageHoldsTheMtpLayerAndAnEmbeddingCopy) {
  for (const int64_t pp : {1, 2}) {
    SCOPED_TRACE("pp " + std::to_string(pp));
    const json without = testing::estimate_ok(deepseek(0, pp));
    const json with = testing::estimate_ok(deepseek(1, pp));
    const auto& a = without["memory"]["stages"];
    const auto& b = with["memory"]["stages"];
    ASSERT_EQ(a.size(), static_cast<size_t>(pp));
    for (int64_t s = 0; s + 1 < pp; ++s) EXPECT_EQ(a[s], b[s]) << "stage " << s;
    const double h = 7168;
    const ParamCounts layer = layer_params(deepseek_spec(), 7);
    const double embedding_copy =
        pp > 1 ? 129280.0 / 2.0 * h : 0.0;  // vocab 129280 pads to 129280 at tp 2
    const double dense =
        (layer.tp_sharded + 2.0 * h * h) / 2.0 + layer.replicated + 3.0 * h + embedding_copy;
    const size_t last = static_cast<size_t>(pp - 1);
    EXPECT_DOUBLE_EQ(
        b[last]["dense_parameters"].get<double>() - a[last]["dense_parameters"].get<double>(),
        dense);
    EXPECT_DOUBLE_EQ(
        b[last]["expert_parameters"].get<double>() - a[last]["expert_parameters"].get<double>(),
        layer.expert / 4.0);
    EXPECT_GT(b[last]["activations_bytes"].get<double>(),
              a[last]["activations_bytes"].get<double>());
  }
}

// Megatron checkpoints the MTP layer with the model's recompute settings
// (MultiTokenPredictionLayer._checkpointed_forward): under full recompute the
// MTP transformer layer keeps only its input, so the MTP adds about half the
// bytes (its logits and loss, computed outside the checkpoint, stay).
TEST(MtpTest, FullRecomputeAlsoCheckpointsTheMtpLayer) {
  auto added = [](const json& recompute) {
    json without = deepseek(0, 2), with = deepseek(1, 2);
    without["training"]["recompute"] = recompute;
    with["training"]["recompute"] = recompute;
    return testing::estimate_ok(with)["memory"]["stages"][1]["activations_bytes"].get<double>() -
           testing::estimate_ok(without)["memory"]["stages"][1]["activations_bytes"].get<double>();
  };
  const double plain = added({{"granularity", "none"}});
  const double full = added({{"granularity", "full"}, {"method", "uniform"}, {"num_layers", 1}});
  EXPECT_GT(full, 0.0);
  EXPECT_LT(full, 0.6 * plain);
}

// The MTP layer runs on the last stage only: its forward and backward lengthen
// the step, and the model FLOPs grow by Megatron's MTP terms.
TEST(MtpTest, TheMtpLayerLengthensTheStepAndCountsInModelFlops) {
  const json without = testing::estimate_ok(deepseek(0, 2));
  const json with = testing::estimate_ok(deepseek(1, 2));
  EXPECT_GT(with["time"]["iteration_s"].get<double>(),
            without["time"]["iteration_s"].get<double>());
  EXPECT_GT(with["throughput"]["model_flops_per_step"].get<double>(),
            without["throughput"]["model_flops_per_step"].get<double>());
  const json bad = testing::run_estimate([] {
    json doc = deepseek(1, 1);
    doc["model"]["mtp_num_layers"] = 65;
    return doc;
  }());
  ASSERT_FALSE(bad["ok"].get<bool>());
  EXPECT_EQ(bad["errors"][0]["path"], "/model/mtp_num_layers");
  EXPECT_EQ(bad["errors"][0]["message"], "must be at most 64, got 65");
}

}  // namespace
}  // namespace trainsim
