// Every key of the published config schema survives the exchange formats: a
// config that sets it to a non-default value gives the same estimate after
// `export json`, and the same canonical config after `export megatron` then
// `import megatron`, unless the exporter's notes name the key. A new key
// without a case here fails EveryConfigKeyHasACase, so no key can be forgotten.
#include <gtest/gtest.h>

#include <regex>

#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

struct KeyCase {
  const char* key;   ///< "<section>.<dotted key>"; also covers the keys below it
  const char* base;  ///< "dense", "moe" or "mla"
  const char* patch;  ///< JSON merge patch of the base config
};

const KeyCase kCases[] = {
    {"model.name", "dense", R"({"model": {"name": "renamed"}})"},
    {"model.num_layers", "dense", R"({"model": {"num_layers": 16}})"},
    {"model.hidden_size", "dense", R"({"model": {"hidden_size": 3072}})"},
    {"model.num_attention_heads", "dense", R"({"model": {"num_attention_heads": 16, "head_dim": 128}})"},
    {"model.num_kv_heads", "dense", R"({"model": {"num_kv_heads": 4}})"},
    {"model.head_dim", "dense", R"({"model": {"head_dim": 96}})"},
    {"model.ffn_hidden_size", "dense", R"({"model": {"ffn_hidden_size": 8192}})"},
    {"model.vocab_size", "dense", R"({"model": {"vocab_size": 32000}})"},
    {"model.make_vocab_size_divisible_by", "dense", R"({"model": {"make_vocab_size_divisible_by": 64}})"},
    {"model.activation", "dense", R"({"model": {"activation": "gelu"}})"},
    {"model.norm", "dense", R"({"model": {"norm": "layernorm"}})"},
    {"model.position_embedding", "dense",
     R"({"model": {"position_embedding": "learned", "max_position_embeddings": 8192}})"},
    {"model.max_position_embeddings", "dense", R"({"model": {"max_position_embeddings": 8192}})"},
    {"model.tie_embeddings", "dense", R"({"model": {"tie_embeddings": true}})"},
    {"model.linear_bias", "dense", R"({"model": {"linear_bias": true}})"},
    {"model.qk_layernorm", "dense", R"({"model": {"qk_layernorm": true}})"},
    {"model.sliding_window_tokens", "dense", R"({"model": {"sliding_window_tokens": 1024}})"},
    {"model.full_attention_every_n_layers", "dense",
     R"({"model": {"sliding_window_tokens": 1024, "full_attention_every_n_layers": 4}})"},
    {"model.mtp_num_layers", "dense", R"({"model": {"mtp_num_layers": 1}})"},
    {"model.mla", "mla",
     R"({"model": {"mla": {"q_lora_rank": 512, "kv_lora_rank": 256, "qk_nope_head_dim": 64,
                           "qk_rope_head_dim": 32, "v_head_dim": 64}}})"},
    {"model.moe", "moe",
     R"({"model": {"moe": {"num_experts": 16, "top_k": 4, "expert_ffn_hidden_size": 7168,
                           "shared_expert_ffn_hidden_size": 2048, "num_dense_layers": 2}}})"},
    {"model.moe.moe_layer_freq", "moe", R"({"model": {"moe": {"moe_layer_freq": 2}}})"},
    {"model.moe.router_num_groups", "moe", R"({"model": {"moe": {"router_num_groups": 4, "router_group_topk": 2}}})"},
    {"model.moe.router_group_topk", "moe", R"({"model": {"moe": {"router_num_groups": 2, "router_group_topk": 1}}})"},
    {"training.seq_len", "dense", R"({"training": {"seq_len": 2048}})"},
    {"training.micro_batch_size", "dense", R"({"training": {"micro_batch_size": 2}})"},
    {"training.global_batch_size", "dense", R"({"training": {"global_batch_size": 128}})"},
    {"training.num_micro_batches", "dense", R"({"training": {"global_batch_size": null, "num_micro_batches": 3}})"},
    {"training.train_tokens", "dense", R"({"training": {"train_tokens": 1e12}})"},
    {"training.dtype", "dense", R"({"training": {"dtype": "fp8"}})"},
    {"training.tp", "dense", R"({"training": {"tp": 4}, "system": {"num_gpus": 32}})"},
    {"training.pp", "dense", R"({"training": {"pp": 4}, "system": {"num_gpus": 32}})"},
    {"training.dp", "dense", R"({"training": {"dp": 2}, "system": {"num_gpus": 8}})"},
    {"training.cp", "dense", R"({"training": {"cp": 2}, "system": {"num_gpus": 32}})"},
    {"training.ep", "moe", R"({"training": {"ep": 4}})"},
    {"training.etp", "moe", R"({"training": {"etp": 1}})"},
    {"training.vpp", "dense", R"({"training": {"vpp": 2}})"},
    {"training.sequence_parallel", "dense", R"({"training": {"sequence_parallel": false}})"},
    {"training.num_layers_in_first_stage", "dense",
     R"({"training": {"pp": 4, "num_layers_in_first_stage": 5, "num_layers_in_last_stage": 5}, "system": {"num_gpus": 32}})"},
    {"training.num_layers_in_last_stage", "dense",
     R"({"training": {"pp": 3, "num_layers_in_last_stage": 12}, "system": {"num_gpus": 24}})"},
    {"training.account_for_embedding_in_pipeline_split", "dense",
     R"({"training": {"pp": 3, "account_for_embedding_in_pipeline_split": true}, "system": {"num_gpus": 24}})"},
    {"training.account_for_loss_in_pipeline_split", "dense",
     R"({"training": {"pp": 3, "account_for_loss_in_pipeline_split": true}, "system": {"num_gpus": 24}})"},
    {"training.pipeline_schedule", "dense", R"({"training": {"pipeline_schedule": "zero_bubble_h1"}})"},
    {"training.pipeline_layout", "dense", R"({"training": {"pipeline_layout": "Et*8|t*8|t*8|t*8L"}})"},
    {"training.cp_comm_type", "dense", R"({"training": {"cp": 2, "cp_comm_type": "all_gather"}, "system": {"num_gpus": 32}})"},
    {"training.zero_stage", "dense", R"({"training": {"zero_stage": 3}})"},
    {"training.grad_reduce_in_bf16", "dense", R"({"training": {"grad_reduce_in_bf16": true}})"},
    {"training.gradient_accumulation_fusion", "dense", R"({"training": {"gradient_accumulation_fusion": false}})"},
    {"training.fsdp_double_buffer", "dense", R"({"training": {"zero_stage": 3, "fsdp_double_buffer": true}})"},
    {"training.fsdp_communication_unit_elements", "dense",
     R"({"training": {"zero_stage": 3, "fsdp_communication_unit_elements": 800000000}})"},
    {"training.te_version", "dense", R"({"training": {"te_version": "2.2"}})"},
    {"training.recompute", "dense",
     R"({"training": {"recompute": {"granularity": "full", "method": "uniform", "num_layers": 2}}})"},
    {"training.recompute.modules", "moe",
     R"({"training": {"recompute": {"granularity": "selective", "modules": ["moe_act", "layernorm", "mlp_norm"],
                                    "num_layers": 2, "keep_tail_outputs": true}}})"},
    {"training.flash_attention", "dense", R"({"training": {"flash_attention": false}})"},
    {"training.fused_cross_entropy", "dense", R"({"training": {"fused_cross_entropy": true}})"},
    {"training.scatter_gather_tensors_in_pipeline", "dense",
     R"({"training": {"scatter_gather_tensors_in_pipeline": true}})"},
    {"training.fused_norm", "dense", R"({"training": {"fused_norm": false}})"},
    {"training.fused_swiglu", "dense", R"({"training": {"fused_swiglu": false}})"},
    {"training.overlap_grad_reduce", "dense", R"({"training": {"overlap_grad_reduce": true}})"},
    {"training.overlap_param_gather", "dense", R"({"training": {"overlap_param_gather": true}})"},
    {"training.tp_comm_overlap", "dense", R"({"training": {"tp_comm_overlap": true}})"},
    {"training.overlap_p2p_comm", "dense",
     R"({"training": {"pp": 4, "vpp": 2, "overlap_p2p_comm": false}, "system": {"num_gpus": 32}})"},
    {"training.defer_embedding_wgrad_compute", "dense",
     R"({"training": {"defer_embedding_wgrad_compute": true}})"},
    {"training.wgrad_deferral_limit", "dense",
     R"({"training": {"defer_embedding_wgrad_compute": true, "wgrad_deferral_limit": 3}})"},
    {"training.overlap_moe_expert_parallel_comm", "moe",
     R"({"training": {"vpp": 2, "overlap_moe_expert_parallel_comm": true}})"},
    {"training.delay_wgrad_compute", "moe",
     R"({"training": {"vpp": 2, "overlap_moe_expert_parallel_comm": true, "delay_wgrad_compute": true}})"},
    {"training.moe_shared_expert_overlap", "mla", R"({"training": {"moe_shared_expert_overlap": true}})"},
    {"training.moe_pad_to_capacity", "moe", R"({"training": {"moe_pad_to_capacity": true, "moe_capacity_factor": 1.5}})"},
    {"training.moe_capacity_factor", "moe", R"({"training": {"moe_capacity_factor": 1.25}})"},
    {"training.moe_routing_imbalance", "moe", R"({"training": {"moe_routing_imbalance": 1.5}})"},
    {"training.moe_token_dispatcher", "moe", R"({"training": {"moe_token_dispatcher": "flex"}})"},
    {"training.moe_flex_dispatcher_num_sms", "moe",
     R"({"training": {"moe_token_dispatcher": "flex", "moe_flex_dispatcher_num_sms": 24}})"},
    {"training.moe_router_load_balancing_type", "moe",
     R"({"training": {"moe_router_load_balancing_type": "seq_aux_loss", "moe_aux_loss_coeff": 0.0001}})"},
    {"training.moe_aux_loss_coeff", "moe", R"({"training": {"moe_aux_loss_coeff": 0.01}})"},
    {"training.moe_router_enable_expert_bias", "moe", R"({"training": {"moe_router_enable_expert_bias": true}})"},
    {"training.moe_router_fp32", "moe", R"({"training": {"moe_router_fp32": true}})"},
    {"training.moe_permute_probs_fused", "moe", R"({"training": {"moe_permute_probs_fused": true}})"},
    {"training.expandable_segments", "dense", R"({"training": {"expandable_segments": true}})"},
    {"training.nccl_nvls", "dense", R"({"training": {"nccl_nvls": false}})"},
    {"training.optimizer_offload_fraction", "dense",
     R"({"training": {"optimizer_offload_fraction": 0.5, "overlap_cpu_optimizer_d2h_h2d": true}})"},
    {"training.overlap_cpu_optimizer_d2h_h2d", "dense",
     R"({"training": {"optimizer_offload_fraction": 1.0, "overlap_cpu_optimizer_d2h_h2d": true}})"},
    {"training.activation_offload_layers", "dense",
     R"({"training": {"pp": 1, "activation_offload_layers": 12}, "system": {"num_gpus": 8}})"},
    {"training.fp8_recipe", "dense", R"({"training": {"dtype": "fp8", "fp8_recipe": "tensorwise"}})"},
    {"training.fp8_param_gather", "dense", R"({"training": {"dtype": "fp8", "fp8_param_gather": true}})"},
    {"training.fused_bias_dropout", "dense", R"({"training": {"fused_bias_dropout": false, "hidden_dropout": 0.1}})"},
    {"training.fused_rope", "dense", R"({"training": {"fused_rope": false}})"},
    {"training.fused_softmax", "dense", R"({"training": {"fused_softmax": false, "flash_attention": false}})"},
    {"training.hidden_dropout", "dense", R"({"training": {"hidden_dropout": 0.1}})"},
    {"training.attention_dropout", "dense", R"({"training": {"attention_dropout": 0.1, "flash_attention": false}})"},
    {"training.cuda_graph", "dense",
     R"({"training": {"cuda_graph": {"impl": "transformer_engine", "modules": ["attn", "mlp"]}}})"},
    {"training.moe_router_fusion", "moe", R"({"training": {"moe_router_fusion": true}})"},
    {"training.moe_permute_fusion", "moe", R"({"training": {"moe_permute_fusion": true}})"},
    {"system.name", "dense", R"({"system": {"name": "renamed"}})"},
    {"system.num_gpus", "dense", R"({"system": {"num_gpus": 32}})"},
    {"system.gpus_per_node", "dense", R"({"system": {"gpus_per_node": 4}})"},
    {"system.straggler_coefficient", "dense", R"({"system": {"straggler_coefficient": 0.5}})"},
    {"system.nccl_channels", "dense", R"({"system": {"nccl_channels": 32}})"},
    {"system.host", "dense",
     R"({"system": {"host": {"memory_gib_per_gpu": 100, "memory_bandwidth_gb_per_s_per_gpu": 50,
         "memory_efficiency": 0.5, "link_gb_per_s": 25, "link_efficiency": 0.75}}})"},
    {"system.nvls_buffer_mib", "dense", R"({"system": {"nvls_buffer_mib": 2048}})"},
    {"system.gpu.usable_memory_mib", "dense",
     R"({"system": {"gpu": {"usable_memory_mib": 80000, "cuda_context_mib": 600, "compute_capability": 8.0}}})"},
    {"system.gpu", "dense",
     R"({"system": {"gpu": {"name": "x", "hbm_capacity_gib": 96, "hbm_bandwidth_gb_per_s": 4000,
                           "peak_tflops": {"bf16": 1000, "fp16": 1000, "fp8": 2000}}}})"},
    {"system.intra_node", "dense",
     R"({"system": {"intra_node": {"bandwidth_gb_per_s": 400, "latency_us": 2, "efficiency": 0.75,
         "collectives": {"all_reduce": {"efficiency": 0.5, "latency_us": 3}, "all_gather": {"efficiency": 0.5, "latency_us": 3},
                         "reduce_scatter": {"efficiency": 0.5, "latency_us": 3}, "all_to_all": {"efficiency": 0.5, "latency_us": 3},
                         "p2p": {"efficiency": 0.5, "latency_us": 3}},
         "dp_all_gather_gb_per_s": {"2": 100}, "dp_reduce_scatter_gb_per_s": {"2": 100}}}})"},
    {"system.inter_node", "dense",
     R"({"system": {"inter_node": {"bandwidth_gb_per_s": 40, "latency_us": 8, "efficiency": 0.75,
         "collectives": {"all_reduce": {"efficiency": 0.5, "latency_us": 9}, "all_gather": {"efficiency": 0.5, "latency_us": 9},
                         "reduce_scatter": {"efficiency": 0.5, "latency_us": 9}, "all_to_all": {"efficiency": 0.5, "latency_us": 9},
                         "p2p": {"efficiency": 0.5, "latency_us": 9}},
         "dp_all_gather_gb_per_s": {"16": 20}, "dp_reduce_scatter_gb_per_s": {"16": 20}}}})"},
    {"system.intra_node_tiers", "dense",
     R"({"system": {"intra_node_tiers": [{"bandwidth_gb_per_s": 50, "latency_us": 2, "efficiency": 0.75, "max_group_size": 2,
         "collectives": {"all_reduce": {"efficiency": 0.5, "latency_us": 3}, "all_gather": {"efficiency": 0.5, "latency_us": 3},
                         "reduce_scatter": {"efficiency": 0.5, "latency_us": 3}, "all_to_all": {"efficiency": 0.5, "latency_us": 3},
                         "p2p": {"efficiency": 0.5, "latency_us": 3}},
         "dp_all_gather_gb_per_s": {"2": 25}, "dp_reduce_scatter_gb_per_s": {"2": 25}}]}})"},
    {"system.provenance", "dense",
     R"({"system": {"provenance": {"/efficiency/gemm/bf16": {"kind": "assumed", "source": "a test"}}}})"},
    {"system.efficiency", "dense",
     R"({"system": {"efficiency": {"gemm": {"bf16": 0.5, "fp8": 0.375, "mxfp8": 0.25}, "grouped_gemm": {"bf16": 0.25, "fp8": 0.125},
         "attention": {"forward": {"128": {"causal": {"1024": 0.25, "8192": 0.5}}}, "backward": {"64": {"non_causal": {"4096": 0.25}}},
                       "tiles_half": {"forward": 300, "backward": 100}},
         "gemm_k_half": 200, "sustained_fraction": 0.875, "host": {"launch_us": 7, "native_launch_us": 3, "expert_gemm_launch_us": 20, "sync_us": 30},
         "num_sms": 132, "tile_m": 256, "tile_n": 64,
         "memory": {"efficiency": 0.5, "latency_us": 4}, "permute": {"efficiency": 0.25, "latency_us": 8},
         "cross_entropy": {"efficiency": 0.125, "latency_us": 2}, "cross_entropy_fused": {"efficiency": 0.75, "latency_us": 1},
         "measured": {"gemm": {"b=1, m=8192, k=4096, n=6144": 0.5}, "grouped_gemm": {"g=8, m=1024, k=4096, n=14336": 0.25},
                      "attention_forward": {"b=1, s=4096, h=32, d=128": 0.5}, "attention_backward": {"b=1, s=4096, h=32, d=128": 0.25}}}}})"},
};

