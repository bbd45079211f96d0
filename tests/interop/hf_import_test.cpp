// Hugging Face config.json importer: real config files of public models
// (tests/data/hf, written from their published values) give the right model,
// equal to the matching preset where there is one, with notes for what is not
// modelled; every bad input gives one pinned error.
#include <gtest/gtest.h>

#include "schema/config_reader.h"
#include "schema/config_writer.h"
#include "interop/interop_test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;
using testing::has_note;

struct HfCase {
  const char* name;
  const char* file;
  const char* preset;    ///< model preset with the same architecture, or ""
  const char* expected;  ///< subset of the imported model
  std::vector<const char*> notes;
};

const HfCase kHfCases[] = {
    {"llama3_8b", "meta-llama-3-8b.json", "llama3-8b",
     R"({"num_layers":32,"hidden_size":4096,"num_kv_heads":8,"head_dim":128,"ffn_hidden_size":14336,
         "vocab_size":128256,"tie_embeddings":false})",
     {}},
    {"llama3_70b", "meta-llama-3-70b.json", "llama3-70b",
     R"({"num_layers":80,"hidden_size":8192,"num_attention_heads":64,"num_kv_heads":8})", {}},
    {"mistral_7b", "mistral-7b-v0.1.json", "",
     R"({"num_layers":32,"num_kv_heads":8,"ffn_hidden_size":14336,"vocab_size":32000,
         "sliding_window_tokens":4096})",
     {}},
    {"mixtral_8x7b", "mixtral-8x7b-v0.1.json", "mixtral-8x7b",
     R"({"moe":{"num_experts":8,"top_k":2,"expert_ffn_hidden_size":14336,"num_dense_layers":0}})", {}},
    {"qwen2_7b", "qwen2-7b.json", "",
     R"({"num_layers":28,"hidden_size":3584,"num_attention_heads":28,"num_kv_heads":4,
         "head_dim":128,"ffn_hidden_size":18944,"vocab_size":152064,"qk_layernorm":false})",
     {"the q/k/v projection biases of Qwen2Config are not modelled"}},
    {"qwen3_32b", "qwen3-32b.json", "qwen3-32b",
     R"({"num_layers":64,"head_dim":128,"qk_layernorm":true,"vocab_size":151936})", {}},
    {"qwen3_235b_a22b", "qwen3-235b-a22b.json", "qwen3-235b-a22b",
     R"({"num_layers":94,"num_kv_heads":4,"head_dim":128,"qk_layernorm":true,
         "moe":{"num_experts":128,"top_k":8,"expert_ffn_hidden_size":1536,"num_dense_layers":0}})",
     {}},
    {"qwen15_moe_a27b", "qwen1.5-moe-a2.7b.json", "",
     R"({"num_layers":24,"moe":{"num_experts":60,"top_k":4,"expert_ffn_hidden_size":1408,
         "shared_expert_ffn_hidden_size":5632,"num_dense_layers":0}})",
     {"the q/k/v projection biases of Qwen2MoeConfig are not modelled",
      "the sigmoid gate of the Qwen2-MoE shared expert is not modelled"}},
    {"deepseek_v2_lite", "deepseek-v2-lite.json", "deepseek-v2-lite",
     R"({"num_kv_heads":16,"head_dim":192,"mla":{"q_lora_rank":0,"kv_lora_rank":512},
         "moe":{"num_experts":64,"top_k":6,"shared_expert_ffn_hidden_size":2816,"num_dense_layers":1}})",
     {}},
    {"deepseek_v3", "deepseek-v3.json", "deepseek-v3",
     R"({"num_layers":61,"mla":{"q_lora_rank":1536,"kv_lora_rank":512,"qk_nope_head_dim":128,
         "qk_rope_head_dim":64,"v_head_dim":128},
         "moe":{"num_experts":256,"top_k":8,"expert_ffn_hidden_size":2048,
                "shared_expert_ffn_hidden_size":2048,"num_dense_layers":3},"mtp_num_layers":1})",
     {"quantization_config: the checkpoint is quantized"}},
    {"gemma2_9b", "gemma-2-9b.json", "",
     R"({"num_layers":42,"hidden_size":3584,"num_attention_heads":16,"num_kv_heads":8,"head_dim":256,
         "ffn_hidden_size":14336,"vocab_size":256000,"tie_embeddings":true,"activation":"geglu",
         "sliding_window_tokens":4096,"full_attention_every_n_layers":2})",
     {"tie_word_embeddings is absent: Gemma2Config default true",
      "attn_logit_softcapping 50.0: soft-capping is not modelled",
      "final_logit_softcapping 30.0: soft-capping is not modelled",
      "Gemma-2's post-attention and post-feedforward norms are not modelled"}},
    {"gpt_oss_120b", "gpt-oss-120b.json", "gpt-oss-120b",
     R"({"num_layers":36,"hidden_size":2880,"num_kv_heads":8,"head_dim":64,"linear_bias":true,
         "sliding_window_tokens":128,"full_attention_every_n_layers":2,
         "moe":{"num_experts":128,"top_k":4,"expert_ffn_hidden_size":2880}})",
     {"gpt-oss attention sinks (a learnable logit per head) are not modelled",
      "swiglu_limit 7: the clamped SwiGLU is priced as a fused SwiGLU"}},
};

