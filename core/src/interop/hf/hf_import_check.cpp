// Values estimate would reject in an imported model (kv heads not dividing the
// heads, top-k above the experts...), found at import time by the readers and
// validate() estimate itself runs, and reported at the config.json key they
// come from ("/model/num_kv_heads" -> "/hf/num_key_value_heads"). No rule is
// restated here.
#include <string>
#include <vector>

#include "interop/hf/hf_import.h"
#include "schema/config_reader.h"
#include "validate.h"

namespace trainsim::interop {
namespace {

struct KeyOrigin {
  const char* pointer;               ///< a model key (its subtree too)
  std::vector<const char*> hf_keys;  ///< config.json keys that set it, first present wins
};

const KeyOrigin kOrigins[] = {
    {"/model/num_layers", {"num_hidden_layers"}},
    {"/model/hidden_size", {"hidden_size"}},
    {"/model/num_attention_heads", {"num_attention_heads"}},
    {"/model/num_kv_heads", {"num_key_value_heads", "num_attention_heads"}},
    {"/model/head_dim", {"head_dim", "qk_nope_head_dim", "hidden_size"}},
    {"/model/ffn_hidden_size", {"intermediate_size"}},
    {"/model/vocab_size", {"vocab_size"}},
    {"/model/moe/num_experts", {"num_local_experts", "num_experts", "n_routed_experts"}},
    {"/model/moe/top_k", {"num_experts_per_tok", "experts_per_token"}},
    {"/model/moe/expert_ffn_hidden_size", {"moe_intermediate_size", "intermediate_size"}},
    {"/model/moe/shared_expert_ffn_hidden_size",
     {"shared_expert_intermediate_size", "n_shared_experts"}},
    {"/model/moe/num_dense_layers", {"first_k_dense_replace", "mlp_only_layers"}},
    {"/model/mla/q_lora_rank", {"q_lora_rank"}},
    {"/model/mla/kv_lora_rank", {"kv_lora_rank"}},
    {"/model/mla/qk_nope_head_dim", {"qk_nope_head_dim"}},
    {"/model/mla/qk_rope_head_dim", {"qk_rope_head_dim"}},
    {"/model/mla/v_head_dim", {"v_head_dim"}},
    {"/model/mtp_num_layers", {"num_nextn_predict_layers"}},
    {"/model/sliding_window_tokens", {"sliding_window", "sliding_window_size"}},
    {"/model/full_attention_every_n_layers", {"layer_types"}},
};

bool under(const std::string& path, const char* pointer) {
  const std::string p(pointer);
  return path.compare(0, p.size(), p) == 0 && (path.size() == p.size() || path[p.size()] == '/');
}

}  // namespace

void check_hf_model(const nlohmann::json& model, const nlohmann::json& document, Issues& issues) {
  // The model alone on one GPU: only the model's own rules can fail.
  const nlohmann::json config = {
      {"model", model},
      {"training", {{"seq_len", 1}, {"micro_batch_size", 1}, {"num_micro_batches", 1}, {"dp", 1}}},
      {"system", "h100-sxm-80gb"}};
  Config parsed;
  Issues found;
  if (schema::read_config_document(config, parsed, found)) found = validate(parsed);
  for (const Issue& issue : found) {
    std::string path = "/hf";
    std::string message = "gives the model's " + issue.path + " that " + issue.message;
    for (const KeyOrigin& origin : kOrigins) {
      if (!under(issue.path, origin.pointer)) continue;
      for (const char* key : origin.hf_keys) {
        if (document.contains(key) && !document[key].is_null()) {
          path = "/hf/" + std::string(key);
          message = issue.message;
          break;
        }
      }
      break;
    }
    issues.push_back({path, message});
  }
}

}  // namespace trainsim::interop
