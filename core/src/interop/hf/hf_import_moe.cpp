// Mixture-of-experts and MLA fields of Hugging Face configs. Which layers are
// MoE follows the modeling code of each family:
//   Mixtral  (modeling_mixtral.py): every layer, num_local_experts of intermediate_size.
//   Qwen-MoE (modeling_qwen2_moe.py, modeling_qwen3_moe.py): layer i is MoE iff
//            i not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0.
//   DeepSeek (modeling_deepseek.py, V2 and V3): layer i is MoE iff
//            i >= first_k_dense_replace and i % moe_layer_freq == 0.
// A leading dense block is num_dense_layers; other patterns moe_layer_freq.
#include <algorithm>
#include <optional>
#include <vector>

#include "interop/hf/hf_import.h"
#include "input_limits.h"

namespace trainsim::interop {

using nlohmann::json;

void read_hf_mixtral(HfReader& r, json& m) {
  const int64_t experts = r.integer_or("num_local_experts", 1, kMaxExperts, 8, "MixtralConfig");
  const int64_t top_k = r.integer_or("num_experts_per_tok", 1, kMaxExperts, 2, "MixtralConfig");
  m["moe"] = {{"num_experts", experts},
              {"top_k", top_k},
              {"expert_ffn_hidden_size", m["ffn_hidden_size"]},
              {"shared_expert_ffn_hidden_size", 0},
              {"num_dense_layers", 0}};
}

namespace {

// A per-layer MoE pattern: a leading dense block becomes num_dense_layers, any other
// pattern moe_layer_freq (the schema folds it the same way).
void set_layer_pattern(json& moe, const std::vector<int8_t>& pattern) {
  size_t dense = 0;
  while (dense < pattern.size() && pattern[dense] == 0) ++dense;
  bool block = true;
  for (size_t i = dense; i < pattern.size(); ++i) block = block && pattern[i] == 1;
  if (block) {
    moe["num_dense_layers"] = static_cast<int64_t>(dense);
  } else {
    moe["num_dense_layers"] = 0;
    moe["moe_layer_freq"] = pattern;
  }
}

// mlp_only_layers: layer indices in [0, num_layers); empty on error.
std::optional<std::vector<int64_t>> dense_layer_list(HfReader& r, int64_t num_layers) {
  const json* layers = r.get("mlp_only_layers");
  if (layers == nullptr) return std::vector<int64_t>{};
  if (!layers->is_array()) {
    r.error("mlp_only_layers", "expected an array of layer indices");
    return std::nullopt;
  }
  std::vector<int64_t> indices;
  for (const json& index : *layers) {
    if (!index.is_number_integer() || index.get<int64_t>() < 0 || index.get<int64_t>() >= num_layers) {
      r.error("mlp_only_layers", "expected layer indices in [0, " + std::to_string(num_layers) +
                                     "), got " + index.dump());
      return std::nullopt;
    }
    indices.push_back(index.get<int64_t>());
  }
  return indices;
}

}  // namespace

void read_hf_qwen_moe(HfReader& r, json& m, bool shared_expert) {
  const int64_t num_layers = m["num_layers"].get<int64_t>();
  json moe = {{"num_experts", r.required("num_experts", 1, kMaxExperts)},
              {"top_k", r.required("num_experts_per_tok", 1, kMaxExperts)},
              {"expert_ffn_hidden_size", r.required("moe_intermediate_size", 1, kMaxWidth)},
              {"shared_expert_ffn_hidden_size", 0}};
  // modeling_qwen2_moe.py / modeling_qwen3_moe.py: layer i is sparse iff i is not in
  // mlp_only_layers and (i + 1) % decoder_sparse_step == 0 (defaults 1 and []).
  const int64_t step = r.integer("decoder_sparse_step", 1, kMaxLayers).value_or(1);
  const auto dense = dense_layer_list(r, num_layers);
  std::vector<int8_t> pattern(static_cast<size_t>(num_layers), 0);
  for (int64_t i = 0; i < num_layers; ++i) pattern[static_cast<size_t>(i)] = (i + 1) % step == 0 ? 1 : 0;
  for (const int64_t i : dense.value_or(std::vector<int64_t>{})) pattern[static_cast<size_t>(i)] = 0;
  if (std::find(pattern.begin(), pattern.end(), 1) == pattern.end()) {
    r.error("decoder_sparse_step", "leaves no MoE layer (with mlp_only_layers)");
  }
  set_layer_pattern(moe, pattern);
  if (shared_expert) {
    moe["shared_expert_ffn_hidden_size"] = r.required("shared_expert_intermediate_size", 1, kMaxWidth);
    r.note("the sigmoid gate of the Qwen2-MoE shared expert is not modelled");
  }
  m["moe"] = moe;
}

void read_hf_deepseek(HfReader& r, json& m) {
  const char* config = "DeepseekV2Config/DeepseekV3Config";
  json mla = json::object();
  if (r.get("q_lora_rank") == nullptr && !r.present("q_lora_rank")) {
    r.note(std::string("q_lora_rank is absent: ") + config + " default 1536");
    mla["q_lora_rank"] = 1536;
  } else {
    mla["q_lora_rank"] = r.integer("q_lora_rank", 1, kMaxWidth).value_or(0);  // null: no compression
  }
  mla["kv_lora_rank"] = r.integer_or("kv_lora_rank", 1, kMaxWidth, 512, config);
  mla["qk_nope_head_dim"] = r.integer_or("qk_nope_head_dim", 1, kMaxWidth, 128, config);
  mla["qk_rope_head_dim"] = r.integer_or("qk_rope_head_dim", 1, kMaxWidth, 64, config);
  mla["v_head_dim"] = r.integer_or("v_head_dim", 1, kMaxWidth, 128, config);
  m["mla"] = mla;
  m["head_dim"] = mla["qk_nope_head_dim"].get<int64_t>() + mla["qk_rope_head_dim"].get<int64_t>();
  const int64_t num_layers = m["num_layers"].get<int64_t>();
  const int64_t expert_ffn = r.required("moe_intermediate_size", 1, kMaxWidth);
  const int64_t shared = r.integer("n_shared_experts", 0, kMaxExperts).value_or(0);  // None: none
  const int64_t freq = r.integer("moe_layer_freq", 1, kMaxLayers).value_or(1);
  const int64_t first_dense = r.required("first_k_dense_replace", 0, num_layers - 1);
  json moe = {{"num_experts", r.required("n_routed_experts", 1, kMaxExperts)},
              {"top_k", r.required("num_experts_per_tok", 1, kMaxExperts)},
              {"expert_ffn_hidden_size", expert_ffn},
              {"shared_expert_ffn_hidden_size", shared * expert_ffn}};
  std::vector<int8_t> pattern(static_cast<size_t>(num_layers), 0);
  for (int64_t i = first_dense; i < num_layers; ++i) pattern[static_cast<size_t>(i)] = i % freq == 0 ? 1 : 0;
  if (std::find(pattern.begin(), pattern.end(), 1) == pattern.end()) {
    r.error("moe_layer_freq", "leaves no MoE layer after first_k_dense_replace");
  }
  set_layer_pattern(moe, pattern);
  // Group-limited routing (DeepSeek-V3: n_group 8, topk_group 4, one group per node).
  const int64_t groups = r.integer("n_group", 1, kMaxExperts).value_or(1);
  const int64_t group_topk = r.integer("topk_group", 1, kMaxExperts).value_or(groups);
  if (groups > 1 && group_topk < groups) {
    moe["router_num_groups"] = groups;
    moe["router_group_topk"] = group_topk;
  }
  m["moe"] = moe;
}

}  // namespace trainsim::interop