class HfImportTest : public ::testing::TestWithParam<HfCase> {};

json import_file(const std::string& file) {
  return json::parse(import_hf_json(testing::read_text_file(testing::test_data_path("data/hf/" + file))));
}

// The model's canonical form, without what config.json does not say (name, position table).
json canonical_model(const json& model) {
  ModelSpec spec;
  Issues issues;
  schema::read_model(model, "/model", spec, issues);
  if (!issues.empty()) throw std::runtime_error(issues[0].path + ": " + issues[0].message);
  json out = schema::model_to_json(spec);
  out.erase("name");
  out.erase("max_position_embeddings");
  return out;
}

TEST_P(HfImportTest, ImportsThePublishedConfig) {
  const HfCase& c = GetParam();
  const json envelope = import_file(c.file);
  ASSERT_TRUE(envelope["ok"].get<bool>()) << envelope.dump();
  const json& model = envelope["result"]["model"];
  EXPECT_EQ(testing::subset_mismatch(json::parse(c.expected), model), "");
  const json& notes = envelope["result"]["notes"];
  for (const char* note : c.notes) EXPECT_TRUE(has_note(notes, note)) << note << " in " << notes.dump();
  // Every key of these real files is either read, noted as not modelled, or allow-listed.
  EXPECT_FALSE(has_note(notes, "ignored field")) << notes.dump();
  EXPECT_EQ(notes.size(), c.notes.size()) << notes.dump();
  if (*c.preset != '\0') {
    const json preset = json::parse(preset_json(c.preset))["result"]["model"];
    EXPECT_EQ(testing::first_difference(canonical_model(preset), canonical_model(model)), "");
  }
}

TEST_P(HfImportTest, ImportedModelEstimates) {
  json config = testing::base_config();
  config["model"] = import_file(GetParam().file)["result"]["model"];
  config["training"] = {{"seq_len", 4096}, {"micro_batch_size", 1}, {"global_batch_size", 8}};
  config["system"] = {{"preset", "h100-sxm-80gb"}, {"num_gpus", 8}};
  EXPECT_NO_THROW(testing::estimate_ok(config));
}

INSTANTIATE_TEST_SUITE_P(PublishedConfigs, HfImportTest, ::testing::ValuesIn(kHfCases),
                         [](const auto& p) { return std::string(p.param.name); });

struct HfBadCase {
  const char* name;
  const char* patch;  ///< JSON merge patch applied to meta-llama-3-8b.json (or the whole text if not an object)
  const char* path;
  const char* message;
};

