// Megatron-LM flags of a config. Flag names and semantics: arguments.py at
// NVIDIA/Megatron-LM core_v0.14.0 (see megatron_import*.cpp for the rules each
// flag follows). Flags are written whenever Megatron-LM's default differs from
// the value, so that the importer reads back the same config.
#include "interop/megatron/megatron_export.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <numeric>

#include "model/pipeline_layout.h"
#include "schema/enums.h"

namespace trainsim::interop {

namespace {

std::string str(int64_t value) { return std::to_string(value); }

class ArgList {
 public:
  explicit ArgList(std::vector<std::string>& out) : out_(out) {}
  void add(const char* flag) { out_.emplace_back(flag); }
  void add(const char* flag, const std::string& value) {
    out_.emplace_back(flag);
    out_.push_back(value);
  }
  void add(const char* flag, int64_t value) { add(flag, str(value)); }
  void add_if(bool condition, const char* flag) {
    if (condition) add(flag);
  }

 private:
  std::vector<std::string>& out_;
};

// A per-layer 0/1 pattern as Megatron-LM's --moe-layer-freq expression: a
// repeated period when there is one ("([1,0]*24)"), else its runs ("([0]*3+[1]*58)").
std::string layer_pattern_expression(const std::vector<int8_t>& pattern) {
  const size_t n = pattern.size();
  for (size_t period = 1; period < n; ++period) {
    if (n % period != 0) continue;
    bool repeats = true;
    for (size_t i = period; i < n && repeats; ++i) repeats = pattern[i] == pattern[i % period];
    if (!repeats) continue;
    std::string items;
    for (size_t i = 0; i < period; ++i) items += (i > 0 ? "," : "") + std::to_string(pattern[i]);
    return "([" + items + "]*" + std::to_string(n / period) + ")";
  }
  std::string runs;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && pattern[j] == pattern[i]) ++j;
    runs += (runs.empty() ? "" : "+") + ("[" + std::to_string(pattern[i]) + "]*" + std::to_string(j - i));
    i = j;
  }
  return "(" + runs + ")";
}

