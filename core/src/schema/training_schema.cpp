// The "training" section: its rows, their bounds (input_limits.h) and help.
// dp and the batch are kept as given (TrainingInput); config_reader.cpp
// derives the sizes once the system's GPU count is known.
#include <algorithm>
#include <cstdio>
#include <string>

#include "input_limits.h"
#include "model/pipeline_layout.h"
#include "schema/config_schema.h"
#include "validate.h"

namespace trainsim::schema {
namespace {

using F = Fields<TrainingInput>;
constexpr Presence kRequired = Presence::kRequired;
constexpr Presence kDefault = Presence::kDefault;
constexpr Presence kDerived = Presence::kDerived;
constexpr Presence kOptional = Presence::kOptional;

// A row whose value the writer takes from elsewhere (or never writes).
Field<TrainingInput> with_write(Field<TrainingInput> field,
                                std::function<void(const TrainingInput&, nlohmann::json&)> write) {
  field.write = std::move(write);
  return field;
}

// "MAJOR.MINOR" or "MAJOR.MINOR.PATCH", digits only (major <= 99, minor <= 999);
// sscanf would read "2.11rc1" as 2.11 and " +2.11" as well.
bool parse_release_version(const std::string& text, int& major, int& minor) {
  int parts[3] = {0, 0, 0};
  int count = 0;
  size_t digits = 0;
  for (const char c : text) {
    if (c >= '0' && c <= '9') {
      if (++digits > 4) return false;
      parts[count] = parts[count] * 10 + (c - '0');
    } else if (c == '.' && digits > 0 && count < 2) {
      ++count;
      digits = 0;
    } else {
      return false;
    }
  }
  if (digits == 0 || count < 1 || parts[0] > 99 || parts[1] > 999) return false;
  major = parts[0];
  minor = parts[1];
  return true;
}

Field<TrainingInput> te_version_row() {
  FieldInfo info = F::info("te_version", Type::kString, kDefault,
                           {"", "TE version", "installed Transformer Engine (\"2.11\" or \"2.11.0\"); TE >= 2.3 keeps dummy wgrad buffers"});
  const TrainingSpec defaults;
  info.default_value = std::to_string(defaults.te_version_major) + "." + std::to_string(defaults.te_version_minor);
  auto read = [](ObjectReader& r, TrainingInput& t, const ReadContext&) {
    const auto text = r.optional_string("te_version");
    if (!text) return;
    int major = 0, minor = 0;
    if (!parse_release_version(*text, major, minor)) {
      r.issues().push_back({r.path_of("te_version"),
                            "expected a release version such as \"2.11\" or \"2.11.0\" (digits "
                            "only: a pre-release such as \"2.11rc1\" is not a release), got \"" +
                                excerpt(*text) + "\""});
      return;
    }
    t.spec.te_version_major = major;
    t.spec.te_version_minor = minor;
  };
  auto write = [](const TrainingInput& t, nlohmann::json& out) {
    out["te_version"] = std::to_string(t.spec.te_version_major) + "." + std::to_string(t.spec.te_version_minor);
  };
  return F::custom(info, read, write);
}

Field<TrainingInput> recompute_row() {
  FieldInfo info = F::info("recompute", Type::kObject, kDefault,
                           {"", "Recompute", "activation recomputation; keys by granularity (README \"Config reference\")"});
  auto read = [](ObjectReader& r, TrainingInput& t, const ReadContext&) {
    if (const nlohmann::json* value = r.raw("recompute")) {
      read_recompute(*value, r.path_of("recompute"), t.spec.recompute, r.issues());
    }
  };
  auto write = [](const TrainingInput& t, nlohmann::json& out) {
    out["recompute"] = recompute_to_json(t.spec.recompute);
  };
  return F::custom(info, read, write, recompute_members());
}

// Megatron-LM --pipeline-model-parallel-layout; without vpp, vpp follows the
// layout's stage count as in Megatron's arguments.py (stages / pp).
Field<TrainingInput> pipeline_layout_row() {
  FieldInfo info = F::info(
      "pipeline_layout", Type::kString, kOptional,
      {"", "Pipeline layout",
       "Megatron-LM --pipeline-model-parallel-layout: virtual stages split by '|' (stage k on pp "
       "rank k % pp), E embedding, t decoder layer, m MTP layer, L loss, (...)*n and x*n repeat, "
       "e.g. \"Et|(tt|)*30mL\"; without vpp, vpp = stages / pp"});
  auto read = [](ObjectReader& r, TrainingInput& t, const ReadContext&) {
    const auto text = r.optional_string("pipeline_layout");
    if (!text) return;
    std::string error;
    auto stages = parse_pipeline_layout(*text, &error);
    if (!stages) {
      r.issues().push_back({r.path_of("pipeline_layout"), error});
      return;
    }
    ParallelSpec& p = t.spec.parallel;
    const auto count = static_cast<int64_t>(stages->size());
    if (!r.has("vpp") && count % p.pp == 0 && count / p.pp > 1 &&
        p.schedule != PipelineSchedule::kDualPipe) {
      p.vpp = count / p.pp;
    }
    p.layout = std::move(*stages);
  };
  auto write = [](const TrainingInput& t, nlohmann::json& out) {
    if (!t.spec.parallel.layout.empty()) {
      out["pipeline_layout"] = format_pipeline_layout(t.spec.parallel.layout);
    }
  };
  return F::custom(info, read, write);
}

// training.cuda_graph: {"impl": ..., "modules": [...]} (Megatron-LM
// --cuda-graph-impl, --cuda-graph-modules / --cuda-graph-scope).
Field<TrainingInput> cuda_graph_row() {
  FieldInfo info = F::info("cuda_graph", Type::kObject, kDefault,
                           {"", "CUDA graphs", "captured parts skip the host launch cost (Megatron-LM --cuda-graph-impl, --cuda-graph-modules)"});
  FieldInfo impl = F::info("impl", Type::kEnum, kDefault,
                           {"", "CUDA graph impl", "none | local (--enable-cuda-graph) | transformer_engine (--external-cuda-graph) | full_iteration"});
  impl.enumeration = &cuda_graph_impl_names();
  impl.default_value = "none";
  FieldInfo modules = F::info("modules", Type::kArray, kDefault,
                              {"", "CUDA graph modules", "captured modules; empty = each whole layer (full_iteration: the whole step)"});
  modules.items = Type::kEnum;
  modules.enumeration = &cuda_graph_module_names();
  modules.default_value = nlohmann::json::array();
  auto read = [](ObjectReader& r, TrainingInput& t, const ReadContext&) {
    const nlohmann::json* value = r.raw("cuda_graph");
    if (value == nullptr) return;
    ObjectReader g(*value, r.path_of("cuda_graph"), r.issues());
    if (!g.ok()) return;
    CudaGraphSpec& spec = t.spec.cuda_graph;
    spec.impl = static_cast<CudaGraphImpl>(g.enum_or("impl", cuda_graph_impl_names().names, 0));
    if (const nlohmann::json* list = g.raw("modules")) {
      if (!list->is_array()) {
        r.issues().push_back({g.path_of("modules"), "expected array, got " + describe_json_value(*list)});
      } else {
        for (size_t i = 0; i < list->size(); ++i) {
          const auto& item = (*list)[i];
          const auto index = item.is_string() ? cuda_graph_module_names().find(item.get<std::string>())
                                              : std::nullopt;
          const std::string item_path = g.path_of("modules") + "/" + std::to_string(i);
          if (!index) {
            r.issues().push_back({item_path, "expected one of " + cuda_graph_module_names().quoted() +
                                                 ", got " + describe_json_value(item)});
            continue;
          }
          const auto module = static_cast<CudaGraphModule>(*index);
          if (std::find(spec.modules.begin(), spec.modules.end(), module) != spec.modules.end()) {
            r.issues().push_back({item_path, "duplicate module \"" + item.get<std::string>() + "\""});
            continue;
          }
          spec.modules.push_back(module);
        }
      }
    }
    g.finish();
  };
  auto write = [](const TrainingInput& t, nlohmann::json& out) {
    nlohmann::json list = nlohmann::json::array();
    for (const CudaGraphModule m : t.spec.cuda_graph.modules) list.push_back(cuda_graph_module_names().of(m));
    out["cuda_graph"] = {{"impl", cuda_graph_impl_names().of(t.spec.cuda_graph.impl)}, {"modules", list}};
  };
  return F::custom(info, read, write, {impl, modules});
}

void batch_rules(ObjectReader& r, TrainingInput& t, const ReadContext&) {
  t.batch_path = r.path_of("global_batch_size");
  if (r.has("global_batch_size") && r.has("num_micro_batches")) {
    r.issues().push_back({r.path_of("num_micro_batches"),
                          "set either global_batch_size or num_micro_batches, not both"});
  } else if (!r.has("global_batch_size") && !r.has("num_micro_batches")) {
    r.issues().push_back({r.path_of("global_batch_size"), "missing required key (or set num_micro_batches)"});
  }
}

}  // namespace

const Table<TrainingInput>& training_table() {
  static const Table<TrainingInput> table = {
      F::integer("seq_len", TRAINSIM_AT(spec.seq_len), kRequired, 1, kMaxSeqLen,
                 {"tokens", "Sequence length", "tokens per sequence (Megatron-LM --seq-length)"}),
      F::integer("micro_batch_size", TRAINSIM_AT(spec.micro_batch_size), kRequired, 1, kMaxBatch,
                 {"sequences", "Micro-batch size", "sequences per micro-batch (--micro-batch-size)"}),
      F::rule([](ObjectReader& r, TrainingInput& t, const ReadContext&) {
        if (auto issue = check_tokens_per_micro_batch(t.spec.seq_len, t.spec.micro_batch_size,
                                                      r.path_of("micro_batch_size"))) {
          r.issues().push_back(std::move(*issue));
        }
      }),
      with_write(F::integer("global_batch_size", TRAINSIM_AT(global_batch_size), kOptional, 1, kMaxBatch,
                            {"sequences", "Global batch size", "sequences per step (--global-batch-size); exactly one of global_batch_size and num_micro_batches"}),
                 [](const TrainingInput& t, nlohmann::json& out) {
                   out["global_batch_size"] = t.spec.micro_batch_size * t.spec.parallel.dp * t.spec.num_micro_batches;
                 }),
      with_write(F::integer("num_micro_batches", TRAINSIM_AT(num_micro_batches), kOptional, 1, kMaxBatch,
                            {"", "Micro-batches", "micro-batches per pipeline per step, instead of global_batch_size"}),
                 nullptr),
      F::rule(batch_rules),
      F::number("train_tokens", TRAINSIM_AT(spec.train_tokens), kOptional, 0.0, 1e18, true, 1.0,
                {"tokens", "Tokens to train", "tokens of the whole run, for the time and GPU-hours to train"}),
      F::choice("dtype", TRAINSIM_AT(spec.dtype), dtype_names(), {"", "Precision", "training precision (--bf16, --fp16, --fp8-format, --fp4-format e2m1 with --fp4-recipe nvfp4)"}),
      F::choice("fp8_recipe", TRAINSIM_AT(spec.fp8_recipe), fp8_recipe_names(),
                {"", "FP8 recipe", "dtype fp8 only: Transformer Engine scaling recipe (Megatron-LM --fp8-recipe); mxfp8 needs Blackwell-class GPUs"}),
      F::boolean("fp8_param_gather", TRAINSIM_AT(spec.fp8_param_gather),
                 {"", "FP8 parameters", "Megatron-LM --fp8-param-gather (--fp4-param-gather): weights stored and all-gathered in fp8; without it TE keeps bf16 weights plus cached fp8 copies"}),
      F::integer("tp", TRAINSIM_AT(spec.parallel.tp), kDefault, 1, kMaxGpus,
                 {"", "TP", "tensor parallel size (--tensor-model-parallel-size)"}),
      F::integer("pp", TRAINSIM_AT(spec.parallel.pp), kDefault, 1, kMaxLayers,
                 {"", "PP", "pipeline parallel size (--pipeline-model-parallel-size)"}),
      with_write(F::integer("dp", TRAINSIM_AT(dp), kDerived, 1, kMaxGpus,
                            {"", "DP", "data parallel size; default num_gpus / (tp*pp*cp)"}),
                 [](const TrainingInput& t, nlohmann::json& out) { out["dp"] = t.spec.parallel.dp; }),
      F::integer("cp", TRAINSIM_AT(spec.parallel.cp), kDefault, 1, kMaxGpus,
                 {"", "CP", "context parallel size (--context-parallel-size)"}),
      F::integer("ep", TRAINSIM_AT(spec.parallel.ep), kDefault, 1, kMaxExperts,
                 {"", "EP", "expert parallel size (--expert-model-parallel-size)"}),
      F::integer("etp", TRAINSIM_AT(spec.parallel.etp), kDefault, 1, kMaxGpus,
                 {"", "ETP", "expert tensor parallel size (--expert-tensor-parallel-size)"}),
      F::integer("vpp", TRAINSIM_AT(spec.parallel.vpp), kDefault, 1, kMaxLayers,
                 {"", "VPP", "virtual pipeline chunks per stage (--num-virtual-stages-per-pipeline-rank)"}),
      F::rule([](ObjectReader& r, TrainingInput& t, const ReadContext&) {
        const std::string path = r.path_of("tp");
        if (auto issue = check_world_size(t.spec.parallel, t.dp, path.substr(0, path.size() - 3))) {
          r.issues().push_back(std::move(*issue));
        }
      }),
      F::boolean("sequence_parallel", TRAINSIM_AT(spec.parallel.sequence_parallel),
                 {"", "Sequence parallel", "Megatron-LM --sequence-parallel"}),
      F::boolean("scatter_gather_tensors_in_pipeline", TRAINSIM_AT(spec.parallel.scatter_gather_tensors_in_pipeline),
                 {"", "Split pipeline sends",
                  "Megatron-LM 2021-2022 (before Megatron-Core, Narayanan et al. 2021 section 4.1): "
                  "without sequence_parallel each tensor-parallel rank sends 1/tp of the stage-boundary "
                  "activation and the receiver all-gathers it over the TP group; Megatron-Core sends the "
                  "whole tensor from every rank (false)"}),
      F::integer("num_layers_in_first_stage", TRAINSIM_AT(spec.parallel.num_layers_in_first_stage), kOptional, 0,
                 kMaxLayers, {"layers", "First-stage layers", "layers of the first pipeline stage (--decoder-first-pipeline-num-layers)"}),
      F::integer("num_layers_in_last_stage", TRAINSIM_AT(spec.parallel.num_layers_in_last_stage), kOptional, 0,
                 kMaxLayers, {"layers", "Last-stage layers", "layers of the last pipeline stage (--decoder-last-pipeline-num-layers)"}),
      F::boolean("account_for_embedding_in_pipeline_split",
                 TRAINSIM_AT(spec.parallel.account_for_embedding_in_pipeline_split),
                 {"", "Embedding counts as a layer", "Megatron-LM --account-for-embedding-in-pipeline-split"}),
      F::boolean("account_for_loss_in_pipeline_split", TRAINSIM_AT(spec.parallel.account_for_loss_in_pipeline_split),
                 {"", "Loss counts as a layer", "Megatron-LM --account-for-loss-in-pipeline-split"}),
      F::choice("pipeline_schedule", TRAINSIM_AT(spec.parallel.schedule), pipeline_schedule_names(),
                {"", "Pipeline schedule",
                 "1f1b: Megatron-LM 1F1B, interleaved when vpp > 1; zero_bubble_h1/h2/v: Qi et al. "
                 "(ICLR 2024), backward split into input-gradient B and weight-gradient W; dualpipe: "
                 "DeepSeek-V3 (two stages per rank, parameters doubled, forward and backward overlapped); "
                 "dualpipe_v: its V-shaped variant (vpp 2)"}),
      pipeline_layout_row(),
      F::choice("cp_comm_type", TRAINSIM_AT(spec.parallel.cp_comm_type), cp_comm_type_names(),
                {"", "CP comm", "context-parallel exchange (--cp-comm-type)"}),
      F::integer("zero_stage", TRAINSIM_AT(spec.zero_stage), kDefault, 0, 3,
                 {"", "ZeRO stage", "1 = Megatron distributed optimizer (sharded over dp*cp; experts over the expert-data-parallel group); 2, 3 = Megatron-FSDP"}),
      F::boolean("grad_reduce_in_bf16", TRAINSIM_AT(spec.grad_reduce_in_bf16),
                 {"", "Grad reduce in bf16", "Megatron-LM --grad-reduce-in-bf16"}),
      F::boolean("gradient_accumulation_fusion", TRAINSIM_AT(spec.gradient_accumulation_fusion),
                 {"", "Grad-accum fusion", "no --no-gradient-accumulation-fusion"}),
      F::boolean("fsdp_double_buffer", TRAINSIM_AT(spec.fsdp_double_buffer),
                 {"", "FSDP double buffer",
                  "Megatron-LM --fsdp-double-buffer (zero_stage 2, 3): each model chunk's layers gather their "
                  "parameters and produce their unsharded gradients in a fixed pool of two buffers, kept for "
                  "the run, and prefetch at most one layer ahead"}),
      F::integer("fsdp_communication_unit_elements", TRAINSIM_AT(spec.fsdp_communication_unit_elements), kDefault, 0,
                 kMaxFsdpUnitElements,
                 {"", "FSDP comm unit (elements)",
                  "Megatron-LM --suggested-communication-unit-size (zero_stage 2, 3): unsharded gradients may "
                  "wait for their reduce-scatter up to this many elements, and parameters are prefetched up "
                  "to half of it; 0 = Megatron-LM's default (twice the average layer with ZeRO 3, 1e9 "
                  "elements with ZeRO 2, at least 1e9)"}),
      te_version_row(),
      recompute_row(),
      F::boolean("flash_attention", TRAINSIM_AT(spec.kernels.flash_attention),
                 {"", "Flash attention", "fused attention kernels (--attention-backend auto)"}),
      F::boolean("fused_cross_entropy", TRAINSIM_AT(spec.kernels.fused_cross_entropy),
                 {"", "Fused cross-entropy", "Megatron-LM --cross-entropy-loss-fusion"}),
      F::boolean("fused_norm", TRAINSIM_AT(spec.kernels.fused_norm), {"", "Fused norm", "Transformer Engine fused norms"}),
      F::boolean("fused_swiglu", TRAINSIM_AT(spec.kernels.fused_swiglu),
                 {"", "Fused SwiGLU", "no --no-bias-swiglu-fusion"}),
      F::boolean("fused_bias_dropout", TRAINSIM_AT(spec.kernels.fused_bias_dropout),
                 {"", "Fused bias-dropout-add", "no --no-bias-dropout-fusion: bias, dropout and residual add in one kernel"}),
      F::boolean("fused_rope", TRAINSIM_AT(spec.kernels.fused_rope),
                 {"", "Fused RoPE", "no --no-rope-fusion: one rotary-embedding kernel per q and k"}),
      F::boolean("fused_softmax", TRAINSIM_AT(spec.kernels.fused_softmax),
                 {"", "Fused softmax", "no --no-masked-softmax-fusion: scale, mask and softmax in one kernel (unfused attention only)"}),
      F::number("hidden_dropout", TRAINSIM_AT(spec.hidden_dropout), kDefault, 0.0, 1.0, false, 1.0,
                {"", "Hidden dropout", "Megatron-LM --hidden-dropout (its own default is 0.1; Llama-style recipes set 0)"}),
      F::number("attention_dropout", TRAINSIM_AT(spec.attention_dropout), kDefault, 0.0, 1.0, false, 1.0,
                {"", "Attention dropout", "Megatron-LM --attention-dropout (its own default is 0.1)"}),
      cuda_graph_row(),
      F::boolean("overlap_grad_reduce", TRAINSIM_AT(spec.overlap.grad_reduce),
                 {"", "Overlap grad reduce", "Megatron-LM --overlap-grad-reduce"}),
      F::boolean("overlap_param_gather", TRAINSIM_AT(spec.overlap.param_gather),
                 {"", "Overlap param gather", "Megatron-LM --overlap-param-gather"}),
      F::boolean("tp_comm_overlap", TRAINSIM_AT(spec.overlap.tp_comm), {"", "TP comm overlap", "Megatron-LM --tp-comm-overlap"}),
      F::boolean("overlap_p2p_comm", TRAINSIM_AT(spec.overlap.p2p),
                 {"", "Overlap PP p2p",
                  "Megatron-LM overlap_p2p_comm, on unless --no-overlap-p2p-communication: in the interleaved "
                  "schedule's steady phase the pipeline sends and receives run beside compute and a pass "
                  "waits only for its own input; warm-up and cool-down stay blocking. Without virtual "
                  "stages (vpp 1) Megatron-LM turns it off and it has no effect"}),
      F::boolean("defer_embedding_wgrad_compute", TRAINSIM_AT(spec.overlap.defer_embedding_wgrad),
                 {"", "Defer output-layer wgrad",
                  "Megatron-LM --defer-embedding-wgrad-compute (needs pp > 1 and the 1f1b schedule): the last "
                  "stage keeps the output layer's input and logits gradient of the first "
                  "wgrad_deferral_limit micro-batches and runs their weight-gradient GEMMs in the pipeline "
                  "flush; the kept tensors are memory of the last stage"}),
      F::integer("wgrad_deferral_limit", TRAINSIM_AT(spec.overlap.wgrad_deferral_limit), kDefault, 0, kMaxBatch,
                 {"", "Wgrad deferral limit",
                  "Megatron-LM --wgrad-deferral-limit: micro-batches whose output-layer weight gradient is "
                  "deferred (0 = all of them); only with defer_embedding_wgrad_compute"}),
      F::boolean("overlap_moe_expert_parallel_comm", TRAINSIM_AT(spec.overlap.moe_ep_comm),
                 {"", "EP comm overlap",
                  "Megatron-LM --overlap-moe-expert-parallel-comm: in the steady 1F1B phase one micro-batch's "
                  "forward and another's backward run merged layer by layer, each one's expert all-to-all "
                  "beside the other's compute; ep > 1, no full recompute, pp > 1 needs vpp > 1"}),
      F::boolean("delay_wgrad_compute", TRAINSIM_AT(spec.overlap.delay_wgrad),
                 {"", "Delay wgrad",
                  "Megatron-LM --delay-wgrad-compute (needs overlap_moe_expert_parallel_comm): weight "
                  "gradients run after the dispatch all-to-all is issued, filling its gap"}),
      F::boolean("moe_shared_expert_overlap", TRAINSIM_AT(spec.overlap.moe_shared_expert),
                 {"", "Shared-expert overlap",
                  "Megatron-LM --moe-shared-expert-overlap: the shared experts run on a side stream during "
                  "the token dispatch and combine all-to-alls"}),
      F::boolean("moe_pad_to_capacity", TRAINSIM_AT(spec.moe.pad_to_capacity),
                 {"", "MoE pad to capacity", "Megatron-LM --moe-pad-expert-input-to-capacity; needs moe_capacity_factor"}),
      F::number("moe_capacity_factor", TRAINSIM_AT(spec.moe.capacity_factor), kDefault, 0.0, kMaxCapacityFactor,
                false, 1.0, {"", "MoE capacity factor", "Megatron-LM --moe-expert-capacity-factor; 0 = dropless"}),
      F::number("moe_routing_imbalance", TRAINSIM_AT(spec.moe.routing_imbalance), kDefault, 1.0, kMaxExperts,
                false, 1.0,
                {"", "MoE routing imbalance",
                 "tokens the busiest expert-parallel rank receives over its balanced share (1 = balanced, "
                 "as in force-balanced benchmarks; at most ep): sets its grouped-GEMM rows, all-to-all "
                 "receive size and permuted-token memory"}),
      F::choice("moe_token_dispatcher", TRAINSIM_AT(spec.moe.dispatcher), moe_dispatcher_names(),
                {"", "MoE dispatcher",
                 "Megatron-LM --moe-token-dispatcher-type: alltoall sends each (token, expert) copy; flex "
                 "(DeepEP / HybridEP) sends a token once per destination rank, once per destination node across nodes"}),
      F::integer("moe_flex_dispatcher_num_sms", TRAINSIM_AT(spec.moe.flex_dispatcher_num_sms), kDefault, 1, kMaxSms,
                 {"", "Flex dispatcher SMs",
                  "moe_token_dispatcher \"flex\" only: SMs its dispatch and combine kernels hold, which the "
                  "compute beside an overlapped all-to-all loses; at most system.efficiency.num_sms. "
                  "Megatron-LM --moe-flex-dispatcher-num-sms, formerly --moe-deepep-num-sms (DeepEP, "
                  "default 20; DeepEP wants an even count) and --moe-hybridep-num-sms (HybridEP, 16 in "
                  "Megatron-Core 0.16)"}),
      F::choice("moe_router_load_balancing_type", TRAINSIM_AT(spec.moe.load_balancing),
                moe_load_balancing_names(),
                {"", "MoE load balancing", "Megatron-LM --moe-router-load-balancing-type (with moe_aux_loss_coeff)"}),
      F::number("moe_aux_loss_coeff", TRAINSIM_AT(spec.moe.aux_loss_coeff), kDefault, 0.0, 1e6, false, 1.0,
                {"", "MoE aux loss coeff", "Megatron-LM --moe-aux-loss-coeff; 0 = no auxiliary loss is computed"}),
      F::boolean("moe_router_enable_expert_bias", TRAINSIM_AT(spec.moe.expert_bias),
                 {"", "MoE expert bias", "aux-loss-free load balancing (Megatron-LM --moe-router-enable-expert-bias)"}),
      F::boolean("moe_router_fp32", TRAINSIM_AT(spec.moe.router_fp32),
                 {"", "MoE router in fp32", "router logits, scores and top-k in fp32 (Megatron-LM --moe-router-dtype fp32)"}),
      F::boolean("moe_permute_probs_fused", TRAINSIM_AT(spec.moe.permute_probs_fused),
                 {"", "MoE probs in activation", "router probabilities applied inside the expert activation (Megatron-Core >= 0.14)"}),
      F::boolean("expandable_segments", TRAINSIM_AT(spec.expandable_segments),
                 {"", "Expandable segments", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: the allocator grows one segment per stream instead of caching fixed segments (less fragmentation)"}),
      F::number("optimizer_offload_fraction", TRAINSIM_AT(spec.optimizer_offload_fraction), kDefault, 0.0, 1.0,
                false, 1.0,
                {"", "Optimizer CPU offload",
                 "Megatron-LM --optimizer-cpu-offload --optimizer-offload-fraction: the fraction of the "
                 "optimizer's parameters whose fp32 master copy and Adam moments live in host memory and "
                 "are stepped by the CPU; needs the system's host figures; 0 = no offload"}),
      F::boolean("overlap_cpu_optimizer_d2h_h2d", TRAINSIM_AT(spec.overlap_cpu_optimizer_d2h_h2d),
                 {"", "Overlap offload copies", "Megatron-LM --overlap-cpu-optimizer-d2h-h2d: gradient copies, CPU "
                  "steps and parameter copies of successive parameters run concurrently"}),
      F::integer("activation_offload_layers", TRAINSIM_AT(spec.activation_offload_layers), kDefault, 0, kMaxLayers,
                 {"", "Activation CPU offload",
                  "Megatron-LM --cpu-offloading-num-layers: the saved activations of the first N layers go to "
                  "pinned host memory in the forward (D2H beside the next layers' compute) and come back in "
                  "the backward (H2D prefetch); pp 1, no recompute; needs the system's host figures; 0 = none"}),
      F::boolean("nccl_nvls", TRAINSIM_AT(spec.nccl_nvls),
                 {"", "NCCL NVLS", "NCCL_NVLS_ENABLE: NVLink SHARP buffers on systems that have it (about 1 GiB per communicator); false = NCCL_NVLS_ENABLE=0"}),
      F::boolean("moe_router_fusion", TRAINSIM_AT(spec.kernels.moe_router_fusion),
                 {"", "MoE router fusion", "Megatron-LM --moe-router-fusion: TE fused score function, top-k and aux loss"}),
      F::boolean("moe_permute_fusion", TRAINSIM_AT(spec.kernels.moe_permute_fusion),
                 {"", "MoE permute fusion", "Megatron-LM --moe-permute-fusion: TE fused token permutation"}),
  };
  return table;
}

}  // namespace trainsim::schema
