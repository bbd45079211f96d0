// SimuMax v1.2 config files -> trainsim config. Field meanings and defaults:
// simumax/core/config.py (ModelConfig, StrategyConfig, SystemConfig) at
// MooreThreads/SimuMax@4dcaae5. Settings trainsim cannot express are errors;
// settings it models differently are reported as notes.
#include "interop/simumax/simumax_import.h"

#include <optional>
#include <string>
#include <vector>

#include "schema/json_reader.h"
#include "interop/simumax/simumax_system_import.h"

namespace trainsim::interop {

using schema::ObjectReader;
using schema::describe_json_value;
namespace {

using nlohmann::json;

bool parse_object(std::string_view text, const std::string& path, json& out, Issues& issues) {
  if (!schema::parse_document(text, path, out, issues)) return false;
  if (!out.is_object()) {
    issues.push_back({path, "expected object, got " + describe_json_value(out)});
    return false;
  }
  return true;
}

// An optional integer SimuMax may write as null (Python None): null is absent,
// any other non-integer an issue.
std::optional<int64_t> nullable_int(ObjectReader& r, const char* key, int64_t min_value,
                                    int64_t max_value) {
  const json* value = r.raw(key);
  if (value == nullptr || value->is_null()) return std::nullopt;
  return r.optional_int(key, min_value, max_value);
}

json convert_model(const json& in, json& training, Issues& issues) {
  const std::string path = "/simumax_model";
  ObjectReader r(in, path, issues);
  json model;
  if (const auto name = r.optional_string("model_name")) model["name"] = *name;
  r.optional_enum("model_type", {"dense", "moe"});
  model["hidden_size"] = r.required_int("hidden_size", 1, int64_t{1} << 24);
  model["num_attention_heads"] = r.required_int("head_num", 1, 1 << 16);
  model["num_kv_heads"] = r.required_int("kv_head_num", 1, 1 << 16);
  if (const auto head = r.optional_int("head_size", 1, 1 << 20)) model["head_dim"] = *head;
  const int64_t ffn = r.required_int("intermediate_size", 1, int64_t{1} << 24);
  model["ffn_hidden_size"] = ffn;
  model["num_layers"] = r.required_int("layer_num", 1, 100000);
  model["vocab_size"] = r.required_int("vocab_size", 1, int64_t{1} << 26);
  r.optional_int("orig_vocab_size", 1, int64_t{1} << 26);
  model["activation"] = r.bool_or("use_swiglu", false) ? "swiglu" : "gelu";
  model["make_vocab_size_divisible_by"] = r.int_or("make_vocab_size_divisible_by", 128, 1, 1 << 20);
  if (!r.bool_or("padded_vocab_size", true)) {
    issues.push_back({r.path_of("padded_vocab_size"),
                      "false is not supported (trainsim always applies Megatron's vocab padding)"});
  }
  // SimuMax models RMSNorm, RoPE, no biases and untied embeddings.
  model["norm"] = "rmsnorm";
  model["position_embedding"] = "rope";
  model["tie_embeddings"] = false;
  const size_t attention = r.enum_or("attention_type", {"mha", "mla"}, 0);
  const auto q_lora = nullable_int(r, "q_lora_rank", 0, 1 << 20);
  const auto kv_lora = r.optional_int("kv_lora_rank", 1, 1 << 20);
  const auto qk = r.optional_int("qk_head_dim", 1, 1 << 20);
  const auto rope = r.optional_int("qk_pos_emb_head_dim", 1, 1 << 20);
  const auto v = r.optional_int("v_head_dim", 1, 1 << 20);
  if (attention == 1) {
    json mla;
    if (q_lora) mla["q_lora_rank"] = *q_lora;
    if (!kv_lora || !qk || !rope || !v) {
      issues.push_back({path, "attention_type \"mla\" needs kv_lora_rank, qk_head_dim, "
                              "qk_pos_emb_head_dim and v_head_dim"});
    } else {
      mla["kv_lora_rank"] = *kv_lora;
      mla["qk_nope_head_dim"] = *qk;
      mla["qk_rope_head_dim"] = *rope;
      mla["v_head_dim"] = *v;
      model["mla"] = mla;
    }
  }
  const int64_t experts = r.int_or("expert_num", 1, 1, 1 << 16);
  const auto top_k = r.optional_int("topk", 1, 1 << 16);
  const auto expert_ffn = r.optional_int("moe_ffn_hidden_size", 1, int64_t{1} << 24);
  const auto shared = nullable_int(r, "moe_shared_expert_intermediate_size", 0, int64_t{1} << 24);
  const int64_t dense_layers = r.int_or("dense_layers", 0, 0, 100000);
  const bool pad = r.bool_or("moe_pad_expert_input_to_capacity", true);
  const double capacity = r.number_or("capacity", 1.0, 0.0, 1e6, true);
  if (const auto mode = r.optional_enum("group_linear_mode", {"parallel", "serial"}); mode && *mode == 1) {
    issues.push_back({r.path_of("group_linear_mode"), "\"serial\" is not supported"});
  }
  if (experts > 1) {
    json moe = {{"num_experts", experts},
                {"top_k", top_k.value_or(1)},
                {"expert_ffn_hidden_size", expert_ffn.value_or(ffn)},
                {"num_dense_layers", dense_layers}};
    if (shared) moe["shared_expert_ffn_hidden_size"] = *shared;
    model["moe"] = moe;
    training["moe_pad_to_capacity"] = pad;
    if (pad) training["moe_capacity_factor"] = capacity;
  }
  r.finish();
  return model;
}

json convert_recompute(ObjectReader& r, std::vector<std::string>& notes) {
  const bool enabled = r.bool_or("enable_recompute", true);
  const auto granularity = r.optional_enum(
      "recompute_granularity", {"full_block", "attn_only", "mlp_only", "sdp_only",
                                "selective_recompute"});
  const int64_t layers = r.int_or("recompute_layer_num", 0, 0, 100000);
  const bool variance = r.bool_or("recompute_variance", false);
  const bool megatron = r.bool_or("megatron_recompute", false);
  const json* modules = r.raw("megatron_recompute_modules");
  if (modules != nullptr && !modules->is_null() && !modules->is_array()) {
    r.issues().push_back({r.path_of("megatron_recompute_modules"),
                          "expected an array of module names, got " + describe_json_value(*modules)});
  }
  const bool attn = r.bool_or("attn_recompute", false);
  const bool mla_rms = r.bool_or("mla_rms_recompute", false);
  const bool mlp = r.bool_or("mlp_recompute", false);
  const bool mlp_rms = r.bool_or("mlp_rms_recompute", false);
  if (!enabled || !granularity || layers == 0) return {{"granularity", "none"}};
  if (*granularity == 0) {
    if (variance) notes.push_back("recompute_variance is ignored with full_block (as SimuMax does)");
    return {{"granularity", "full"}, {"method", "block"}, {"num_layers", layers}};
  }
  json names = json::array();
  if (*granularity == 1) names.push_back("attn");
  if (*granularity == 2) names.push_back("mlp_block");
  if (*granularity == 3) names.push_back("core_attn");
  if (*granularity == 4) {
    if (megatron && modules != nullptr && modules->is_array() && !modules->empty()) {
      for (const auto& module : *modules) names.push_back(module);
    } else {
      if (mla_rms) names.push_back("attn_norm");
      if (attn) names.push_back("attn_proj");
      if (mlp_rms) names.push_back("mlp_norm");
      if (mlp) names.push_back("mlp_linear");
    }
  }
  if (names.empty()) return {{"granularity", "none"}};
  json out = {{"granularity", "selective"}, {"modules", names}, {"num_layers", layers}};
  if (variance) out["keep_tail_outputs"] = true;
  return out;
}

void reject_if(ObjectReader& r, const char* key, bool bad, const char* message) {
  if (bad) r.issues().push_back({r.path_of(key), message});
}

json convert_strategy(const json& in, json& training, json& system_overrides,
                      std::vector<std::string>& notes, Issues& issues) {
  ObjectReader r(in, "/simumax_strategy", issues);
  training["seq_len"] = r.required_int("seq_len", 1, int64_t{1} << 26);
  training["micro_batch_size"] = r.required_int("micro_batch_size", 1, int64_t{1} << 30);
  training["num_micro_batches"] = r.required_int("micro_batch_num", 1, int64_t{1} << 30);
  const size_t dtype = r.enum_or("dtype", {"bf16", "fp16"}, 0);
  training["dtype"] = r.bool_or("fp8", false) ? "fp8" : (dtype == 0 ? "bf16" : "fp16");
  // SimuMax stores fp8 weights at one byte (simumax/core/transformer/
  // dense_module.py, w_element_size = 1), i.e. Megatron's --fp8-param-gather.
  if (r.bool_or("fp8", false)) training["fp8_param_gather"] = true;
  system_overrides["num_gpus"] = r.int_or("world_size", 8, 1, int64_t{1} << 24);
  const int64_t tp = r.int_or("tp_size", 1, 1, 1 << 20);
  training["tp"] = tp;
  training["cp"] = r.int_or("cp_size", 1, 1, 1 << 20);
  training["pp"] = r.int_or("pp_size", 1, 1, 100000);
  training["ep"] = r.int_or("ep_size", 1, 1, 1 << 16);
  training["etp"] = r.int_or("etp_size", 1, 1, 1 << 20);
  training["sequence_parallel"] = r.bool_or("enable_sequence_parallel", true) && tp > 1;
  training["vpp"] = r.int_or("interleaving_size", 1, 1, 100000);
  for (const char* key : {"num_layers_in_first_pipeline_stage", "num_layers_in_last_pipeline_stage"}) {
    if (const auto value = nullable_int(r, key, 0, 100000)) {
      training[std::string(key) == "num_layers_in_first_pipeline_stage" ? "num_layers_in_first_stage"
                                                                      : "num_layers_in_last_stage"] =
          *value;
    }
  }
  training["account_for_embedding_in_pipeline_split"] =
      r.bool_or("account_for_embedding_in_pipeline_split", false);
  training["account_for_loss_in_pipeline_split"] =
      r.bool_or("account_for_loss_in_pipeline_split", false);
  const size_t cp_type = r.enum_or("cp_comm_type", {"a2a", "all_gather"}, 0);
  training["cp_comm_type"] = cp_type == 0 ? "a2a" : "all_gather";
  if (r.enum_or("cp_a2a_mode", {"async_cp", "sync_cp"}, 0) == 1) {
    notes.push_back("cp_a2a_mode \"sync_cp\" is modelled like \"async_cp\"");
  }
  r.enum_or("order_of_paralielism", {"tp-cp-ep-dp-pp"}, 0);
  if (r.enum_or("moe_dispatcher_policy", {"all2all", "all2all-seq"}, 0) == 1) {
    notes.push_back("moe_dispatcher_policy \"all2all-seq\" is modelled as \"all2all\"");
  }
  if (const json* group = r.raw("microbatch_group_size_per_vp_stage");
      group != nullptr && !group->is_null()) {
    issues.push_back({r.path_of("microbatch_group_size_per_vp_stage"),
                      "only the default (pp) is supported"});
  }
  // SimuMax's pp_comm_async is Megatron-LM's overlap_p2p_comm (simumax/core/config.py;
  // its async interleaved replay in transformer/pipeline_schedule.py).
  training["overlap_p2p_comm"] = r.bool_or("pp_comm_async", true);
  training["zero_stage"] = r.int_or("zero_state", 1, 0, 3);
  const bool bf16_grads = r.bool_or("grad_reduce_in_bf16", false);
  const bool fp32_grads = r.bool_or("use_fp32_accum_grad", true);
  training["grad_reduce_in_bf16"] = bf16_grads || !fp32_grads;
  training["gradient_accumulation_fusion"] = r.bool_or("use_fused_grad_accumulation", true);
  const bool flash = r.bool_or("use_flash_sdp", true);
  r.bool_or("use_math_sdp", false);
  training["flash_attention"] = flash;
  training["fused_norm"] = r.bool_or("use_fused_norm", true);
  training["fused_swiglu"] = r.bool_or("use_fused_swiglu", true);
  training["fused_cross_entropy"] = r.bool_or("cross_entropy_loss_fusion", false);
  training["moe_permute_probs_fused"] = r.bool_or("dispatch_probs", false);
  // SimuMax without te_version models TE before 2.3 (no dummy wgrad buffers).
  training["te_version"] = r.optional_string("te_version").value_or("2.1");
  r.optional_string("te_dummy_wgrad_min_version");
  r.optional_string("te_grouped_linear_dummy_wgrad_min_version");
  training["recompute"] = convert_recompute(r, notes);
  reject_if(r, "enable_dropout", r.bool_or("enable_dropout", false), "true is not supported");
  reject_if(r, "use_accm_weight", !r.bool_or("use_accm_weight", true), "false is not supported");
  reject_if(r, "cache_groupgemm_col_fp8_inputs", r.bool_or("cache_groupgemm_col_fp8_inputs", false),
            "true is not supported");
  reject_if(r, "offload_groupgemm_col_inputs", r.bool_or("offload_groupgemm_col_inputs", false),
            "true is not supported");
  const double sparse = r.number_or("attention_sparse_ratio", 0.0, 0.0, 1.0, false);
  reject_if(r, "attention_sparse_ratio", sparse != 0.0, "only 0 is supported");
  r.bool_or("overlap_grad_reduce", true);  // unused by SimuMax's time model
  if (!r.bool_or("enable_straggler_model", true)) system_overrides["straggler_coefficient"] = 0.0;
  if (const auto factor = r.optional_number("mem_factor", 0.0, 1.0, true); factor && *factor != 0.94) {
    notes.push_back("mem_factor is ignored: trainsim estimates reserved memory itself");
  }
  for (const char* net : {"tp_net", "cp_net", "pp_net", "dp_net", "ep_net", "etp_net", "edp_net"}) {
    r.optional_string(net);  // SimuMax re-selects every network group itself
  }
  r.finish();
  return training;
}

}  // namespace

nlohmann::json import_simumax(std::string_view model_text, std::string_view strategy_text,
                              std::string_view system_text, Issues& issues) {
  json model_in, strategy_in;
  const bool model_ok = parse_object(model_text, "/simumax_model", model_in, issues);
  const bool strategy_ok = parse_object(strategy_text, "/simumax_strategy", strategy_in, issues);
  json training = json::object();
  json system_overrides = json::object();
  std::vector<std::string> notes;
  json model = model_ok ? convert_model(model_in, training, issues) : json();
  if (strategy_ok) convert_strategy(strategy_in, training, system_overrides, notes, issues);
  json system;
  if (system_text.empty()) {
    system = {{"preset", "a100-pcie-80gb"}};
    notes.push_back("no SimuMax system file given: using the a100-pcie-80gb preset");
  } else {
    json system_in;
    if (parse_object(system_text, "/simumax_system", system_in, issues)) {
      system = convert_simumax_system(system_in, issues, notes);
    }
  }
  if (!issues.empty()) return nullptr;
  if (system.contains("preset")) {
    system.update(system_overrides);
  } else {
    for (const auto& [key, value] : system_overrides.items()) system[key] = value;
  }
  return {{"config", {{"model", model}, {"training", training}, {"system", system}}},
          {"notes", notes}};
}

}  // namespace trainsim::interop