void model_args(const Config& c, ArgList& a, std::vector<std::string>& notes) {
  const ModelSpec& m = c.model;
  if (!m.name.empty()) notes.push_back("model.name \"" + m.name + "\" is not a Megatron-LM flag");
  a.add("--num-layers", m.num_layers);
  a.add("--hidden-size", m.hidden_size);
  a.add("--ffn-hidden-size", m.ffn_hidden_size);
  a.add("--num-attention-heads", m.num_attention_heads);
  int64_t default_head_dim = m.hidden_size % m.num_attention_heads == 0
                                 ? m.hidden_size / m.num_attention_heads
                                 : 0;
  if (m.mla) {
    a.add("--multi-latent-attention");
    if (m.mla->q_lora_rank > 0) a.add("--q-lora-rank", m.mla->q_lora_rank);
    a.add("--kv-lora-rank", m.mla->kv_lora_rank);
    a.add("--qk-head-dim", m.mla->qk_nope_head_dim);
    a.add("--qk-pos-emb-head-dim", m.mla->qk_rope_head_dim);
    a.add("--v-head-dim", m.mla->v_head_dim);
    default_head_dim = m.mla->qk_nope_head_dim + m.mla->qk_rope_head_dim;
  }
  if (m.num_kv_heads != m.num_attention_heads) {
    a.add("--group-query-attention");
    a.add("--num-query-groups", m.num_kv_heads);
  }
  if (m.head_dim != default_head_dim) a.add("--kv-channels", m.head_dim);
  const bool rope = m.position_embedding == PositionEmbedding::kRope;
  a.add("--position-embedding-type", rope ? "rope" : "learned_absolute");
  // validate_args asserts max_position_embeddings >= seq_length.
  a.add("--max-position-embeddings",
        rope ? std::max(m.max_position_embeddings, c.training.seq_len) : m.max_position_embeddings);
  if (!rope && m.max_position_embeddings < c.training.seq_len) {
    notes.push_back("Megatron-LM requires --max-position-embeddings >= --seq-length");
  }
  if (rope && m.max_position_embeddings > 0) {
    notes.push_back("model.max_position_embeddings " + str(m.max_position_embeddings) +
                    " is read back only with learned position embeddings (rope has no position table)");
  }
  a.add("--normalization", m.norm == Norm::kRmsNorm ? "RMSNorm" : "LayerNorm");
  a.add_if(m.activation == Activation::kSwiglu, "--swiglu");
  a.add_if(m.activation == Activation::kSquaredRelu, "--squared-relu");
  if (m.activation == Activation::kGeglu) {
    notes.push_back("model.activation \"geglu\" has no Megatron-LM flag at core_v0.14.0 (gated GELU, "
                    "ffn width as given): the flags say gelu");
  }
  a.add_if(!m.tie_embeddings, "--untie-embeddings-and-output-weights");
  a.add_if(!m.linear_bias, "--disable-bias-linear");
  a.add_if(m.qk_layernorm, "--qk-layernorm");
  if (m.mtp_num_layers > 0) a.add("--mtp-num-layers", m.mtp_num_layers);
  if (m.sliding_window_tokens > 0) {
    a.add("--window-size", str(m.sliding_window_tokens) + ",0");
    if (m.full_attention_every_n_layers > 0) {
      a.add("--window-attn-skip-freq", m.full_attention_every_n_layers);
    }
  }
  if (m.make_vocab_size_divisible_by != 128) {
    a.add("--make-vocab-size-divisible-by", m.make_vocab_size_divisible_by);
  }
  // _NullTokenizer has vocab_size + 1 entries (its end-of-document token).
  a.add("--tokenizer-type", "NullTokenizer");
  a.add("--vocab-size", m.vocab_size - 1);
  notes.push_back("--tokenizer-type NullTokenizer --vocab-size " + str(m.vocab_size - 1) +
                  " stands for a tokenizer of " + str(m.vocab_size) +
                  " entries: use your tokenizer's flags instead");
  // Megatron-LM's own dropout defaults are 0.1: always written.
  a.add("--attention-dropout", nlohmann::json(c.training.attention_dropout).dump());
  a.add("--hidden-dropout", nlohmann::json(c.training.hidden_dropout).dump());
  if (m.moe) {
    a.add("--num-experts", m.moe->num_experts);
    a.add("--moe-router-topk", m.moe->top_k);
    a.add("--moe-ffn-hidden-size", m.moe->expert_ffn_hidden_size);
    if (m.moe->shared_expert_ffn_hidden_size > 0) {
      a.add("--moe-shared-expert-intermediate-size", m.moe->shared_expert_ffn_hidden_size);
    }
    if (!m.moe->layer_pattern.empty()) {
      a.add("--moe-layer-freq", layer_pattern_expression(m.moe->layer_pattern));
    } else if (m.moe->num_dense_layers > 0) {
      a.add("--moe-layer-freq", "([0]*" + str(m.moe->num_dense_layers) + "+[1]*" +
                                    str(m.num_layers - m.moe->num_dense_layers) + ")");
    }
    if (m.moe->router_num_groups > 0) a.add("--moe-router-num-groups", m.moe->router_num_groups);
    if (m.moe->router_group_topk > 0) a.add("--moe-router-group-topk", m.moe->router_group_topk);
    a.add("--moe-grouped-gemm");
    const MoeTrainingSpec& moe = c.training.moe;
    a.add("--moe-token-dispatcher-type", moe.dispatcher == MoeDispatcher::kFlex ? "flex" : "alltoall");
    if (moe.dispatcher == MoeDispatcher::kFlex) {
      // core_v0.14.0's flex dispatcher asserts --moe-enable-deepep (token_dispatcher.py); later
      // releases accept it as a deprecated spelling of the default DeepEP backend. Its SM count
      // defaults to 20 there, as here; later releases route it to moe_flex_dispatcher_num_sms.
      a.add("--moe-enable-deepep");
      if (moe.flex_dispatcher_num_sms != MoeTrainingSpec{}.flex_dispatcher_num_sms) {
        a.add("--moe-deepep-num-sms", moe.flex_dispatcher_num_sms);
      }
    }
  }
}