Json base_config(const std::string& base) {
  Json config = Json::parse(R"({
    "model": {"preset": "llama3-8b"},
    "training": {"seq_len": 4096, "micro_batch_size": 1, "global_batch_size": 64, "tp": 2, "pp": 2,
                 "sequence_parallel": true},
    "system": {"preset": "h100-sxm-80gb", "num_gpus": 16}})");
  if (base == "moe") {
    config["model"]["preset"] = "mixtral-8x7b";
    config["training"]["ep"] = 2;
  } else if (base == "mla") {
    config["model"]["preset"] = "deepseek-v2-lite";
    config["training"]["pp"] = 1;
    config["training"]["ep"] = 2;
  }
  return config;
}

Json ok_result(const std::string& envelope) {
  const Json parsed = Json::parse(envelope);
  if (!parsed.value("ok", false)) throw std::runtime_error(envelope);
  return parsed["result"];
}

// The case whose key is the field's key or the longest dotted prefix of it.
const KeyCase* case_for(const std::string& key) {
  const KeyCase* best = nullptr;
  for (const KeyCase& c : kCases) {
    const std::string k = c.key;
    if ((key == k || key.rfind(k + ".", 0) == 0) && (best == nullptr || k.size() > std::string(best->key).size())) {
      best = &c;
    }
  }
  return best;
}

