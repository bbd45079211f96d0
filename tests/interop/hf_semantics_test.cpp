// The Hugging Face importer applies what transformers applies for the family
// and nothing else, and values estimate would reject are errors at the
// config.json key: a sliding_window in a llama config became a window, a
// layer_types of the wrong length was extrapolated, kv heads above the heads
// and top-k above the experts passed import and failed later under /model.
#include <gtest/gtest.h>

#include "interop/interop_test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;
using testing::has_note;

json import_patched(const json& patch) {
  json base = json::parse(testing::read_text_file(testing::test_data_path("data/hf/meta-llama-3-8b.json")));
  base.merge_patch(patch);
  return json::parse(import_hf_json(base.dump()));
}

json only_error(const json& envelope) {
  EXPECT_FALSE(envelope.value("ok", true)) << envelope.dump().substr(0, 400);
  EXPECT_EQ(envelope.value("errors", json::array()).size(), 1u) << envelope.dump().substr(0, 400);
  return envelope.value("errors", json::array()).empty() ? json::object() : envelope["errors"][0];
}

TEST(HfSemanticsTest, LlamaIgnoresSlidingWindowAsTransformersDoes) {
  const json envelope = import_patched({{"sliding_window", 4096}});
  ASSERT_TRUE(envelope["ok"].get<bool>()) << envelope.dump();
  EXPECT_FALSE(envelope["result"]["model"].contains("sliding_window_tokens"));
  EXPECT_TRUE(has_note(envelope["result"]["notes"],
                       "sliding_window 4096 is not applied: transformers' llama models attend over the "
                       "full causal context"));
  for (const char* family : {"deepseek_v3", "gemma"}) {
    json patch = {{"model_type", family}, {"architectures", nullptr}, {"sliding_window", 512}};
    if (std::string(family) == "gemma") patch["hidden_act"] = "gelu_pytorch_tanh";
    if (std::string(family) == "deepseek_v3") {
      patch.update({{"n_routed_experts", 8}, {"num_experts_per_tok", 2}, {"moe_intermediate_size", 512},
                    {"first_k_dense_replace", 1}});
    }
    const json other = import_patched(patch);
    ASSERT_TRUE(other["ok"].get<bool>()) << other.dump();
    EXPECT_FALSE(other["result"]["model"].contains("sliding_window_tokens")) << family;
  }
}

TEST(HfSemanticsTest, MistralWindowsEveryLayer) {
  const json envelope = import_patched({{"model_type", "mistral"}, {"architectures", nullptr}, {"sliding_window", 4096}});
  EXPECT_EQ(envelope["result"]["model"]["sliding_window_tokens"], 4096);
  EXPECT_FALSE(envelope["result"]["model"].contains("full_attention_every_n_layers"));
}

TEST(HfSemanticsTest, QwenWindowsNeedUseSlidingWindowAndFollowMaxWindowLayers) {
  const json qwen = {{"model_type", "qwen2"}, {"architectures", nullptr}, {"sliding_window", 4096}};
  json patch = qwen;
  patch["layer_types"] = std::vector<std::string>(32, "sliding_attention");
  const json disabled = import_patched(patch);  // nulled without use_sliding_window
  EXPECT_FALSE(disabled["result"]["model"].contains("sliding_window_tokens")) << disabled.dump();
  patch = qwen;
  patch["use_sliding_window"] = true;  // max_window_layers absent: Qwen2Config's 28 of 32 layers
  const json defaulted = import_patched(patch);
  EXPECT_FALSE(defaulted["result"]["model"].contains("sliding_window_tokens"));
  EXPECT_TRUE(has_note(defaulted["result"]["notes"], "max_window_layers is absent: Qwen2Config default 28"));
  EXPECT_TRUE(has_note(defaulted["result"]["notes"], "only layers from max_window_layers 28 on use the window"));
  json moe = {{"model_type", "qwen3_moe"}, {"architectures", nullptr}, {"num_experts", 8},
              {"num_experts_per_tok", 2}, {"moe_intermediate_size", 512}, {"sliding_window", 4096},
              {"use_sliding_window", true}, {"max_window_layers", 3}};
  const json all = import_patched(moe);  // Qwen3-MoE: one mask for every layer
  EXPECT_EQ(all["result"]["model"]["sliding_window_tokens"], 4096) << all.dump();
}

TEST(HfSemanticsTest, LayerTypesMustHaveOneKnownEntryPerLayer) {
  const json gemma2 = {{"model_type", "gemma2"}, {"architectures", nullptr}, {"hidden_act", "gelu_pytorch_tanh"},
                       {"sliding_window", 4096}};
  json patch = gemma2;
  patch["layer_types"] = {"sliding_attention", "full_attention"};
  json error = only_error(import_patched(patch));
  EXPECT_EQ(error["path"], "/hf/layer_types");
  EXPECT_EQ(error["message"], "must have one entry per layer (num_hidden_layers 32), got 2");
  patch["layer_types"] = std::vector<std::string>(32, "full_attention");
  patch["layer_types"][3] = "chunky_attention";
  error = only_error(import_patched(patch));
  EXPECT_EQ(error["path"], "/hf/layer_types/3");
  EXPECT_EQ(error["message"],
            "expected \"full_attention\" or \"sliding_attention\", got string \"chunky_attention\"");
  // Absent: Gemma2Config's alternation, and its default window when that is absent too.
  const json defaulted = import_patched({{"model_type", "gemma2"}, {"architectures", nullptr},
                                         {"hidden_act", "gelu_pytorch_tanh"}});
  EXPECT_EQ(defaulted["result"]["model"]["sliding_window_tokens"], 4096) << defaulted.dump();
  EXPECT_EQ(defaulted["result"]["model"]["full_attention_every_n_layers"], 2);
  EXPECT_TRUE(has_note(defaulted["result"]["notes"], "sliding_window is absent: Gemma2Config default 4096"));
}

TEST(HfSemanticsTest, ValuesEstimateRejectsAreErrorsAtTheirKey) {
  json error = only_error(import_patched({{"num_key_value_heads", 64}}));
  EXPECT_EQ(error["path"], "/hf/num_key_value_heads");
  EXPECT_EQ(error["message"], "must divide num_attention_heads (32), got 64");
  error = only_error(import_patched({{"num_key_value_heads", 5}}));
  EXPECT_EQ(error["path"], "/hf/num_key_value_heads");
  error = only_error(import_patched({{"model_type", "mixtral"}, {"architectures", nullptr},
                                     {"num_local_experts", 4}, {"num_experts_per_tok", 6}}));
  EXPECT_EQ(error["path"], "/hf/num_experts_per_tok");
  EXPECT_EQ(error["message"], "must be at most num_experts (4), got 6");
}

}  // namespace
}  // namespace trainsim