void recompute_args(const RecomputeSpec& r, ArgList& a, std::vector<std::string>& notes) {
  if (r.granularity == RecomputeGranularity::kFull) {
    a.add("--recompute-granularity", "full");
    a.add("--recompute-method", r.method == RecomputeMethod::kUniform ? "uniform" : "block");
    a.add("--recompute-num-layers", r.num_layers);
    return;
  }
  if (r.granularity != RecomputeGranularity::kSelective) return;
  std::vector<std::string> modules;
  for (const RecomputeModule module : r.modules) {
    if (module <= RecomputeModule::kSharedExperts) {
      modules.emplace_back(schema::recompute_module_names().of(module));
    } else {
      notes.push_back(std::string("recompute.modules \"") + schema::recompute_module_names().of(module) +
                      "\" is SimuMax's and has no Megatron-LM flag");
    }
  }
  if (r.num_layers > 0) {
    notes.push_back("recompute.num_layers " + str(r.num_layers) +
                    " (selective recompute in the first layers of each chunk) has no Megatron-LM flag");
  }
  if (r.keep_tail_outputs) notes.push_back("recompute.keep_tail_outputs has no Megatron-LM flag");
  if (modules.empty()) return;
  a.add("--recompute-granularity", "selective");
  a.add("--recompute-modules");
  for (auto& module : modules) a.add(module.c_str());
}

void parallel_args(const Config& c, ArgList& a, std::vector<std::string>& notes) {
  const TrainingSpec& t = c.training;
  const ParallelSpec& p = t.parallel;
  a.add("--tensor-model-parallel-size", p.tp);
  a.add("--pipeline-model-parallel-size", p.pp);
  if (p.cp != 1) a.add("--context-parallel-size", p.cp);
  if (c.model.moe) {
    if (p.ep != 1) a.add("--expert-model-parallel-size", p.ep);
    if (p.etp != p.tp) a.add("--expert-tensor-parallel-size", p.etp);
  }
  a.add_if(p.sequence_parallel && p.tp > 1, "--sequence-parallel");
  if (p.sequence_parallel && p.tp == 1) {
    notes.push_back("sequence_parallel is dropped: Megatron-LM disables it when tp is 1");
  }
  if (p.scatter_gather_tensors_in_pipeline) {
    notes.push_back("scatter_gather_tensors_in_pipeline is dropped: Megatron-Core sends whole "
                    "stage-boundary tensors from every tensor-parallel rank (the split was Megatron-LM's "
                    "until 2023-03)");
  }
  if (p.schedule != PipelineSchedule::kOneFOneB) {
    notes.push_back("training.pipeline_schedule \"" + schema::pipeline_schedule_names().of(p.schedule) +
                    "\" is not a Megatron-LM schedule (zero-bubble: sail-sg/zero-bubble-pipeline-"
                    "parallelism; DualPipe: deepseek-ai/DualPipe); the flags describe the same "
                    "model split");
  }
  if (!p.layout.empty()) {
    a.add("--pipeline-model-parallel-layout", format_pipeline_layout(p.layout));
  } else if (p.vpp > 1) {
    a.add("--num-virtual-stages-per-pipeline-rank", p.vpp);
  }
  if (p.num_layers_in_first_stage) a.add("--decoder-first-pipeline-num-layers", *p.num_layers_in_first_stage);
  if (p.num_layers_in_last_stage) a.add("--decoder-last-pipeline-num-layers", *p.num_layers_in_last_stage);
  a.add_if(p.account_for_embedding_in_pipeline_split, "--account-for-embedding-in-pipeline-split");
  a.add_if(p.account_for_loss_in_pipeline_split, "--account-for-loss-in-pipeline-split");
  if (p.cp > 1 || p.cp_comm_type != CpCommType::kRing) {
    static const char* const kTypes[] = {"a2a", "p2p", "allgather"};
    a.add("--cp-comm-type", kTypes[static_cast<size_t>(p.cp_comm_type)]);
  }
}

