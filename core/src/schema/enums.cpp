#include "schema/enums.h"

namespace trainsim::schema {

std::optional<size_t> EnumNames::find(std::string_view name) const {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return i;
  }
  return std::nullopt;
}

std::string EnumNames::quoted() const {
  std::string list;
  for (const auto& name : names) list += (list.empty() ? "\"" : ", \"") + name + "\"";
  return list;
}

const EnumNames& activation_names() {
  static const EnumNames names{"activation", {"swiglu", "gelu", "squared_relu", "geglu"}, {}};
  return names;
}

const EnumNames& norm_names() {
  static const EnumNames names{"norm", {"rmsnorm", "layernorm"}, {}};
  return names;
}

const EnumNames& position_embedding_names() {
  static const EnumNames names{"position_embedding", {"rope", "learned"}, {}};
  return names;
}

const EnumNames& dtype_names() {
  static const EnumNames names{"dtype", {"bf16", "fp16", "fp8", "fp4"}, {}};
  return names;
}

const EnumNames& recompute_granularity_names() {
  static const EnumNames names{"recompute_granularity", {"none", "full", "selective"}, {}};
  return names;
}

const EnumNames& recompute_method_names() {
  static const EnumNames names{"recompute_method", {"uniform", "block"}, {}};
  return names;
}

// Megatron-LM 0.14 --recompute-modules, then SimuMax's selective sets.
const EnumNames& recompute_module_names() {
  static const EnumNames names{
      "recompute_module",
      {"core_attn", "layernorm", "mla_up_proj", "mlp", "moe_act", "moe", "shared_experts", "attn",
       "attn_norm", "attn_proj", "mlp_block", "mlp_norm", "mlp_linear"},
      {}};
  return names;
}

const EnumNames& cp_comm_type_names() {
  static const EnumNames names{"cp_comm_type", {"a2a", "p2p", "all_gather"}, {}};
  return names;
}

// PipelineSchedule; the spellings of time/schedule_orders.h.
const EnumNames& pipeline_schedule_names() {
  static const EnumNames names{
      "pipeline_schedule",
      {"1f1b", "zero_bubble_h1", "zero_bubble_h2", "zero_bubble_v", "dualpipe", "dualpipe_v"},
      {"1F1B (interleaved when vpp > 1)", "Zero bubble H1", "Zero bubble H2", "Zero bubble V",
       "DualPipe", "DualPipeV"}};
  return names;
}

const EnumNames& moe_dispatcher_names() {
  static const EnumNames names{"moe_token_dispatcher", {"alltoall", "flex"}, {}};
  return names;
}

const EnumNames& moe_load_balancing_names() {
  static const EnumNames names{
      "moe_router_load_balancing_type", {"aux_loss", "seq_aux_loss", "global_aux_loss", "none"}, {}};
  return names;
}

const EnumNames& collective_names() {
  static const EnumNames names{
      "collective", {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "p2p"}, {}};
  return names;
}

const EnumNames& search_objective_names() {
  static const EnumNames names{
      "search_objective", {"step_time", "tokens_per_s_per_gpu", "time_to_train", "gpu_hours"}, {}};
  return names;
}

const EnumNames& search_diversity_names() {
  static const EnumNames names{"search_diversity", {"none", "per_layout"}, {}};
  return names;
}

const EnumNames& whatif_figure_names() {
  static const EnumNames names{
      "whatif_figure",
      {"peak_flops", "hbm_bandwidth", "hbm_capacity", "intra_node_bandwidth",
       "inter_node_bandwidth", "intra_node_latency", "inter_node_latency", "kernel_latency"},
      {"Peak FLOP/s", "HBM bandwidth", "HBM capacity", "Intra-node bandwidth",
       "Inter-node bandwidth", "Intra-node latency", "Inter-node latency", "Kernel latency"}};
  return names;
}

// Megatron-LM --fp8-recipe (megatron/core/enums.py Fp8Recipe, "custom" excluded).
const EnumNames& fp8_recipe_names() {
  static const EnumNames names{"fp8_recipe", {"delayed", "tensorwise", "blockwise", "mxfp8"}, {}};
  return names;
}

// Megatron-LM --cuda-graph-impl and --cuda-graph-modules.
const EnumNames& cuda_graph_impl_names() {
  static const EnumNames names{
      "cuda_graph_impl", {"none", "local", "transformer_engine", "full_iteration"}, {}};
  return names;
}

const EnumNames& cuda_graph_module_names() {
  static const EnumNames names{
      "cuda_graph_module", {"attn", "mlp", "moe", "moe_router", "moe_preprocess"}, {}};
  return names;
}

const EnumNames& provenance_kind_names() {
  static const EnumNames names{
      "provenance_kind",
      {"datasheet", "measured", "microbenchmark", "fitted", "assumed", "config"},
      {}};
  return names;
}

std::vector<const EnumNames*> all_enum_names() {
  return {&activation_names(),          &norm_names(),
          &position_embedding_names(),  &dtype_names(),
          &recompute_granularity_names(), &recompute_method_names(),
          &recompute_module_names(),    &cp_comm_type_names(),
          &pipeline_schedule_names(),   &moe_dispatcher_names(),
          &moe_load_balancing_names(),
          &collective_names(),          &search_objective_names(), &search_diversity_names(),
          &whatif_figure_names(),       &fp8_recipe_names(),
          &cuda_graph_impl_names(),     &cuda_graph_module_names(),
          &provenance_kind_names()};
}

}  // namespace trainsim::schema