TEST(EveryKeyRoundTripTest, EveryConfigKeyHasACase) {
  const Json schema = ok_result(schema_json());
  int leaves = 0;
  for (const char* section : {"model", "training", "system"}) {
    for (const Json& field : schema["config"][section]) {
      if (field["type"] == "object") continue;
      const std::string key = std::string(section) + "." + field["key"].get<std::string>();
      EXPECT_NE(case_for(key), nullptr) << "no round-trip case for " << key << ": add one to kCases";
      ++leaves;
    }
  }
  EXPECT_GT(leaves, 100);
}

// A note names a key when it holds the dotted key (or "<section>.<key>") as a word; the system
// section is named as a whole by the note that the system is not exported.
bool named_in_notes(const std::string& section, const std::string& dotted, const Json& notes) {
  const std::string escaped = std::regex_replace(dotted, std::regex("\\."), "\\.");
  const std::regex word("(^|[^a-z_.])(" + section + "\\.)?" + escaped + "($|[^a-z_])");
  for (const Json& note : notes) {
    const std::string text = note.get<std::string>();
    if (std::regex_search(text, word)) return true;
    if (section == "system" && text.rfind("the system (", 0) == 0) return true;
  }
  return false;
}

// "/model/moe/moe_layer_freq/3" -> section "model", key "moe.moe_layer_freq".
std::pair<std::string, std::string> dotted_key(const std::string& pointer) {
  std::vector<std::string> parts;
  std::string part;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      if (!part.empty() && !std::all_of(part.begin(), part.end(), ::isdigit)) parts.push_back(part);
      part.clear();
    } else {
      part += pointer[i];
    }
  }
  std::string key;
  for (size_t i = 1; i < parts.size(); ++i) key += (key.empty() ? "" : ".") + parts[i];
  return {parts.empty() ? "" : parts[0], key};
}