void training_args(const Config& c, ArgList& a, std::vector<std::string>& notes) {
  const TrainingSpec& t = c.training;
  a.add("--seq-length", t.seq_len);
  a.add("--micro-batch-size", t.micro_batch_size);
  a.add("--global-batch-size", t.micro_batch_size * t.parallel.dp * t.num_micro_batches);
  parallel_args(c, a, notes);
  recompute_args(t.recompute, a, notes);
  if (t.zero_stage == 1) a.add("--use-distributed-optimizer");
  if (t.zero_stage >= 2) {
    a.add("--use-megatron-fsdp");
    a.add("--data-parallel-sharding-strategy", t.zero_stage == 2 ? "optim_grads" : "optim_grads_params");
    a.add_if(t.fsdp_double_buffer, "--fsdp-double-buffer");
    if (t.fsdp_communication_unit_elements > 0) {
      a.add("--suggested-communication-unit-size", std::to_string(t.fsdp_communication_unit_elements));
    }
  }
  a.add(t.dtype == Dtype::kFp16 ? "--fp16" : "--bf16");
  if (t.dtype == Dtype::kFp8) {
    const char* recipes[] = {"delayed", "tensorwise", "blockwise", "mxfp8"};
    a.add("--fp8-format", t.fp8_recipe == Fp8Recipe::kMxfp8 ? "e4m3" : "hybrid");
    a.add("--fp8-recipe", recipes[static_cast<size_t>(t.fp8_recipe)]);
    a.add_if(t.fp8_param_gather, "--fp8-param-gather");
  }
  if (t.dtype == Dtype::kFp4) {
    a.add("--fp4-format", "e2m1");
    a.add("--fp4-recipe", "nvfp4");
    a.add_if(t.fp8_param_gather, "--fp4-param-gather");
  }
  a.add_if(!t.kernels.fused_bias_dropout, "--no-bias-dropout-fusion");
  a.add_if(!t.kernels.fused_rope, "--no-rope-fusion");
  a.add_if(!t.kernels.fused_softmax, "--no-masked-softmax-fusion");
  a.add_if(c.model.moe && t.kernels.moe_router_fusion, "--moe-router-fusion");
  a.add_if(c.model.moe && t.kernels.moe_permute_fusion, "--moe-permute-fusion");
  if (!c.model.moe && (t.kernels.moe_router_fusion || t.kernels.moe_permute_fusion)) {
    notes.push_back("moe_router_fusion / moe_permute_fusion have no effect on a dense model");
  }
  if (t.cuda_graph.impl != CudaGraphImpl::kNone) {
    const char* impls[] = {"none", "local", "transformer_engine", "full_iteration"};
    const char* modules[] = {"attn", "mlp", "moe", "moe_router", "moe_preprocess"};
    a.add("--cuda-graph-impl", impls[static_cast<size_t>(t.cuda_graph.impl)]);
    if (!t.cuda_graph.modules.empty()) {
      a.add("--cuda-graph-modules");
      for (const CudaGraphModule m : t.cuda_graph.modules) a.add(modules[static_cast<size_t>(m)]);
    }
  }
  if (t.dtype == Dtype::kFp16) {
    a.add_if(!t.grad_reduce_in_bf16, "--accumulate-allreduce-grads-in-fp32");
  } else {
    a.add_if(t.grad_reduce_in_bf16, "--grad-reduce-in-bf16");
  }
  a.add_if(!t.gradient_accumulation_fusion, "--no-gradient-accumulation-fusion");
  a.add_if(t.kernels.fused_cross_entropy, "--cross-entropy-loss-fusion");
  a.add_if(!t.kernels.fused_swiglu, "--no-bias-swiglu-fusion");
  a.add("--attention-backend", t.kernels.flash_attention ? "auto" : "unfused");
  a.add_if(t.overlap.grad_reduce, "--overlap-grad-reduce");
  a.add_if(t.overlap.param_gather, "--overlap-param-gather");
  a.add_if(t.overlap.tp_comm, "--tp-comm-overlap");
  a.add_if(!t.overlap.p2p, "--no-overlap-p2p-communication");
  a.add_if(t.overlap.defer_embedding_wgrad, "--defer-embedding-wgrad-compute");
  if (t.overlap.wgrad_deferral_limit > 0) {
    a.add("--wgrad-deferral-limit", std::to_string(t.overlap.wgrad_deferral_limit));
  }
  a.add_if(t.overlap.moe_ep_comm, "--overlap-moe-expert-parallel-comm");
  a.add_if(t.overlap.delay_wgrad, "--delay-wgrad-compute");
  a.add_if(t.overlap.moe_shared_expert, "--moe-shared-expert-overlap");
  if (t.optimizer_offload_fraction > 0.0) {
    a.add("--optimizer-cpu-offload");
    a.add("--optimizer-offload-fraction", nlohmann::json(t.optimizer_offload_fraction).dump());
    a.add("--use-precision-aware-optimizer");
    a.add_if(t.overlap_cpu_optimizer_d2h_h2d, "--overlap-cpu-optimizer-d2h-h2d");
  } else if (t.overlap_cpu_optimizer_d2h_h2d) {
    notes.push_back("overlap_cpu_optimizer_d2h_h2d has no effect without optimizer_offload_fraction > 0");
  }
  if (t.activation_offload_layers > 0) {
    a.add("--cpu-offloading-num-layers", std::to_string(t.activation_offload_layers));
  }
  if (c.model.moe && t.moe.capacity_factor > 0.0) {
    a.add("--moe-expert-capacity-factor", nlohmann::json(t.moe.capacity_factor).dump());
  }
  a.add_if(c.model.moe && t.moe.pad_to_capacity, "--moe-pad-expert-input-to-capacity");
  if (c.model.moe) {
    const MoeTrainingSpec moe_defaults;
    if (t.moe.load_balancing != moe_defaults.load_balancing) {
      a.add("--moe-router-load-balancing-type", schema::moe_load_balancing_names().of(t.moe.load_balancing));
    }
    if (t.moe.aux_loss_coeff > 0.0) a.add("--moe-aux-loss-coeff", nlohmann::json(t.moe.aux_loss_coeff).dump());
    a.add_if(t.moe.expert_bias, "--moe-router-enable-expert-bias");
    if (t.moe.router_fp32) a.add("--moe-router-dtype", "fp32");
    if (t.moe.routing_imbalance != moe_defaults.routing_imbalance) {
      notes.push_back("training.moe_routing_imbalance describes the routing, not a Megatron-LM flag");
    }
  }
  if (!t.kernels.fused_norm) notes.push_back("fused_norm false has no Megatron-LM flag");
  if (t.moe.permute_probs_fused) notes.push_back("moe_permute_probs_fused has no Megatron-LM flag");
  // Allocator and NCCL settings are environment variables of the launch, not flags.
  if (t.expandable_segments) {
    notes.push_back("training.expandable_segments: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True in the "
                    "launch environment (not a Megatron-LM flag)");
  }
  if (!t.nccl_nvls) {
    notes.push_back("training.nccl_nvls false: set NCCL_NVLS_ENABLE=0 in the launch environment (not a Megatron-LM flag)");
  }
  if (t.train_tokens > 0.0) {
    notes.push_back("train_tokens is not a Megatron-LM flag (set --train-samples or --train-iters)");
  }
  const TrainingSpec defaults;
  if (t.te_version_major != defaults.te_version_major || t.te_version_minor != defaults.te_version_minor) {
    notes.push_back("te_version " + str(t.te_version_major) + "." + str(t.te_version_minor) +
                    " is the installed Transformer Engine, not a flag");
  }
}