const char* const kSupported =
    "supported: llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, deepseek_v2, "
    "deepseek_v3, gemma, gemma2, gpt_oss";

const HfBadCase kHfBadCases[] = {
    {"not_json", "{", "/hf",
     "invalid JSON at byte 2: parse error at line 1, column 2: syntax error while parsing object key - "
     "unexpected end of input; expected string literal"},
    {"not_object", "[1]", "/hf", "expected object, got array"},
    {"unknown_model_type", R"({"model_type":"gpt_neox","architectures":["GPTNeoXForCausalLM"]})",
     "/hf/model_type", "unsupported model_type \"gpt_neox\" (architectures: GPTNeoXForCausalLM); "},
    {"no_model_type", R"({"model_type":null,"architectures":null})", "/hf/model_type", "missing required key; "},
    {"no_model_type_unknown_class", R"({"model_type":null,"architectures":["FalconForCausalLM"]})",
     "/hf/model_type", "missing required key (architectures: FalconForCausalLM is not a supported class); "},
    {"architectures_not_array", R"({"architectures":"LlamaForCausalLM"})", "/hf/architectures",
     "expected a non-empty array of class names, got string \"LlamaForCausalLM\""},
    {"hidden_size_string", R"({"hidden_size":"4096"})", "/hf/hidden_size",
     "expected integer, got string \"4096\""},
    {"hidden_size_fraction", R"({"hidden_size":4096.5})", "/hf/hidden_size", "expected integer, got number 4096.5"},
    {"layers_missing", R"({"num_hidden_layers":null})", "/hf/num_hidden_layers", "missing required key"},
    {"layers_misspelt", R"({"num_hidden_layers":null,"num_hiden_layers":32})", "/hf/num_hidden_layers",
     "missing required key (the file has \"num_hiden_layers\": a typo of \"num_hidden_layers\"?)"},
    {"heads_zero", R"({"num_attention_heads":0})", "/hf/num_attention_heads", "must be at least 1, got 0"},
    {"vocab_huge", R"({"vocab_size":18446744073709551615})", "/hf/vocab_size",
     "integer 18446744073709551615 is beyond the 64-bit range trainsim reads (at most 9223372036854775807)"},
    {"vocab_too_large", R"({"vocab_size":9223372036854775807})", "/hf/vocab_size",
     "must be at most 67108864, got 9223372036854775807"},
    {"kv_heads_missing", R"({"num_key_value_heads":null})", "/hf/num_key_value_heads", "missing required key"},
    {"head_dim_needed", R"({"hidden_size":4001})", "/hf/head_dim",
     "missing required key (hidden_size is not a multiple of num_attention_heads)"},
    {"activation_relu", R"({"hidden_act":"relu"})", "/hf/hidden_act",
     "expected \"silu\" (the gated MLP trainsim models), got \"relu\""},
    {"tie_not_bool", R"({"tie_word_embeddings":"no"})", "/hf/tie_word_embeddings",
     "expected boolean, got string \"no\""},
    {"qwen_moe_sparse_step_beyond_layers",
     R"({"model_type":"qwen3_moe","architectures":null,"num_experts":8,"num_experts_per_tok":2,
         "moe_intermediate_size":512,"decoder_sparse_step":1000})",
     "/hf/decoder_sparse_step", "leaves no MoE layer (with mlp_only_layers)"},
    {"qwen_moe_dense_layer_out_of_range",
     R"({"model_type":"qwen3_moe","architectures":null,"num_experts":8,"num_experts_per_tok":2,
         "moe_intermediate_size":512,"mlp_only_layers":[3000]})",
     "/hf/mlp_only_layers", "expected layer indices in [0, 32), got 3000"},
    {"qwen_moe_experts_missing",
     R"({"model_type":"qwen3_moe","architectures":null,"num_experts_per_tok":2,"moe_intermediate_size":512})",
     "/hf/num_experts", "missing required key"},
    {"deepseek_dense_layers_too_many",
     R"({"model_type":"deepseek_v3","architectures":null,"n_routed_experts":8,"num_experts_per_tok":2,
         "moe_intermediate_size":512,"first_k_dense_replace":32})",
     "/hf/first_k_dense_replace", "must be at most 31, got 32"},
};

