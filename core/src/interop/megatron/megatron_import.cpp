// The "training" and "system" sections from Megatron-LM flags, and the
// importer's entry point. Semantics follow validate_args() in
// megatron/training/arguments.py at core_v0.14.0, cited per rule.
#include "interop/megatron/megatron_import.h"

#include <algorithm>
#include <cstdlib>

#include "input_limits.h"
#include "interop/megatron/megatron_flags.h"
#include "model/pipeline_layout.h"
#include "schema/preset_store.h"

namespace trainsim::interop {

using schema::find_preset;
namespace {

using nlohmann::json;

std::string str(int64_t value) { return std::to_string(value); }

void read_precision(FlagReader& r, json& t) {
  const bool bf16 = r.flag("--bf16");
  const bool fp16 = r.flag("--fp16");
  const auto fp8 = r.choice("--fp8-format", {"e4m3", "hybrid"});
  if (bf16 && fp16) r.error("--fp16", "cannot be combined with --bf16");
  if (!bf16 && !fp16 && !r.has("--fp8-format")) {
    r.error("--bf16", "missing: trainsim models bf16, fp16 and fp8 training, not fp32 (Megatron-LM's "
                      "default without --bf16 or --fp16)");
  }
  t["dtype"] = fp8 ? "fp8" : (fp16 ? "fp16" : "bf16");
  // --fp8-recipe (default delayed, megatron/core/enums.py Fp8Recipe); --fp4-format
  // e2m1 with --fp4-recipe nvfp4 (arguments.py rejects fp4 together with fp8).
  const auto recipe = r.choice("--fp8-recipe", {"delayed", "tensorwise", "blockwise", "mxfp8", "custom"});
  if (recipe && *recipe == 4) r.error("--fp8-recipe", "\"custom\" quantizer factories are not modelled");
  if (recipe && *recipe < 4) {
    const char* names[] = {"delayed", "tensorwise", "blockwise", "mxfp8"};
    if (fp8) t["fp8_recipe"] = names[*recipe];
    else if (*recipe != 0) r.note("--fp8-recipe has no effect without --fp8-format");
  }
  const auto fp4 = r.choice("--fp4-format", {"e2m1"});
  const auto fp4_recipe = r.choice("--fp4-recipe", {"nvfp4", "custom"});
  if (fp4 && fp8) r.error("--fp4-format", "cannot be combined with --fp8-format");
  if (fp4_recipe && *fp4_recipe == 1) r.error("--fp4-recipe", "\"custom\" quantizer factories are not modelled");
  if (fp4 && !fp8) t["dtype"] = "fp4";
  const bool fp8_params = r.flag("--fp8-param-gather"), fp4_params = r.flag("--fp4-param-gather");
  if (fp8_params && !fp8) r.error("--fp8-param-gather", "needs --fp8-format");
  if (fp4_params && !fp4) r.error("--fp4-param-gather", "needs --fp4-format");
  t["fp8_param_gather"] = (fp8_params && fp8) || (fp4_params && fp4);
  // validate_args: bf16 accumulates and all-reduces main grads in fp32 unless
  // --grad-reduce-in-bf16; fp16 does so only with --accumulate-allreduce-grads-in-fp32.
  const bool bf16_reduce = r.flag("--grad-reduce-in-bf16");
  const bool fp32_accumulate = r.flag("--accumulate-allreduce-grads-in-fp32");
  t["grad_reduce_in_bf16"] = bf16_reduce || (fp16 && !fp32_accumulate);
}

void read_virtual_pipeline(FlagReader& r, json& t, int64_t num_layers, int64_t pp) {
  const char* names[] = {"--num-layers-per-virtual-pipeline-stage",
                         "--num-virtual-stages-per-pipeline-rank",
                         "--virtual-pipeline-model-parallel-size"};
  const char* given = nullptr;
  for (const char* name : names) {
    if (!r.has(name)) continue;
    if (given != nullptr) r.error(name, std::string("cannot be combined with ") + given);
    given = given != nullptr ? given : name;
  }
  if (given == nullptr) return;
  const auto value = r.integer(given, 1, kMaxLayers);
  if (!value) return;
  if (given != names[0]) {
    t["vpp"] = *value;
    return;
  }
  if (t.contains("num_layers_in_first_stage") || t.contains("num_layers_in_last_stage")) {
    r.error(given, "cannot be combined with uneven first/last stages; use "
                   "--num-virtual-stages-per-pipeline-rank");
    return;
  }
  int64_t layers = num_layers;  // validate_args counts the embedding / loss as layers here
  if (t.value("account_for_embedding_in_pipeline_split", false)) ++layers;
  if (t.value("account_for_loss_in_pipeline_split", false)) ++layers;
  if (layers % pp != 0 || (layers / pp) % *value != 0) {
    r.error(given, "must divide the layers per pipeline stage (" + str(layers) + "/" + str(pp) +
                       "), got " + str(*value));
    return;
  }
  t["vpp"] = layers / pp / *value;
}

// --pipeline-model-parallel-layout (arguments.py: excludes the other virtual
// pipeline flags; vpp = stages / pp). The layout itself is checked as the
// config's training.pipeline_layout. Returns whether the flag was given.
bool read_pipeline_layout(FlagReader& r, json& t, int64_t pp) {
  const char* name = "--pipeline-model-parallel-layout";
  const auto text = r.text(name);
  if (!text) return r.has(name);
  for (const char* other : {"--num-layers-per-virtual-pipeline-stage",
                            "--num-virtual-stages-per-pipeline-rank",
                            "--virtual-pipeline-model-parallel-size"}) {
    if (r.has(other)) r.error(other, std::string("cannot be combined with ") + name);
  }
  std::string error;
  const auto stages = parse_pipeline_layout(*text, &error);
  if (!stages) {
    r.error(name, error);
    return true;
  }
  const auto count = static_cast<int64_t>(stages->size());
  if (count % pp != 0) {
    r.error(name, "has " + str(count) + " stages, not a multiple of --pipeline-model-parallel-size (" +
                      str(pp) + ")");
    return true;
  }
  t["pipeline_layout"] = *text;
  t["vpp"] = count / pp;
  return true;
}

void read_parallel(FlagReader& r, json& t, int64_t num_layers, bool moe) {
  const int64_t tp = r.integer("--tensor-model-parallel-size", 1, kMaxGpus).value_or(1);
  const int64_t pp = r.integer("--pipeline-model-parallel-size", 1, kMaxLayers).value_or(1);
  t["tp"] = tp;
  t["pp"] = pp;
  t["cp"] = r.integer("--context-parallel-size", 1, kMaxGpus).value_or(1);
  const int64_t ep = r.integer("--expert-model-parallel-size", 1, kMaxExperts).value_or(1);
  if (!moe && ep > 1) r.error("--expert-model-parallel-size", "must be 1 without --num-experts, got " + str(ep));
  t["ep"] = moe ? ep : 1;
  // validate_args: expert_tensor_parallel_size defaults to tensor_model_parallel_size.
  t["etp"] = moe ? r.integer("--expert-tensor-parallel-size", 1, kMaxGpus).value_or(tp) : 1;
  const bool sp = r.flag("--sequence-parallel");
  if (sp && tp == 1) r.note("--sequence-parallel is dropped: Megatron-LM disables it when tp is 1");
  t["sequence_parallel"] = sp && tp > 1;
  for (const auto& [flag, key] : {std::pair{"--decoder-first-pipeline-num-layers", "num_layers_in_first_stage"},
                                  std::pair{"--decoder-last-pipeline-num-layers", "num_layers_in_last_stage"}}) {
    if (const auto layers = r.integer(flag, 0, kMaxLayers)) t[key] = *layers;
  }
  t["account_for_embedding_in_pipeline_split"] = r.flag("--account-for-embedding-in-pipeline-split");
  t["account_for_loss_in_pipeline_split"] = r.flag("--account-for-loss-in-pipeline-split");
  if (read_pipeline_layout(r, t, pp)) return;
  read_virtual_pipeline(r, t, num_layers, pp);
}

void read_context_parallel(FlagReader& r, json& t) {
  const char* name = "--cp-comm-type";
  const auto types = r.list(name);
  if (!types) {
    if (t["cp"].get<int64_t>() > 1) t["cp_comm_type"] = "p2p";  // Megatron-LM's default
    return;
  }
  const std::vector<std::string> megatron = {"p2p", "a2a", "allgather"};
  const std::vector<std::string> trainsim = {"p2p", "a2a", "all_gather"};
  if (types->empty()) r.error(name, "expected a value");
  for (const std::string& type : *types) {
    size_t index = 0;
    while (index < megatron.size() && megatron[index] != type) ++index;
    if (index == megatron.size()) {
      r.error(name, "expected \"p2p\", \"a2a\" or \"allgather\" (a2a+p2p is not modelled), got \"" +
                        type + "\"");
      return;
    }
    if (type != types->front()) {
      r.error(name, "one type for all layers is supported, got several");
      return;
    }
    t["cp_comm_type"] = trainsim[index];
  }
}

void read_recompute(FlagReader& r, json& t) {
  auto granularity = r.choice("--recompute-granularity", {"full", "selective"});
  if (r.flag("--recompute-activations")) granularity = 1;  // validate_args: selective
  if (!granularity) {
    t["recompute"] = {{"granularity", "none"}};
    return;
  }
  if (*granularity == 0) {
    const auto method = r.choice("--recompute-method", {"uniform", "block"});
    const auto layers = r.integer("--recompute-num-layers", 1, kMaxLayers);
    if (!r.has("--recompute-method")) {
      r.error("--recompute-method", "missing required flag (--recompute-granularity full)");
    }
    if (!r.has("--recompute-num-layers")) {
      r.error("--recompute-num-layers", "missing required flag (--recompute-granularity full)");
    }
    t["recompute"] = {{"granularity", "full"},
                      {"method", method.value_or(0) == 0 ? "uniform" : "block"},
                      {"num_layers", layers.value_or(1)}};
    return;
  }
  if (r.has("--recompute-method")) {
    r.error("--recompute-method", "not supported with selective granularity (Megatron-LM asserts)");
  }
  const std::vector<std::string> allowed = {"core_attn", "moe_act", "layernorm", "mla_up_proj",
                                            "mlp", "moe", "shared_experts"};
  json modules = json::array();
  for (const std::string& module : r.list("--recompute-modules").value_or(std::vector<std::string>{"core_attn"})) {
    if (std::find(allowed.begin(), allowed.end(), module) == allowed.end()) {
      r.error("--recompute-modules", "expected modules among core_attn, moe_act, layernorm, "
                                     "mla_up_proj, mlp, moe, shared_experts, got \"" + module + "\"");
    } else if (std::find(modules.begin(), modules.end(), module) != modules.end()) {
      r.error("--recompute-modules", "duplicate module \"" + module + "\"");
    } else {
      modules.push_back(module);
    }
  }
  if (modules.empty()) {
    r.note("--recompute-modules lists no module: nothing is recomputed");
    t["recompute"] = {{"granularity", "none"}};
    return;
  }
  t["recompute"] = {{"granularity", "selective"}, {"modules", modules}};
}

// Megatron-FSDP --data-parallel-sharding-strategy (default no_shard at core_v0.14.0)
// and torch FSDP2 (ZeRO-3, or ZeRO-2 with --torch-fsdp2-no-reshard-after-forward).
void read_sharding(FlagReader& r, json& t) {
  const bool distributed = r.flag("--use-distributed-optimizer");
  const bool megatron_fsdp = r.flag("--use-megatron-fsdp");
  const bool custom_fsdp = r.flag("--use-custom-fsdp");
  const bool torch_fsdp2 = r.flag("--use-torch-fsdp2");
  int64_t stage = distributed ? 1 : 0;
  if (megatron_fsdp || custom_fsdp) {
    stage = static_cast<int64_t>(r.choice("--data-parallel-sharding-strategy",
                                          {"no_shard", "optim", "optim_grads", "optim_grads_params"})
                                     .value_or(0));
    if (!r.has("--data-parallel-sharding-strategy")) {
      r.note("--data-parallel-sharding-strategy is not given: Megatron-LM core_v0.14's default is no_shard");
    }
  } else if (torch_fsdp2) {
    stage = r.flag("--torch-fsdp2-no-reshard-after-forward") ? 2 : 3;
  }
  if (distributed && (megatron_fsdp || custom_fsdp || torch_fsdp2)) {
    r.note("--use-distributed-optimizer is superseded by FSDP sharding (zero_stage " + str(stage) + ")");
  }
  if (torch_fsdp2 && !megatron_fsdp && !custom_fsdp) {
    r.note("--use-torch-fsdp2: its gathered and unsharded-gradient buffers are estimated as Megatron-FSDP's "
           "(prefetch and reduce-scatter queue by element budget)");
  }
  t["zero_stage"] = stage;
  // Megatron-FSDP's buffer settings (distributed_data_parallel_config.py); without it
  // Megatron-LM ignores them.
  const bool double_buffer = r.flag("--fsdp-double-buffer");
  const auto unit = r.integer("--suggested-communication-unit-size", 1, kMaxFsdpUnitElements);
  if (stage >= 2 && (megatron_fsdp || custom_fsdp)) {
    t["fsdp_double_buffer"] = double_buffer;
    if (unit) t["fsdp_communication_unit_elements"] = *unit;
  } else {
    if (double_buffer) r.note("--fsdp-double-buffer has no effect without Megatron-FSDP sharding gradients");
    if (unit) r.note("--suggested-communication-unit-size has no effect without Megatron-FSDP sharding gradients");
  }
}

// Optimizer CPU offload (arguments.py: --optimizer-offload-fraction defaults to 1.0 and
// applies only with --optimizer-cpu-offload, which needs --use-precision-aware-optimizer;
// --use-torch-optimizer-for-cpu-offload changes nothing for Adam, whose GPU and CPU
// classes megatron/core/optimizer/__init__.py sets either way).
void read_offload(FlagReader& r, json& t) {
  const bool offload = r.flag("--optimizer-cpu-offload");
  const auto fraction = r.number("--optimizer-offload-fraction", 0.0, 1.0);
  const bool overlap = r.flag("--overlap-cpu-optimizer-d2h-h2d");
  if (!offload) {
    if (r.has("--optimizer-offload-fraction")) r.note("--optimizer-offload-fraction has no effect without --optimizer-cpu-offload");
    if (overlap) r.note("--overlap-cpu-optimizer-d2h-h2d has no effect without --optimizer-cpu-offload");
    return;
  }
  if (!r.flag("--use-precision-aware-optimizer")) {
    r.error("--optimizer-cpu-offload", "needs --use-precision-aware-optimizer, as Megatron-LM's arguments.py requires");
  }
  t["optimizer_offload_fraction"] = fraction.value_or(1.0);
  t["overlap_cpu_optimizer_d2h_h2d"] = overlap;
}

// Activation CPU offload: --cpu-offloading-num-layers N > 0 turns cpu_offloading on
// (megatron/training/arguments.py); cpu_offloading_activations stays True and
// cpu_offloading_weights False (TransformerConfig defaults, no command-line flags; Transformer
// Engine ignores offload_weights, cpu_offload.py). The limits (N < num_layers, pp 1, no
// recompute) are TransformerConfig's, checked with the rest of the config.
void read_activation_offload(FlagReader& r, json& t) {
  const auto layers = r.integer("--cpu-offloading-num-layers", 0, kMaxLayers);
  if (layers.value_or(0) > 0) t["activation_offload_layers"] = *layers;
}

// --cuda-graph-impl / --cuda-graph-modules, and the deprecated --enable-cuda-graph
// (local), --external-cuda-graph (transformer_engine) and --cuda-graph-scope
// (an alias of the modules), as arguments.py rewrites them.
void read_cuda_graph(FlagReader& r, json& t) {
  const char* impls[] = {"none", "local", "transformer_engine", "full_iteration"};
  auto impl = r.choice("--cuda-graph-impl", {"none", "local", "transformer_engine", "full_iteration"});
  const bool enable = r.flag("--enable-cuda-graph"), external = r.flag("--external-cuda-graph");
  if ((enable || external) && impl) r.error("--cuda-graph-impl", "cannot be combined with --enable-cuda-graph or --external-cuda-graph");
  if (enable && external) r.error("--external-cuda-graph", "cannot be combined with --enable-cuda-graph");
  if (enable) impl = 1;
  if (external) impl = 2;
  auto modules = r.list("--cuda-graph-modules");
  const auto scope = r.list("--cuda-graph-scope");
  if (modules && scope) r.error("--cuda-graph-scope", "cannot be combined with --cuda-graph-modules");
  if (!modules) modules = scope;
  json list = json::array();
  for (const std::string& m : modules.value_or(std::vector<std::string>{})) {
    if (m == "attn" || m == "mlp" || m == "moe" || m == "moe_router" || m == "moe_preprocess") {
      list.push_back(m);
    } else if (m == "full_iteration") {
      impl = 3;  // the old spelling of --cuda-graph-scope full_iteration
    } else {
      r.error(modules == scope ? "--cuda-graph-scope" : "--cuda-graph-modules",
              "\"" + m + "\" is not modelled (expected attn, mlp, moe, moe_router, moe_preprocess)");
    }
  }
  t["cuda_graph"] = {{"impl", impls[impl.value_or(0)]}, {"modules", list}};
}

void read_kernels(FlagReader& r, json& t) {
  t["gradient_accumulation_fusion"] = !r.flag("--no-gradient-accumulation-fusion");
  t["fused_cross_entropy"] = r.flag("--cross-entropy-loss-fusion");
  t["fused_swiglu"] = !r.flag("--no-bias-swiglu-fusion");
  t["fused_bias_dropout"] = !r.flag("--no-bias-dropout-fusion");
  t["fused_rope"] = !r.flag("--no-rope-fusion");
  t["fused_softmax"] = !r.flag("--no-masked-softmax-fusion");
  t["moe_router_fusion"] = r.flag("--moe-router-fusion");
  t["moe_permute_fusion"] = r.flag("--moe-permute-fusion");
  // Megatron-LM's TransformerConfig defaults: hidden and attention dropout 0.1.
  t["hidden_dropout"] = r.number("--hidden-dropout", 0.0, 1.0).value_or(0.1);
  t["attention_dropout"] = r.number("--attention-dropout", 0.0, 1.0).value_or(0.1);
  read_cuda_graph(r, t);
  const bool legacy_flash = r.flag("--use-flash-attn");
  const auto impl = r.choice("--transformer-impl", {"local", "transformer_engine"});
  const auto backend = r.choice("--attention-backend", {"flash", "fused", "unfused", "local", "auto"});
  if (impl.value_or(1) == 0) {
    r.note("--transformer-impl local is estimated like Transformer Engine (fused norms, TE buffers)");
    t["flash_attention"] = legacy_flash;
  } else {
    t["flash_attention"] = !backend || (*backend != 2 && *backend != 3);
  }
  t["overlap_grad_reduce"] = r.flag("--overlap-grad-reduce");
  t["overlap_param_gather"] = r.flag("--overlap-param-gather");
  t["tp_comm_overlap"] = r.flag("--tp-comm-overlap");
  t["overlap_p2p_comm"] = !r.flag("--no-overlap-p2p-communication");
  // Megatron-LM ignores --wgrad-deferral-limit without --defer-embedding-wgrad-compute.
  const bool defer = r.flag("--defer-embedding-wgrad-compute");
  t["defer_embedding_wgrad_compute"] = defer;
  if (const auto limit = r.integer("--wgrad-deferral-limit", 0, kMaxBatch)) {
    if (defer) {
      t["wgrad_deferral_limit"] = *limit;
    } else {
      r.note("--wgrad-deferral-limit has no effect without --defer-embedding-wgrad-compute");
    }
  }
  t["overlap_moe_expert_parallel_comm"] = r.flag("--overlap-moe-expert-parallel-comm");
  t["delay_wgrad_compute"] = r.flag("--delay-wgrad-compute");
  t["moe_shared_expert_overlap"] = r.flag("--moe-shared-expert-overlap");
  if (r.choice("--optimizer", {"adam", "sgd"}).value_or(0) == 1) {
    r.error("--optimizer", "\"sgd\" is not supported (trainsim models Adam)");
  }
  if (r.flag("--use-legacy-models")) r.note("--use-legacy-models is estimated like Megatron-Core models");
}

// Router load balancing (arguments.py: --moe-router-load-balancing-type and
// --moe-aux-loss-coeff take one entry per loss; transformer_config.py
// moe_router_enable_expert_bias, moe_router_dtype).
void read_moe_router(FlagReader& r, json& t) {
  const char* type_flag = "--moe-router-load-balancing-type";
  const std::vector<std::string> types = r.list(type_flag).value_or(std::vector<std::string>{"aux_loss"});
  const std::vector<std::string> modelled = {"aux_loss", "seq_aux_loss", "global_aux_loss", "none"};
  if (types.empty() || std::find(modelled.begin(), modelled.end(), types.front()) == modelled.end()) {
    r.error(type_flag, "expected one of aux_loss, seq_aux_loss, global_aux_loss, none (the modelled losses)");
  } else {
    t["moe_router_load_balancing_type"] = types.front();
  }
  if (types.size() > 1) r.note(std::string(type_flag) + ": only the first loss, " + types.front() + ", is modelled");
  if (const auto coeffs = r.list("--moe-aux-loss-coeff"); coeffs && !coeffs->empty()) {
    char* end = nullptr;
    const double coeff = std::strtod(coeffs->front().c_str(), &end);
    if (end == coeffs->front().c_str() || *end != '\0' || !(coeff >= 0.0 && coeff <= 1e6)) {
      r.error("--moe-aux-loss-coeff", "expected a number in [0, 1e6], got \"" + coeffs->front() + "\"");
    } else {
      t["moe_aux_loss_coeff"] = coeff;
    }
  }
  t["moe_router_enable_expert_bias"] = r.flag("--moe-router-enable-expert-bias");
  if (const auto dtype = r.choice("--moe-router-dtype", {"fp32", "fp64"})) {
    if (*dtype == 1) r.note("--moe-router-dtype fp64 is estimated like fp32");
    t["moe_router_fp32"] = true;
  }
}

// The flex dispatcher's SM budget. Megatron-LM's TransformerConfig.__post_init__
// (megatron/core/transformer/transformer_config.py, NVIDIA/Megatron-LM main) routes the
// deprecated --moe-deepep-num-sms (core_v0.14.0, default 20) and --moe-hybridep-num-sms
// (core_v0.16.0) to moe_flex_dispatcher_num_sms unless that is given, and refuses two
// different deprecated counts.
void read_flex_dispatcher_sms(FlagReader& r, json& t) {
  const char* key = "moe_flex_dispatcher_num_sms";
  const char* unified = "--moe-flex-dispatcher-num-sms";
  const char* deprecated[] = {"--moe-deepep-num-sms", "--moe-hybridep-num-sms"};
  if (const auto sms = r.integer(unified, 1, kMaxSms)) {
    t[key] = *sms;
    for (const char* flag : deprecated) {
      if (r.has(flag)) r.note(std::string(flag) + " is ignored: " + unified + " takes precedence");
    }
    return;
  }
  if (r.has(unified)) return;  // its issue is already reported
  const auto deepep = r.integer(deprecated[0], 1, kMaxSms);
  const auto hybridep = r.integer(deprecated[1], 1, kMaxSms);
  if (deepep && hybridep && *deepep != *hybridep) {
    r.error(deprecated[1], "is " + str(*hybridep) + " but --moe-deepep-num-sms is " +
                               str(*deepep) + ": Megatron-LM refuses two different SM counts; "
                               "give one, or --moe-flex-dispatcher-num-sms");
  } else if (deepep || hybridep) {
    t[key] = deepep ? *deepep : *hybridep;
  }
}

void read_moe_training(FlagReader& r, json& t) {
  const auto factor = r.number("--moe-expert-capacity-factor", 0.0, 1e6);
  const bool pad = r.flag("--moe-pad-expert-input-to-capacity");
  if (pad && !factor) r.note("--moe-pad-expert-input-to-capacity has no effect without --moe-expert-capacity-factor");
  t["moe_capacity_factor"] = factor.value_or(0.0);
  t["moe_pad_to_capacity"] = pad && factor.has_value();
  const auto dispatcher = r.choice("--moe-token-dispatcher-type", {"allgather", "alltoall", "flex"});
  if (dispatcher.value_or(0) == 0) {
    r.note(std::string("--moe-token-dispatcher-type ") + (dispatcher ? "allgather" : "is not given (Megatron-LM's default allgather)") +
           ": trainsim prices token dispatch as an all-to-all");
  }
  const bool flex = dispatcher.value_or(0) == 2;
  // --moe-enable-deepep (core_v0.14.0; deprecated for --moe-flex-dispatcher-backend deepep
  // since core_v0.16.0): TransformerConfig.__post_init__ raises "DeepEP backend is only
  // supported with flex token dispatcher" for any other dispatcher, the default one included.
  if (r.flag("--moe-enable-deepep") && !flex) {
    r.error("--moe-enable-deepep",
            std::string("needs --moe-token-dispatcher-type flex (Megatron-LM refuses DeepEP with ") +
                (dispatcher ? "any other dispatcher)" : "its default dispatcher, allgather)"));
  }
  t["moe_token_dispatcher"] = flex ? "flex" : "alltoall";
  // Without flex Megatron-LM never reads the SM counts (finish() notes them as without effect).
  if (flex) read_flex_dispatcher_sms(r, t);
  read_moe_router(r, t);
  if (!r.flag("--moe-grouped-gemm")) {
    r.note("--moe-grouped-gemm is not given: trainsim prices the experts as one grouped GEMM");
  }
}

json read_training(FlagReader& r, int64_t num_layers, bool moe) {
  json t = json::object();
  const char* seq = !r.has("--seq-length") && r.has("--encoder-seq-length") ? "--encoder-seq-length"
                                                                             : "--seq-length";
  t["seq_len"] = r.required_integer(seq, 1, kMaxSeqLen);
  t["micro_batch_size"] = r.required_integer("--micro-batch-size", 1, kMaxBatch);
  if (const auto global = r.integer("--global-batch-size", 1, kMaxBatch)) {
    t["global_batch_size"] = *global;
  } else if (!r.has("--global-batch-size")) {
    t["num_micro_batches"] = 1;
    r.note("--global-batch-size is not given: Megatron-LM's default is micro_batch_size*dp "
           "(one micro-batch per step)");
  }
  if (r.list("--rampup-batch-size")) {
    r.note("--rampup-batch-size is ignored: steps are estimated at the final global batch size");
  }
  read_precision(r, t);
  read_parallel(r, t, num_layers, moe);
  read_context_parallel(r, t);
  read_recompute(r, t);
  read_sharding(r, t);
  read_offload(r, t);
  read_activation_offload(r, t);
  read_kernels(r, t);
  if (moe) read_moe_training(r, t);
  return t;
}

json read_system(FlagReader& r, std::string_view preset, Issues& issues) {
  std::string id(preset);
  if (id.empty()) {
    id = "h100-sxm-80gb";
    r.note("the system is not part of Megatron-LM arguments: using the h100-sxm-80gb preset");
  } else if (find_preset("system", id) == nullptr) {
    issues.push_back({"/system", "unknown system preset \"" + id + "\""});
  }
  json system = {{"preset", id}};
  const char* nproc_flag = r.has("--nproc-per-node") ? "--nproc-per-node" : "--nproc_per_node";
  const std::string run_time[] = {r.run_time_value("--nnodes"), r.run_time_value(nproc_flag)};
  if (!run_time[0].empty() || !run_time[1].empty()) {
    const bool nodes = !run_time[0].empty();
    r.note(std::string(nodes ? "--nnodes" : nproc_flag) + " " + run_time[nodes ? 0 : 1] +
           " is only known at run time: set system.num_gpus");
    return system;
  }
  const auto nnodes = r.integer("--nnodes", 1, kMaxGpus);
  const auto nproc = r.integer(nproc_flag, 1, kMaxGpus);
  if (nnodes || nproc) {
    system["num_gpus"] = nnodes.value_or(1) * nproc.value_or(1);
    if (!nnodes) r.note("--nnodes is not given: torchrun's default is 1");
    if (!nproc) r.note("--nproc-per-node is not given: torchrun's default is 1");
  } else if (!r.has("--nnodes") && !r.has(nproc_flag)) {
    r.note("the GPU count is not given (torchrun --nnodes and --nproc-per-node): set system.num_gpus");
  }
  return system;
}

}  // namespace

json import_megatron(std::string_view text, std::string_view system_preset, Issues& issues) {
  if (text.size() > kMaxScriptBytes) {
    issues.push_back({"/args", "the script is " + str(static_cast<int64_t>(text.size())) +
                                   " bytes; trainsim reads launch scripts of at most " +
                                   str(static_cast<int64_t>(kMaxScriptBytes)) + " bytes"});
    return nullptr;
  }
  std::vector<CommandFlag> flags;
  std::vector<std::string> notes;
  const auto arity = [](const std::string& name) { return megatron_flag_info(name).arity; };
  if (!split_command_flags(text, arity, flags, issues, &notes)) return nullptr;
  FlagReader r(flags, issues, notes);
  if (flags.empty()) {
    issues.push_back({"/args", "no --flags found (expected a pretrain_gpt.py command line or script)"});
    return nullptr;
  }
  int64_t num_layers = 1;
  json model = read_megatron_model(r, num_layers);
  json training = read_training(r, num_layers, model.contains("moe"));
  json system = read_system(r, system_preset, issues);
  r.finish();
  if (!issues.empty()) return nullptr;
  json config = {{"model", model}, {"training", training}, {"system", system}};
  check_imported_config(config, r, system.contains("num_gpus"), issues);
  if (!issues.empty()) return nullptr;
  return {{"config", config}, {"notes", notes}};
}

}  // namespace trainsim::interop
