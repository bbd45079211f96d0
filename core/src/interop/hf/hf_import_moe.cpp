// Mixture-of-experts and MLA fields of Hugging Face configs. Which layers are
// MoE follows the modeling code of each family:
//   Mixtral  (modeling_mixtral.py): every layer, num_local_experts of intermediate_size.
//   Qwen-MoE (modeling_qwen2_moe.py, modeling_qwen3_moe.py): layer i is MoE iff
//            i not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0.
//   DeepSeek (modeling_deepseek.py, V2 and V3): layer i is MoE iff
//            i >= first_k_dense_replace and i % moe_layer_freq == 0.
// trainsim models a leading block of dense layers followed by MoE layers.
#include <algorithm>

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

// mlp_only_layers must be {0, 1, ..., k-1}; returns k, or -1 after an error.
int64_t leading_dense_block(HfReader& r, int64_t num_layers) {
  const json* layers = r.get("mlp_only_layers");
  if (layers == nullptr) return 0;
  if (!layers->is_array()) {
    r.error("mlp_only_layers", "expected an array of layer indices");
    return -1;
  }
  std::vector<int64_t> indices;
  for (const json& index : *layers) {
    if (!index.is_number_integer() || index.get<int64_t>() < 0 || index.get<int64_t>() >= num_layers) {
      r.error("mlp_only_layers", "expected layer indices in [0, " + std::to_string(num_layers) +
                                     "), got " + index.dump());
      return -1;
    }
    indices.push_back(index.get<int64_t>());
  }
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  if (!indices.empty() && indices.back() != static_cast<int64_t>(indices.size()) - 1) {
    r.error("mlp_only_layers", "only a leading block of dense layers (0, 1, ..., k-1) is supported, got " +
                                   layers->dump());
    return -1;
  }
  return static_cast<int64_t>(indices.size());
}

}  // namespace

void read_hf_qwen_moe(HfReader& r, json& m, bool shared_expert) {
  const int64_t num_layers = m["num_layers"].get<int64_t>();
  json moe = {{"num_experts", r.required("num_experts", 1, kMaxExperts)},
              {"top_k", r.required("num_experts_per_tok", 1, kMaxExperts)},
              {"expert_ffn_hidden_size", r.required("moe_intermediate_size", 1, kMaxWidth)},
              {"shared_expert_ffn_hidden_size", 0}};
  if (const auto step = r.integer("decoder_sparse_step", 1, kMaxLayers); step && *step != 1) {
    r.error("decoder_sparse_step", "only 1 (every layer MoE) is supported, got " + std::to_string(*step));
  }
  moe["num_dense_layers"] = std::max<int64_t>(0, leading_dense_block(r, num_layers));
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
  if (const auto freq = r.integer("moe_layer_freq", 1, kMaxLayers); freq && *freq != 1) {
    r.error("moe_layer_freq", "only 1 (every layer after first_k_dense_replace is MoE) is supported, got " +
                                  std::to_string(*freq));
  }
  m["moe"] = {{"num_experts", r.required("n_routed_experts", 1, kMaxExperts)},
              {"top_k", r.required("num_experts_per_tok", 1, kMaxExperts)},
              {"expert_ffn_hidden_size", expert_ffn},
              {"shared_expert_ffn_hidden_size", shared * expert_ffn},
              {"num_dense_layers", r.required("first_k_dense_replace", 0, num_layers - 1)}};
}

}  // namespace trainsim::interop