class HfBadInputTest : public ::testing::TestWithParam<HfBadCase> {};

TEST_P(HfBadInputTest, ReportsPathAndMessage) {
  const HfBadCase& c = GetParam();
  std::string text = c.patch;
  const json patch = json::parse(c.patch, nullptr, false);
  if (patch.is_object()) {
    json base = json::parse(testing::read_text_file(testing::test_data_path("data/hf/meta-llama-3-8b.json")));
    base.merge_patch(patch);
    text = base.dump();
  }
  const json envelope = json::parse(import_hf_json(text));
  ASSERT_FALSE(envelope["ok"].get<bool>()) << envelope.dump();
  ASSERT_EQ(envelope["errors"].size(), 1u) << envelope.dump();
  EXPECT_EQ(envelope["errors"][0]["path"], c.path);
  std::string message = c.message;
  if (!message.empty() && message.back() == ' ') message += kSupported;
  EXPECT_EQ(envelope["errors"][0]["message"], message);
}

INSTANTIATE_TEST_SUITE_P(BadConfigs, HfBadInputTest, ::testing::ValuesIn(kHfBadCases),
                         [](const auto& p) { return std::string(p.param.name); });

json import_patched(const char* patch) {
  json base = json::parse(testing::read_text_file(testing::test_data_path("data/hf/meta-llama-3-8b.json")));
  base.merge_patch(json::parse(patch));
  return json::parse(import_hf_json(base.dump()));
}

// A key within a few edits of one the family reads is named as its likely
// typo; a key far from all of them is only listed.
TEST(HfImportNotesTest, LikelyTyposNameTheKeyTheyMeant) {
  const json envelope = import_patched(R"({"rope_thetta": 500000.0, "Tie_Word_Embeddings": false, "use_magic_attention": true})");
  ASSERT_TRUE(envelope["ok"].get<bool>()) << envelope.dump();
  EXPECT_EQ(envelope["result"]["notes"],
            json::array({"ignored field \"Tie_Word_Embeddings\" (not a LlamaConfig field trainsim knows: did you mean "
                         "\"tie_word_embeddings\"?)",
                         "ignored field \"rope_thetta\" (not a LlamaConfig field trainsim knows: did you mean \"rope_theta\"?)",
                         "ignored field \"use_magic_attention\" (not used by LlamaConfig models in trainsim)"}));
}

TEST(HfImportNotesTest, UnknownFieldsAreListedNotDropped) {
  const json envelope = import_patched(R"({"use_magic_attention": true, "_name_or_path": "my/llama"})");
  ASSERT_TRUE(envelope["ok"].get<bool>());
  EXPECT_EQ(envelope["result"]["notes"],
            json::array({"ignored field \"use_magic_attention\" (not used by LlamaConfig models in trainsim)"}));
  EXPECT_EQ(envelope["result"]["model"]["name"], "my/llama");
}

TEST(HfImportNotesTest, ModelTypeIsInferredFromArchitecturesWithANote) {
  const json envelope = import_patched(R"({"model_type": null})");
  ASSERT_TRUE(envelope["ok"].get<bool>());
  EXPECT_TRUE(has_note(envelope["result"]["notes"], "model_type is missing: \"llama\" from architectures"));
}

