// "model" section of a config document.
#include "schema/config_reader.h"
#include "schema/json_reader.h"
#include "input_limits.h"

namespace trainsim::schema {
namespace {

void read_mla(const nlohmann::json& value, const std::string& path, MlaSpec& mla, Issues& issues) {
  ObjectReader r(value, path, issues);
  mla.q_lora_rank = r.int_or("q_lora_rank", 0, 0, kMaxWidth);
  mla.kv_lora_rank = r.required_int("kv_lora_rank", 1, kMaxWidth);
  mla.qk_nope_head_dim = r.required_int("qk_nope_head_dim", 1, kMaxWidth);
  mla.qk_rope_head_dim = r.required_int("qk_rope_head_dim", 1, kMaxWidth);
  mla.v_head_dim = r.required_int("v_head_dim", 1, kMaxWidth);
  r.finish();
}

void read_moe(const nlohmann::json& value, const std::string& path, int64_t num_layers, MoeSpec& moe,
              Issues& issues) {
  ObjectReader r(value, path, issues);
  moe.num_experts = r.required_int("num_experts", 1, kMaxExperts);
  moe.top_k = r.required_int("top_k", 1, kMaxExperts);
  moe.expert_ffn_hidden_size = r.required_int("expert_ffn_hidden_size", 1, kMaxWidth);
  moe.shared_expert_ffn_hidden_size = r.int_or("shared_expert_ffn_hidden_size", 0, 0, kMaxWidth);
  moe.num_dense_layers = r.int_or("num_dense_layers", 0, 0, kMaxLayers);
  if (const nlohmann::json* freq = r.raw("moe_layer_freq")) {
    // Megatron --moe-layer-freq: N (layer i is MoE when i % N == 0) or a 0/1
    // list with one entry per layer.
    const std::string freq_path = r.path_of("moe_layer_freq");
    if (freq->is_number_integer() && freq->get<int64_t>() >= 1 &&
        freq->get<int64_t>() <= kMaxLayers) {
      const int64_t every = freq->get<int64_t>();
      for (int64_t i = 0; i < num_layers; ++i) moe.layer_pattern.push_back(i % every == 0 ? 1 : 0);
    } else if (freq->is_array() && static_cast<int64_t>(freq->size()) == num_layers) {
      for (size_t i = 0; i < freq->size(); ++i) {
        const auto& flag = (*freq)[i];
        if (!flag.is_number_integer() || (flag.get<int64_t>() != 0 && flag.get<int64_t>() != 1)) {
          issues.push_back({freq_path + "/" + std::to_string(i),
                            "expected 0 (dense) or 1 (MoE), got " + describe_json_value(flag)});
        }
        moe.layer_pattern.push_back(flag.is_number_integer() && flag.get<int64_t>() == 1 ? 1 : 0);
      }
    } else if (freq->is_array()) {
      issues.push_back({freq_path, "expected one entry per layer (" + std::to_string(num_layers) +
                                  "), got " + std::to_string(freq->size())});
    } else {
      issues.push_back({freq_path, "expected a positive integer or an array of 0/1 per layer, got " +
                                  describe_json_value(*freq)});
    }
    if (moe.num_dense_layers > 0) {
      issues.push_back({freq_path, "cannot be combined with num_dense_layers"});
    }
  }
  r.finish();
}

}  // namespace

void read_model(const nlohmann::json& value, const std::string& path, ModelSpec& model,
                Issues& issues) {
  ObjectReader r(value, path, issues);
  if (!r.ok()) return;
  model.name = r.optional_string("name").value_or("");
  model.num_layers = r.required_int("num_layers", 1, kMaxLayers);
  model.hidden_size = r.required_int("hidden_size", 1, kMaxWidth);
  model.num_attention_heads = r.required_int("num_attention_heads", 1, kMaxHeads);
  model.num_kv_heads = r.int_or("num_kv_heads", model.num_attention_heads, 1, kMaxHeads);
  const auto head_dim = r.optional_int("head_dim", 1, kMaxWidth);
  if (head_dim) {
    model.head_dim = *head_dim;
  } else if (!r.has("head_dim") && model.hidden_size % model.num_attention_heads == 0) {
    model.head_dim = model.hidden_size / model.num_attention_heads;
  } else if (!r.has("head_dim")) {
    issues.push_back({r.path_of("head_dim"),
                      "missing required key (hidden_size " + std::to_string(model.hidden_size) +
                          " is not a multiple of num_attention_heads " +
                          std::to_string(model.num_attention_heads) + ")"});
  }
  model.ffn_hidden_size = r.required_int("ffn_hidden_size", 1, kMaxWidth);
  model.vocab_size = r.required_int("vocab_size", 1, kMaxVocab);
  model.make_vocab_size_divisible_by = r.int_or("make_vocab_size_divisible_by", 128, 1, 1 << 20);
  model.activation = r.enum_or("activation", {"swiglu", "gelu"}, 0) == 0 ? Activation::kSwiglu
                                                                         : Activation::kGelu;
  model.norm = r.enum_or("norm", {"rmsnorm", "layernorm"}, 0) == 0 ? Norm::kRmsNorm
                                                                   : Norm::kLayerNorm;
  model.position_embedding = r.enum_or("position_embedding", {"rope", "learned"}, 0) == 0
                                 ? PositionEmbedding::kRope
                                 : PositionEmbedding::kLearned;
  model.max_position_embeddings = r.int_or("max_position_embeddings", 0, 0, kMaxSeqLen);
  if (model.position_embedding == PositionEmbedding::kLearned &&
      model.max_position_embeddings == 0 && !r.has("max_position_embeddings")) {
    issues.push_back({r.path_of("max_position_embeddings"),
                      "missing required key (position_embedding is \"learned\")"});
  }
  model.tie_embeddings = r.bool_or("tie_embeddings", false);
  model.linear_bias = r.bool_or("linear_bias", false);
  model.qk_layernorm = r.bool_or("qk_layernorm", false);
  model.sliding_window_tokens = r.int_or("sliding_window_tokens", 0, 0, kMaxSeqLen);
  model.full_attention_every_n_layers = r.int_or("full_attention_every_n_layers", 0, 0, kMaxLayers);
  model.mtp_num_layers = r.int_or("mtp_num_layers", 0, 0, kMaxMtpLayers);
  if (model.full_attention_every_n_layers > 0 && model.sliding_window_tokens == 0 &&
      r.has("full_attention_every_n_layers")) {
    issues.push_back({r.path_of("full_attention_every_n_layers"),
                      "needs sliding_window_tokens (the other layers' window); without a window "
                      "every layer attends fully"});
  }
  if (const nlohmann::json* mla = r.raw("mla"); mla != nullptr && !mla->is_null()) {
    model.mla.emplace();
    read_mla(*mla, r.path_of("mla"), *model.mla, issues);
  }
  if (const nlohmann::json* moe = r.raw("moe"); moe != nullptr && !moe->is_null()) {
    model.moe.emplace();
    read_moe(*moe, r.path_of("moe"), model.num_layers, *model.moe, issues);
  }
  r.finish();
}

}  // namespace trainsim::schema
