// Canonical config writer, the inverse of model_json.cpp, training_json.cpp
// and system_json.cpp (same keys, same units, same enum spellings).
#include "schema/config_writer.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "trainsim/spec.h"
#include "trainsim/units.h"

namespace trainsim::schema {
namespace {

using nlohmann::json;

// SI -> human unit, rounded to 12 significant digits so that 80 GiB prints as
// 80 and not as 79.99999999999999.
double human(double si_value, double unit) {
  char text[64];
  std::snprintf(text, sizeof text, "%.12g", si_value / unit);
  return std::strtod(text, nullptr);
}

const char* const kCollectiveNames[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                                        "p2p"};

json bandwidth_table(const std::map<int64_t, double>& table) {
  json out = json::object();
  for (const auto& [group, bytes_per_s] : table) out[std::to_string(group)] = human(bytes_per_s, kGB);
  return out;
}

json link_to_json(const LinkSpec& link, bool tier) {
  json out = {{"bandwidth_gb_per_s", human(link.bandwidth_bytes_per_s, kGB)},
              {"latency_us", human(link.latency_s, kMicro)},
              {"efficiency", link.efficiency}};
  if (tier) out["max_group_size"] = link.max_group_size;
  json collectives = json::object();
  for (int i = 0; i < kNumCollectiveKinds; ++i) {
    const CollectiveSpec& c = link.collectives[static_cast<size_t>(i)];
    json entry = json::object();
    if (c.efficiency > 0.0) entry["efficiency"] = c.efficiency;
    if (c.latency_s >= 0.0) entry["latency_us"] = human(c.latency_s, kMicro);
    if (!entry.empty()) collectives[kCollectiveNames[i]] = entry;
  }
  if (!collectives.empty()) out["collectives"] = collectives;
  if (!link.dp_all_gather_bytes_per_s.empty()) {
    out["dp_all_gather_gb_per_s"] = bandwidth_table(link.dp_all_gather_bytes_per_s);
  }
  if (!link.dp_reduce_scatter_bytes_per_s.empty()) {
    out["dp_reduce_scatter_gb_per_s"] = bandwidth_table(link.dp_reduce_scatter_bytes_per_s);
  }
  return out;
}

json memory_kernel(const MemoryKernelSpec& k) {
  return {{"efficiency", k.efficiency}, {"latency_us", human(k.latency_s, kMicro)}};
}

json efficiency_to_json(const EfficiencySpec& e) {
  json out = {{"gemm", e.gemm},
              {"grouped_gemm", e.grouped_gemm},
              {"attention_forward", e.attention_forward},
              {"attention_backward", e.attention_backward},
              {"fp8_gemm", e.fp8_gemm},
              {"fp8_grouped_gemm", e.fp8_grouped_gemm},
              {"gemm_half_size", e.gemm_half_size},
              {"num_sms", e.num_sms},
              {"tile_m", e.tile_m},
              {"tile_n", e.tile_n},
              {"memory", memory_kernel(e.memory)},
              {"permute", memory_kernel(e.permute)},
              {"cross_entropy", memory_kernel(e.cross_entropy)},
              {"cross_entropy_fused", memory_kernel(e.cross_entropy_fused)}};
  json measured = json::object();
  const std::pair<const char*, const std::map<std::string, double>*> tables[] = {
      {"gemm", &e.measured_gemm},
      {"grouped_gemm", &e.measured_grouped_gemm},
      {"attention_forward", &e.measured_attention_forward},
      {"attention_backward", &e.measured_attention_backward}};
  for (const auto& [key, table] : tables) {
    if (!table->empty()) measured[key] = *table;
  }
  if (!measured.empty()) out["measured"] = measured;
  return out;
}

json recompute_to_json(const RecomputeSpec& r) {
  switch (r.granularity) {
    case RecomputeGranularity::kNone:
      return {{"granularity", "none"}};
    case RecomputeGranularity::kFull:
      return {{"granularity", "full"},
              {"method", r.method == RecomputeMethod::kUniform ? "uniform" : "block"},
              {"num_layers", r.num_layers}};
    case RecomputeGranularity::kSelective:
      break;
  }
  json modules = json::array();
  for (const RecomputeModule module : r.modules) modules.push_back(recompute_module_name(module));
  json out = {{"granularity", "selective"}, {"modules", modules}};
  if (r.num_layers > 0) out["num_layers"] = r.num_layers;
  if (r.keep_tail_outputs) out["keep_tail_outputs"] = true;
  return out;
}

}  // namespace

const char* recompute_module_name(RecomputeModule module) {
  // Order of RecomputeModule (and of training_json.cpp's names).
  static const char* const kNames[] = {"core_attn", "layernorm", "mla_up_proj", "mlp", "moe_act",
                                       "moe",       "shared_experts", "attn", "attn_norm",
                                       "attn_proj", "mlp_block", "mlp_norm", "mlp_linear"};
  return kNames[static_cast<size_t>(module)];
}

json model_to_json(const ModelSpec& m) {
  json out = {{"name", m.name},
              {"num_layers", m.num_layers},
              {"hidden_size", m.hidden_size},
              {"num_attention_heads", m.num_attention_heads},
              {"num_kv_heads", m.num_kv_heads},
              {"head_dim", m.head_dim},
              {"ffn_hidden_size", m.ffn_hidden_size},
              {"vocab_size", m.vocab_size},
              {"make_vocab_size_divisible_by", m.make_vocab_size_divisible_by},
              {"activation", m.activation == Activation::kSwiglu ? "swiglu" : "gelu"},
              {"norm", m.norm == Norm::kRmsNorm ? "rmsnorm" : "layernorm"},
              {"position_embedding", m.position_embedding == PositionEmbedding::kRope ? "rope" : "learned"},
              {"max_position_embeddings", m.max_position_embeddings},
              {"tie_embeddings", m.tie_embeddings},
              {"linear_bias", m.linear_bias},
              {"qk_layernorm", m.qk_layernorm},
              {"sliding_window_tokens", m.sliding_window_tokens},
              {"full_attention_every_n_layers", m.full_attention_every_n_layers},
              {"mtp_num_layers", m.mtp_num_layers}};
  if (m.mla) {
    out["mla"] = {{"q_lora_rank", m.mla->q_lora_rank},
                  {"kv_lora_rank", m.mla->kv_lora_rank},
                  {"qk_nope_head_dim", m.mla->qk_nope_head_dim},
                  {"qk_rope_head_dim", m.mla->qk_rope_head_dim},
                  {"v_head_dim", m.mla->v_head_dim}};
  }
  if (m.moe) {
    out["moe"] = {{"num_experts", m.moe->num_experts},
                  {"top_k", m.moe->top_k},
                  {"expert_ffn_hidden_size", m.moe->expert_ffn_hidden_size},
                  {"shared_expert_ffn_hidden_size", m.moe->shared_expert_ffn_hidden_size},
                  {"num_dense_layers", m.moe->num_dense_layers}};
  }
  return out;
}

json training_to_json(const TrainingSpec& t) {
  static const char* const kDtypes[] = {"bf16", "fp16", "fp8"};
  static const char* const kCpTypes[] = {"a2a", "p2p", "all_gather"};
  const ParallelSpec& p = t.parallel;
  json out = {{"seq_len", t.seq_len},
              {"micro_batch_size", t.micro_batch_size},
              {"global_batch_size", t.micro_batch_size * p.dp * t.num_micro_batches},
              {"dtype", kDtypes[static_cast<size_t>(t.dtype)]},
              {"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp}, {"cp", p.cp},
              {"ep", p.ep}, {"etp", p.etp}, {"vpp", p.vpp},
              {"sequence_parallel", p.sequence_parallel},
              {"account_for_embedding_in_pipeline_split", p.account_for_embedding_in_pipeline_split},
              {"account_for_loss_in_pipeline_split", p.account_for_loss_in_pipeline_split},
              {"cp_comm_type", kCpTypes[static_cast<size_t>(p.cp_comm_type)]},
              {"zero_stage", t.zero_stage},
              {"grad_reduce_in_bf16", t.grad_reduce_in_bf16},
              {"gradient_accumulation_fusion", t.gradient_accumulation_fusion},
              {"te_version", std::to_string(t.te_version_major) + "." + std::to_string(t.te_version_minor)},
              {"recompute", recompute_to_json(t.recompute)},
              {"flash_attention", t.kernels.flash_attention},
              {"fused_cross_entropy", t.kernels.fused_cross_entropy},
              {"fused_norm", t.kernels.fused_norm},
              {"fused_swiglu", t.kernels.fused_swiglu},
              {"overlap_grad_reduce", t.overlap.grad_reduce},
              {"overlap_param_gather", t.overlap.param_gather},
              {"tp_comm_overlap", t.overlap.tp_comm},
              {"moe_pad_to_capacity", t.moe.pad_to_capacity},
              {"moe_capacity_factor", t.moe.capacity_factor},
              {"moe_permute_probs_fused", t.moe.permute_probs_fused}};
  if (p.num_layers_in_first_stage) out["num_layers_in_first_stage"] = *p.num_layers_in_first_stage;
  if (p.num_layers_in_last_stage) out["num_layers_in_last_stage"] = *p.num_layers_in_last_stage;
  return out;
}

json system_to_json(const SystemSpec& s) {
  json out = {{"name", s.name},
              {"num_gpus", s.num_gpus},
              {"gpus_per_node", s.gpus_per_node},
              {"straggler_coefficient", s.straggler_coefficient},
              {"gpu",
               {{"name", s.gpu.name},
                {"hbm_capacity_gib", human(s.gpu.hbm_capacity_bytes, kGiB)},
                {"hbm_bandwidth_gb_per_s", human(s.gpu.hbm_bandwidth_bytes_per_s, kGB)},
                {"peak_tflops",
                 {{"bf16", human(s.gpu.peak_bf16_flops_per_s, kTera)},
                  {"fp16", human(s.gpu.peak_fp16_flops_per_s, kTera)},
                  {"fp8", human(s.gpu.peak_fp8_flops_per_s, kTera)}}}}},
              {"intra_node", link_to_json(s.intra_node, false)},
              {"inter_node", link_to_json(s.inter_node, false)},
              {"efficiency", efficiency_to_json(s.efficiency)}};
  if (!s.intra_node_tiers.empty()) {
    json tiers = json::array();
    for (const LinkSpec& tier : s.intra_node_tiers) tiers.push_back(link_to_json(tier, true));
    out["intra_node_tiers"] = tiers;
  }
  return out;
}

json config_to_json(const Config& c) {
  return {{"schema_version", kSchemaVersion},
          {"model", model_to_json(c.model)},
          {"training", training_to_json(c.training)},
          {"system", system_to_json(c.system)}};
}

}  // namespace trainsim::schema
