// Sliding-window attention: which layers use the window (Megatron-LM
// megatron/core/transformer/utils.py is_layer_window_attention), the share of
// the causal scores a window keeps, and its effect on model FLOPs, step time
// and memory.
#include "model/attention_window.h"

#include <gtest/gtest.h>

#include "model/flops.h"
#include "test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;

ModelSpec windowed(int64_t layers, int64_t window, int64_t every_n) {
  ModelSpec m;
  m.num_layers = layers;
  m.sliding_window_tokens = window;
  m.full_attention_every_n_layers = every_n;
  return m;
}

// Megatron's examples: window (2048, 0) with skip frequency 4 makes layer_number 1
// (index 0) windowed and layer_number 4 (index 3) full; without a skip frequency
// every layer is windowed; without a window none is.
TEST(AttentionWindowTest, LayersFollowMegatronsSkipFrequency) {
  const ModelSpec every_fourth = windowed(8, 2048, 4);
  const bool expected[] = {true, true, true, false, true, true, true, false};
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(is_window_layer(every_fourth, i), expected[i]) << i;
  EXPECT_EQ(num_window_layers(every_fourth), 6);
  EXPECT_EQ(num_window_layers(windowed(10, 2048, 4)), 8);   // layers 4 and 8 are full
  EXPECT_EQ(num_window_layers(windowed(24, 128, 2)), 12);   // gpt-oss: alternating
  EXPECT_EQ(num_window_layers(windowed(32, 4096, 0)), 32);  // Mistral: every layer
  EXPECT_EQ(num_window_layers(windowed(32, 0, 0)), 0);
  EXPECT_FALSE(is_window_layer(windowed(32, 0, 2), 0));
}

// Megatron's sliding-window mask for sq = skv = 10, window (3, 0): row i keeps
// keys max(0, i - 3) .. i, i.e. 1 + 2 + 3 + 7 * 4 = 34 of the 55 causal pairs.
TEST(AttentionWindowTest, PairFractionCountsTheKeysEachQueryKeeps) {
  EXPECT_DOUBLE_EQ(window_pair_fraction(3, 10), 34.0 / 55.0);
  EXPECT_DOUBLE_EQ(window_pair_fraction(1, 4), (1.0 + 2.0 + 2.0 + 2.0) / 10.0);
  EXPECT_DOUBLE_EQ(window_pair_fraction(9, 10), 1.0);  // the window covers every row
  EXPECT_DOUBLE_EQ(window_pair_fraction(4096, 4096), 1.0);
  EXPECT_DOUBLE_EQ(window_pair_fraction(0, 4096), 1.0);  // no window
  // Long sequences: about 2W/s of the causal pairs.
  EXPECT_NEAR(window_pair_fraction(4096, 131072), 2.0 * 4097.0 / 131073.0, 2e-3);
}

// Model FLOPs (Megatron convention): only the core-attention term of the
// windowed layers shrinks, by the pairs the window drops.
TEST(AttentionWindowTest, ModelFlopsDropOnlyTheWindowedScores) {
  json doc = testing::base_config();
  doc["training"]["seq_len"] = 8192;
  const json full = testing::estimate_ok(doc);
  doc["model"] = {{"preset", "llama3-8b"},
                  {"sliding_window_tokens", 1024},
                  {"full_attention_every_n_layers", 4}};
  const json window = testing::estimate_ok(doc);
  const double s = 8192, heads = 32, head_dim = 128, layers_windowed = 24;
  const double sequences = full["throughput"]["tokens_per_step"].get<double>() / s;
  const double dropped = sequences * s * s * 6.0 * heads * head_dim * layers_windowed *
                         (1.0 - window_pair_fraction(1024, 8192));
  EXPECT_NEAR(full["throughput"]["model_flops_per_step"].get<double>() -
                  window["throughput"]["model_flops_per_step"].get<double>(),
              dropped, 1e-9 * dropped);
  EXPECT_LT(window["time"]["iteration_s"].get<double>(), full["time"]["iteration_s"].get<double>());
  EXPECT_LT(window["throughput"]["hardware_tflops_per_gpu"].get<double>() *
                window["time"]["iteration_s"].get<double>(),
            full["throughput"]["hardware_tflops_per_gpu"].get<double>() *
                full["time"]["iteration_s"].get<double>());
  // Flash attention stores no score matrix, so the window does not change memory.
  EXPECT_DOUBLE_EQ(window["memory"]["peak_bytes"].get<double>(),
                   full["memory"]["peak_bytes"].get<double>());
}

TEST(AttentionWindowTest, AWindowAsLongAsTheSequenceChangesNothing) {
  json doc = testing::base_config();
  const json full = testing::estimate_ok(doc);
  doc["model"] = {{"preset", "llama3-8b"}, {"sliding_window_tokens", doc["training"]["seq_len"]}};
  const json window = testing::estimate_ok(doc);
  EXPECT_DOUBLE_EQ(window["time"]["iteration_s"].get<double>(),
                   full["time"]["iteration_s"].get<double>());
  EXPECT_DOUBLE_EQ(window["throughput"]["model_flops_per_step"].get<double>(),
                   full["throughput"]["model_flops_per_step"].get<double>());
}

}  // namespace
}  // namespace trainsim