class EveryKeyRoundTripTest : public ::testing::TestWithParam<KeyCase> {};

TEST_P(EveryKeyRoundTripTest, SurvivesExportJsonAndExportMegatron) {
  const KeyCase& c = GetParam();
  Json config = base_config(c.base);
  config.merge_patch(Json::parse(c.patch));
  const Json canonical = ok_result(export_config_json(config.dump()))["config"];
  // export json: the canonical config estimates exactly like the original.
  EXPECT_EQ(estimate_json(canonical.dump()), estimate_json(config.dump()));
  EXPECT_EQ(ok_result(export_config_json(canonical.dump()))["config"], canonical);

  // export megatron -> import megatron: the same canonical config, or notes naming what differs.
  const Json exported = ok_result(export_megatron_json(config.dump()));
  const std::string system = config["system"]["preset"];
  const Json imported = Json::parse(import_megatron_json(exported["command"].get<std::string>(), system));
  const auto [section, key] = dotted_key("/" + std::string(c.key).replace(std::string(c.key).find('.'), 1, "/"));
  if (!imported["ok"].get<bool>()) {
    EXPECT_TRUE(named_in_notes(section, key, exported["notes"]))
        << c.key << ": re-import failed and no note names it: " << imported.dump() << "\n" << exported["command"];
    return;
  }
  const Json back = ok_result(export_config_json(imported["result"]["config"].dump()))["config"];
  for (const Json& op : Json::diff(canonical, back)) {
    const auto [diff_section, diff_key] = dotted_key(op["path"].get<std::string>());
    EXPECT_TRUE(named_in_notes(diff_section, diff_key, exported["notes"]))
        << c.key << ": " << op.dump() << " after export/import megatron, and no note names " << diff_section << "."
        << diff_key << "\nnotes: " << exported["notes"].dump() << "\n" << exported["command"].get<std::string>();
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKey, EveryKeyRoundTripTest, ::testing::ValuesIn(kCases), [](const auto& p) {
  std::string name = p.param.key;
  for (char& ch : name) ch = std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
});

}  // namespace
}  // namespace trainsim