TEST(HfImportNotesTest, PartialBiasesAndDropoutAreNoted) {
  const json envelope = import_patched(R"({"attention_bias": true, "attention_dropout": 0.1})");
  ASSERT_TRUE(envelope["ok"].get<bool>());
  EXPECT_EQ(envelope["result"]["model"]["linear_bias"], false);
  EXPECT_TRUE(has_note(envelope["result"]["notes"], "attention_bias: biases on only some linear layers"));
  EXPECT_TRUE(has_note(envelope["result"]["notes"], "attention_dropout: dropout is not modelled"));
  const json both = import_patched(R"({"attention_bias": true, "mlp_bias": true})");
  EXPECT_EQ(both["result"]["model"]["linear_bias"], true);
}

TEST(HfImportNotesTest, ClassDefaultsAreNoted) {
  const json envelope = import_patched(
      R"({"model_type":"qwen3","architectures":["Qwen3ForCausalLM"],"tie_word_embeddings":null})");
  ASSERT_TRUE(envelope["ok"].get<bool>());
  EXPECT_EQ(envelope["result"]["model"]["head_dim"], 128);
  EXPECT_TRUE(has_note(envelope["result"]["notes"], "head_dim is absent: Qwen3Config default 128"));
  EXPECT_TRUE(has_note(envelope["result"]["notes"], "tie_word_embeddings is absent: Qwen3Config default false"));
}

// Sliding windows (hf_import_window.cpp): layer_types with a full layer every
// n-th layer maps onto Megatron's --window-attn-skip-freq n; other mixes are noted.
// A Gemma-2 config (the llama test file as model_type gemma2).
const char* const kGemma2 =
    R"({"model_type":"gemma2","architectures":null,"hidden_act":"gelu_pytorch_tanh","head_dim":128,)";

TEST(HfImportWindowTest, LayerTypesMapOntoAFullLayerEveryN) {
  json types = json::array();
  for (int i = 0; i < 32; ++i) types.push_back(i % 4 == 3 ? "full_attention" : "sliding_attention");
  const json every_fourth = import_patched(
      (std::string(kGemma2) + R"("sliding_window": 128, "layer_types": )" + types.dump() + "}").c_str());
  ASSERT_TRUE(every_fourth["ok"].get<bool>()) << every_fourth.dump();
  EXPECT_EQ(every_fourth["result"]["model"]["sliding_window_tokens"], 128);
  EXPECT_EQ(every_fourth["result"]["model"]["full_attention_every_n_layers"], 4);

  types[0] = "full_attention";  // full layers 1, 4, 8, ...: not one every n-th layer
  const json irregular = import_patched(
      (std::string(kGemma2) + R"("sliding_window": 128, "layer_types": )" + types.dump() + "}").c_str());
  ASSERT_TRUE(irregular["ok"].get<bool>());
  EXPECT_FALSE(irregular["result"]["model"].contains("sliding_window_tokens"));
  EXPECT_TRUE(has_note(irregular["result"]["notes"], "layer_types: this mix of sliding-window and full layers"));
}

TEST(HfImportWindowTest, QwenWindowsOnlyWhenEnabledAndExpressible) {
  const char* qwen = R"({"model_type":"qwen2","architectures":["Qwen2ForCausalLM"],"sliding_window":4096,)";
  const json off = import_patched((std::string(qwen) + R"("use_sliding_window":false,"max_window_layers":0})").c_str());
  EXPECT_FALSE(off["result"]["model"].contains("sliding_window_tokens")) << off.dump();
  const json all = import_patched((std::string(qwen) + R"("use_sliding_window":true,"max_window_layers":0})").c_str());
  EXPECT_EQ(all["result"]["model"]["sliding_window_tokens"], 4096) << all.dump();
  const json upper = import_patched((std::string(qwen) + R"("use_sliding_window":true,"max_window_layers":8})").c_str());
  EXPECT_FALSE(upper["result"]["model"].contains("sliding_window_tokens"));
  EXPECT_TRUE(has_note(upper["result"]["notes"], "use_sliding_window: only layers from max_window_layers 8 on"));
}

}  // namespace
}  // namespace trainsim