void launcher_args(const SystemSpec& s, ArgList& a, std::vector<std::string>& notes) {
  int64_t per_node = std::gcd(s.num_gpus, s.gpus_per_node);
  if (s.num_gpus < s.gpus_per_node) per_node = s.num_gpus;
  if (per_node != s.gpus_per_node && s.num_gpus >= s.gpus_per_node) {
    notes.push_back(str(s.num_gpus) + " GPUs do not fill nodes of " + str(s.gpus_per_node) +
                    ": launched as " + str(s.num_gpus / per_node) + " x " + str(per_node));
  }
  a.add("--nnodes", s.num_gpus / per_node);
  a.add("--nproc-per-node", per_node);
  notes.push_back("the system (" + (s.name.empty() ? std::string("custom") : s.name) +
                  ") is not part of Megatron-LM's flags: only the GPU count is");
}

bool needs_quotes(const std::string& value) {
  if (value.empty()) return true;
  for (char c : value) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string("-_./=:,+@%").find(c) == std::string::npos) {
      return true;
    }
  }
  return false;
}

std::string shell_word(const std::string& value) {
  if (!needs_quotes(value)) return value;
  std::string out = "'";
  for (char c : value) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

MegatronCommand megatron_command(const Config& config) {
  MegatronCommand command;
  ArgList launcher(command.launcher_args);
  ArgList args(command.args);
  launcher_args(config.system, launcher, command.notes);
  model_args(config, args, command.notes);
  training_args(config, args, command.notes);
  return command;
}

std::string megatron_command_text(const MegatronCommand& command) {
  std::string text = "torchrun";
  for (const auto& arg : command.launcher_args) text.append(" ").append(shell_word(arg));
  text += " pretrain_gpt.py";
  for (const auto& arg : command.args) {
    text.append(arg.rfind("--", 0) == 0 ? " \\\n    " : " ");
    text.append(arg.rfind("--", 0) == 0 ? arg : shell_word(arg));
  }
  text += '\n';
  return text;
}

}  // namespace trainsim::interop
