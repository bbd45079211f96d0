// The "model" section: its rows, their bounds (input_limits.h), units and help.
#include <string>

#include "input_limits.h"
#include "schema/config_schema.h"

namespace trainsim::schema {
namespace {

using F = Fields<ModelSpec>;
using Mla = Fields<MlaSpec>;
using Moe = Fields<MoeSpec>;
constexpr Presence kRequired = Presence::kRequired;
constexpr Presence kDefault = Presence::kDefault;
constexpr Presence kDerived = Presence::kDerived;
constexpr Presence kOptional = Presence::kOptional;

const Table<MlaSpec>& mla_table() {
  static const Table<MlaSpec> table = {
      Mla::integer("q_lora_rank", TRAINSIM_AT(q_lora_rank), kDefault, 0, kMaxWidth,
                   {"", "Q LoRA rank", "query compression rank (Megatron-LM --q-lora-rank); 0 = queries are not compressed"}),
      Mla::integer("kv_lora_rank", TRAINSIM_AT(kv_lora_rank), kRequired, 1, kMaxWidth,
                   {"", "KV LoRA rank", "key/value compression rank (--kv-lora-rank)"}),
      Mla::integer("qk_nope_head_dim", TRAINSIM_AT(qk_nope_head_dim), kRequired, 1, kMaxWidth,
                   {"", "QK nope dim", "query/key head dimension without rotary embedding (--qk-head-dim)"}),
      Mla::integer("qk_rope_head_dim", TRAINSIM_AT(qk_rope_head_dim), kRequired, 1, kMaxWidth,
                   {"", "QK rope dim", "query/key head dimension with rotary embedding (--qk-pos-emb-head-dim)"}),
      Mla::integer("v_head_dim", TRAINSIM_AT(v_head_dim), kRequired, 1, kMaxWidth,
                   {"", "V head dim", "value head dimension (--v-head-dim)"}),
  };
  return table;
}

// Megatron --moe-layer-freq: N (layer i is MoE when i % N == 0) or a 0/1 list
// with one entry per layer; written back as the list.
Field<MoeSpec> moe_layer_freq_row() {
  FieldInfo info;
  info.key = "moe_layer_freq";
  info.type = Type::kArray;
  info.items = Type::kInt;
  info.presence = kOptional;
  info.label = "MoE layer pattern";
  info.help = "which layers are MoE (Megatron-LM --moe-layer-freq): N (every N-th layer, from the "
              "first: interleaved MoE) or one 0 (dense) / 1 (MoE) per layer (Llama-4 Maverick: [0, 1] "
              "repeated); cannot be combined with num_dense_layers";
  auto read = [](ObjectReader& r, MoeSpec& moe, const ReadContext& context) {
    const nlohmann::json* freq = r.raw("moe_layer_freq");
    if (freq == nullptr) return;
    const int64_t num_layers = context.model->num_layers;
    Issues& issues = r.issues();
    const std::string path = r.path_of("moe_layer_freq");
    if (freq->is_number_integer() && freq->get<int64_t>() >= 1 && freq->get<int64_t>() <= kMaxLayers) {
      const int64_t every = freq->get<int64_t>();
      for (int64_t i = 0; i < num_layers; ++i) moe.layer_pattern.push_back(i % every == 0 ? 1 : 0);
    } else if (freq->is_array() && static_cast<int64_t>(freq->size()) == num_layers) {
      for (size_t i = 0; i < freq->size(); ++i) {
        const auto& flag = (*freq)[i];
        if (!flag.is_number_integer() || (flag.get<int64_t>() != 0 && flag.get<int64_t>() != 1)) {
          issues.push_back({path + "/" + std::to_string(i),
                            "expected 0 (dense) or 1 (MoE), got " + describe_json_value(flag)});
        }
        moe.layer_pattern.push_back(flag.is_number_integer() && flag.get<int64_t>() == 1 ? 1 : 0);
      }
    } else if (freq->is_array()) {
      issues.push_back({path, "expected one entry per layer (" + std::to_string(num_layers) +
                                  "), got " + std::to_string(freq->size())});
    } else {
      issues.push_back({path, "expected a positive integer or an array of 0/1 per layer, got " +
                                  describe_json_value(*freq)});
    }
    if (moe.num_dense_layers > 0) issues.push_back({path, "cannot be combined with num_dense_layers"});
    // A leading dense block then MoE layers is num_dense_layers (one canonical form).
    size_t dense = 0;
    while (dense < moe.layer_pattern.size() && moe.layer_pattern[dense] == 0) ++dense;
    bool block = dense < moe.layer_pattern.size();
    for (size_t i = dense; i < moe.layer_pattern.size() && block; ++i) block = moe.layer_pattern[i] == 1;
    if (block && moe.num_dense_layers == 0) {
      moe.num_dense_layers = static_cast<int64_t>(dense);
      moe.layer_pattern.clear();
    }
  };
  auto write = [](const MoeSpec& moe, nlohmann::json& out) {
    if (moe.layer_pattern.empty()) return;
    nlohmann::json pattern = nlohmann::json::array();
    for (const int8_t flag : moe.layer_pattern) pattern.push_back(flag);
    out["moe_layer_freq"] = pattern;
  };
  return Moe::custom(info, read, write);
}

const Table<MoeSpec>& moe_table() {
  static const Table<MoeSpec> table = {
      Moe::integer("num_experts", TRAINSIM_AT(num_experts), kRequired, 1, kMaxExperts,
                   {"", "Experts", "routed experts per MoE layer (Megatron-LM --num-experts)"}),
      Moe::integer("top_k", TRAINSIM_AT(top_k), kRequired, 1, kMaxExperts,
                   {"", "Top-k", "experts each token is routed to (--moe-router-topk)"}),
      Moe::integer("expert_ffn_hidden_size", TRAINSIM_AT(expert_ffn_hidden_size), kRequired, 1, kMaxWidth,
                   {"", "Expert FFN size", "hidden size of one routed expert's MLP (--moe-ffn-hidden-size)"}),
      Moe::integer("shared_expert_ffn_hidden_size", TRAINSIM_AT(shared_expert_ffn_hidden_size), kDefault, 0,
                   kMaxWidth, {"", "Shared expert FFN", "total hidden size of the shared experts (--moe-shared-expert-intermediate-size); 0 = none"}),
      Moe::integer("num_dense_layers", TRAINSIM_AT(num_dense_layers), kDefault, 0, kMaxLayers,
                   {"layers", "Dense layers", "leading dense layers before the MoE layers (DeepSeek first_k_dense_replace)"}),
      moe_layer_freq_row(),
      Moe::integer("router_num_groups", TRAINSIM_AT(router_num_groups), kDefault, 0, kMaxExperts,
                   {"", "Router groups", "experts split into this many equal groups for group-limited routing (Megatron-LM --moe-router-num-groups; DeepSeek-V3: 8, one per node); 0 = none"}),
      Moe::integer("router_group_topk", TRAINSIM_AT(router_group_topk), kDefault, 0, kMaxExperts,
                   {"", "Router group top-k", "groups each token's experts may lie in (--moe-router-group-topk; DeepSeek-V3: 4 nodes); 0 = not limited"}),
  };
  return table;
}

Field<ModelSpec> head_dim_row() {
  FieldInfo info = F::info("head_dim", Type::kInt, kDerived,
                           {"", "Head dim", "attention head dimension (--kv-channels); default hidden_size / num_attention_heads"});
  info.min = 1;
  info.max = static_cast<double>(kMaxWidth);
  auto read = [](ObjectReader& r, ModelSpec& m, const ReadContext&) {
    if (const auto head_dim = r.optional_int("head_dim", 1, kMaxWidth)) {
      m.head_dim = *head_dim;
    } else if (!r.has("head_dim") && m.hidden_size % m.num_attention_heads == 0) {
      m.head_dim = m.hidden_size / m.num_attention_heads;
    } else if (!r.has("head_dim")) {
      r.issues().push_back({r.path_of("head_dim"),
                            "missing required key (hidden_size " + std::to_string(m.hidden_size) +
                                " is not a multiple of num_attention_heads " +
                                std::to_string(m.num_attention_heads) + ")"});
    }
  };
  return F::custom(info, read, [](const ModelSpec& m, nlohmann::json& out) { out["head_dim"] = m.head_dim; });
}

}  // namespace

const Table<ModelSpec>& model_table() {
  static const Table<ModelSpec> table = {
      F::text("name", TRAINSIM_AT(name), {"", "Name", "the model's name (not used by the estimate)"}),
      F::integer("num_layers", TRAINSIM_AT(num_layers), kRequired, 1, kMaxLayers,
                 {"layers", "Layers", "transformer layers (Megatron-LM --num-layers)"}),
      F::integer("hidden_size", TRAINSIM_AT(hidden_size), kRequired, 1, kMaxWidth,
                 {"", "Hidden size", "model width (--hidden-size)"}),
      F::integer("num_attention_heads", TRAINSIM_AT(num_attention_heads), kRequired, 1, kMaxHeads,
                 {"", "Attention heads", "query heads (--num-attention-heads)"}),
      F::integer("num_kv_heads", TRAINSIM_AT(num_kv_heads), kDerived, 1, kMaxHeads,
                 {"", "KV heads", "key/value heads (--num-query-groups); default num_attention_heads"},
                 [](const ModelSpec& m) { return m.num_attention_heads; }),
      head_dim_row(),
      F::integer("ffn_hidden_size", TRAINSIM_AT(ffn_hidden_size), kRequired, 1, kMaxWidth,
                 {"", "FFN hidden size", "hidden size of the dense MLP (--ffn-hidden-size)"}),
      F::integer("vocab_size", TRAINSIM_AT(vocab_size), kRequired, 1, kMaxVocab,
                 {"tokens", "Vocabulary", "tokenizer vocabulary before padding"}),
      F::integer("make_vocab_size_divisible_by", TRAINSIM_AT(make_vocab_size_divisible_by), kDefault, 1, 1 << 20,
                 {"", "Vocab padding", "Megatron-LM pads the vocabulary to a multiple of this times tp"}),
      F::choice("activation", TRAINSIM_AT(activation), activation_names(),
                {"", "Activation", "MLP activation (swiglu: Megatron-LM --swiglu)"}),
      F::choice("norm", TRAINSIM_AT(norm), norm_names(), {"", "Norm", "normalization (--normalization)"}),
      F::choice("position_embedding", TRAINSIM_AT(position_embedding), position_embedding_names(),
                {"", "Positions", "rotary or learned absolute positions (--position-embedding-type)"}),
      F::integer("max_position_embeddings", TRAINSIM_AT(max_position_embeddings), kDefault, 0, kMaxSeqLen,
                 {"tokens", "Max positions", "rows of the learned position table; required with learned positions"}),
      F::rule([](ObjectReader& r, ModelSpec& m, const ReadContext&) {
        if (m.position_embedding == PositionEmbedding::kLearned && m.max_position_embeddings == 0 &&
            !r.has("max_position_embeddings")) {
          r.issues().push_back({r.path_of("max_position_embeddings"),
                                "missing required key (position_embedding is \"learned\")"});
        }
      }),
      F::boolean("tie_embeddings", TRAINSIM_AT(tie_embeddings),
                 {"", "Tied embeddings", "the output layer shares the word embeddings"}),
      F::boolean("linear_bias", TRAINSIM_AT(linear_bias),
                 {"", "Linear bias", "linear layers have biases (no --disable-bias-linear)"}),
      F::boolean("qk_layernorm", TRAINSIM_AT(qk_layernorm), {"", "QK layernorm", "norms on queries and keys (--qk-layernorm)"}),
      F::integer("sliding_window_tokens", TRAINSIM_AT(sliding_window_tokens), kDefault, 0, kMaxSeqLen,
                 {"tokens", "Sliding window", "tokens each query attends back to (Megatron-LM --window-size W,0); 0 = full causal attention"}),
      F::integer("full_attention_every_n_layers", TRAINSIM_AT(full_attention_every_n_layers), kDefault, 0, kMaxLayers,
                 {"layers", "Full attention every", "every n-th layer attends fully, the others through the window (--window-attn-skip-freq); 0 = every layer windowed"}),
      F::integer("mtp_num_layers", TRAINSIM_AT(mtp_num_layers), kDefault, 0, kMaxMtpLayers,
                 {"layers", "MTP layers", "multi-token prediction depth (--mtp-num-layers; DeepSeek-V3: 1)"}),
      F::rule([](ObjectReader& r, ModelSpec& m, const ReadContext&) {
        if (m.full_attention_every_n_layers > 0 && m.sliding_window_tokens == 0 &&
            r.has("full_attention_every_n_layers")) {
          r.issues().push_back({r.path_of("full_attention_every_n_layers"),
                                "needs sliding_window_tokens (the other layers' window); without a "
                                "window every layer attends fully"});
        }
      }),
      F::object("mla", TRAINSIM_AT(mla), mla_table(), kOptional,
                {"", "Multi-head latent attention", "DeepSeek-V2/V3 latent attention (--multi-latent-attention)"}),
      F::object("moe", TRAINSIM_AT(moe), moe_table(), kOptional,
                {"", "Mixture of experts", "MoE feed-forward layers (Megatron-Core MoELayer)"}),
  };
  return table;
}

}  // namespace trainsim::schema
