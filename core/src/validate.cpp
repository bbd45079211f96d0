// Cross-field rules of a structurally valid Config: the divisibility and
// range constraints Megatron-LM asserts at start-up (megatron/training/
// arguments.py, megatron/core/parallel_state.py, tensor_parallel/layers.py).
#include "validate.h"

#include <algorithm>
#include <utility>
#include <string>
#include <type_traits>

#include "input_limits.h"
#include "model/param_count.h"
#include "model/pipeline_layout.h"
#include "time/schedule_orders.h"
#include "model/precision.h"

namespace trainsim {
namespace {

std::string str(int64_t value) { return std::to_string(value); }

class Checker {
 public:
  explicit Checker(Issues& issues) : issues_(issues) {}
  // message: a string, or a function returning it; the strategy search
  // validates thousands of candidates, so messages are built only on failure.
  template <typename Message>
  void require(bool ok, const char* path, Message&& message) {
    if (ok) return;
    if constexpr (std::is_invocable_v<Message>) {
      issues_.push_back({path, message()});
    } else {
      issues_.push_back({path, std::string(message)});
    }
  }
  // "must divide <what> (<value>), got <divisor>"
  void divides(int64_t divisor, int64_t value, const char* path, const char* what) {
    require(value % divisor == 0, path, [&] {
      return "must divide " + std::string(what) + " (" + str(value) + "), got " + str(divisor);
    });
  }

 private:
  Issues& issues_;
};

void validate_model(const ModelSpec& m, Checker& c) {
  c.require(m.num_kv_heads <= m.num_attention_heads && m.num_attention_heads % m.num_kv_heads == 0,
            "/model/num_kv_heads", [&] {
              return "must divide num_attention_heads (" + str(m.num_attention_heads) + "), got " +
                     str(m.num_kv_heads);
            });
  if (m.moe) {
    c.require(m.moe->top_k <= m.moe->num_experts, "/model/moe/top_k", [&] {
      return "must be at most num_experts (" + str(m.moe->num_experts) + "), got " +
             str(m.moe->top_k);
    });
    c.require(m.moe->num_dense_layers < m.num_layers, "/model/moe/num_dense_layers", [&] {
      return "must be less than num_layers (" + str(m.num_layers) + "), got " +
             str(m.moe->num_dense_layers);
    });
    // Group-limited routing (Megatron-LM transformer_config.py __post_init__).
    const MoeSpec& moe = *m.moe;
    c.require(moe.router_group_topk == 0 || moe.router_num_groups > 0, "/model/moe/router_group_topk",
              "needs router_num_groups (group-limited routing)");
    c.require(moe.router_num_groups == 0 || moe.num_experts % moe.router_num_groups == 0,
              "/model/moe/router_num_groups", [&] {
                return "must divide num_experts (" + str(moe.num_experts) + "), got " +
                       str(moe.router_num_groups);
              });
    c.require(moe.router_group_topk <= moe.router_num_groups || moe.router_num_groups == 0,
              "/model/moe/router_group_topk", [&] {
                return "must be at most router_num_groups (" + str(moe.router_num_groups) +
                       "), got " + str(moe.router_group_topk);
              });
  }
}

void validate_parallel(const Config& config, Checker& c) {
  const ModelSpec& m = config.model;
  const TrainingSpec& t = config.training;
  const ParallelSpec& p = t.parallel;
  c.divides(p.tp, m.num_attention_heads, "/training/tp", "num_attention_heads");
  if (!m.mla) c.divides(p.tp, m.num_kv_heads, "/training/tp", "num_kv_heads");
  c.divides(p.tp, m.ffn_hidden_size, "/training/tp", "ffn_hidden_size");
  if (m.moe && m.moe->shared_expert_ffn_hidden_size > 0) {
    c.divides(p.tp, m.moe->shared_expert_ffn_hidden_size, "/training/tp",
              "shared_expert_ffn_hidden_size");
  }
  const int64_t world = p.tp * p.pp * p.dp * p.cp;
  c.require(world == config.system.num_gpus, "/system/num_gpus", [&] {
    return "must equal tp*pp*dp*cp (" + str(world) + "), got " + str(config.system.num_gpus);
  });
  if (p.sequence_parallel && p.tp > 1) {
    c.divides(p.tp, t.seq_len / p.cp, "/training/tp", "seq_len/cp with sequence_parallel");
  }
  // Megatron-LM megatron/training/arguments.py: "Tensor parallel communication/GEMM
  // overlap can happen only when sequence parallelism is enabled" (TE's userbuffers
  // overlap the sequence-parallel all-gather / reduce-scatter).
  c.require(!t.overlap.tp_comm || p.tp == 1 || p.sequence_parallel, "/training/tp_comm_overlap",
            "needs sequence_parallel when tp > 1 (Megatron-LM refuses --tp-comm-overlap without "
            "--sequence-parallel)");
  if (p.cp > 1) {
    c.divides(2 * p.cp, t.seq_len, "/training/cp",
              "seq_len (context parallelism splits the sequence into 2*cp chunks)");
    // Transformer Engine runs context parallelism only in its flash / fused
    // attention backends: get_attention_backend disables the unfused one when
    // context parallelism is on (NVIDIA/TransformerEngine transformer_engine/
    // pytorch/attention/dot_product_attention/utils.py).
    c.require(t.kernels.flash_attention, "/training/flash_attention", [&] {
      return std::string("must be true with cp > 1 (Transformer Engine's unfused attention does not "
                         "support context parallelism)");
    });
    c.require(
        p.cp_comm_type != CpCommType::kAllToAll || (m.num_attention_heads % (p.tp * p.cp) == 0 &&
                                                    (m.mla || m.num_kv_heads % (p.tp * p.cp) == 0)),
        "/training/cp_comm_type", [&] {
          return "\"a2a\" needs num_attention_heads and num_kv_heads divisible by tp*cp (" +
                 str(p.tp * p.cp) + ")";
        });
  }
  if (m.moe) {
    c.divides(p.ep, m.moe->num_experts, "/training/ep", "num_experts");
    c.divides(p.etp, m.moe->expert_ffn_hidden_size, "/training/etp", "expert_ffn_hidden_size");
    c.require((p.tp * p.cp * p.dp) % (p.ep * p.etp) == 0, "/training/ep", [&] {
      return "ep*etp (" + str(p.ep * p.etp) + ") must divide tp*cp*dp (" + str(p.tp * p.cp * p.dp) +
             ")";
    });
  } else {
    c.require(p.ep == 1, "/training/ep",
              [&] { return "must be 1 for a dense model, got " + str(p.ep); });
    c.require(p.etp == 1, "/training/etp",
              [&] { return "must be 1 for a dense model, got " + str(p.etp); });
  }
  c.require(p.vpp == 1 || p.pp > 1, "/training/vpp", [&] {
    return "must be 1 when pp is 1 (interleaving needs pipeline stages), got " + str(p.vpp);
  });
  if (p.schedule != PipelineSchedule::kOneFOneB) {
    // The limits the reference implementations assert (time/schedule_orders.cpp,
    // schedule_supported: zbpp_utils.py, DualPipe.step, DualPipeV.step).
    const std::string reason = schedule_supported(p.schedule, p.pp, p.vpp, t.num_micro_batches);
    c.require(reason.empty(), "/training/pipeline_schedule", reason);
  }
  // Megatron-LM megatron/training/arguments.py: without p2p overlap the interleaved
  // schedule needs pp > 2, so that no two ranks post several transfers to each other in one
  // batch.
  c.require(p.vpp == 1 || p.schedule != PipelineSchedule::kOneFOneB || t.overlap.p2p || p.pp > 2,
            "/training/overlap_p2p_comm", [&] {
    return "false needs pp > 2 with interleaving (Megatron-LM asserts it), got pp " + str(p.pp);
  });
  // Megatron-LM megatron/core/model_parallel_config.py (__post_init__) refuses deferral
  // without pipeline stages and without gradient-accumulation fusion; only its own 1F1B
  // schedules drain the deferred GEMMs (schedules.py finish_embedding_wgrad_compute).
  if (t.overlap.defer_embedding_wgrad) {
    c.require(p.pp > 1, "/training/defer_embedding_wgrad_compute",
              "needs pp > 1 (Megatron-LM refuses it without pipeline stages)");
    c.require(t.gradient_accumulation_fusion, "/training/defer_embedding_wgrad_compute",
              "needs gradient_accumulation_fusion (Megatron-LM refuses it without)");
    c.require(p.schedule == PipelineSchedule::kOneFOneB, "/training/defer_embedding_wgrad_compute",
              "needs pipeline_schedule 1f1b: only Megatron-LM's 1F1B schedules run the deferred GEMMs");
  } else {
    c.require(t.overlap.wgrad_deferral_limit == 0, "/training/wgrad_deferral_limit",
              "needs defer_embedding_wgrad_compute true (it counts the deferred micro-batches)");
  }
  c.require(p.vpp == 1 || p.schedule != PipelineSchedule::kOneFOneB ||
                t.num_micro_batches % p.pp == 0,
            "/training/vpp", [&] {
    return "interleaving needs the number of micro-batches (" + str(t.num_micro_batches) +
           ") to be a multiple of pp (" + str(p.pp) + ")";
  });
  c.require(p.pp > 1 || (!p.num_layers_in_first_stage && !p.num_layers_in_last_stage),
            "/training/pp", "must be greater than 1 to set num_layers_in_first/last_stage");
  c.require(!t.moe.pad_to_capacity || t.moe.capacity_factor > 0.0, "/training/moe_capacity_factor",
            "must be set when moe_pad_to_capacity is true");
  // The busiest of ep ranks receives at most every routed token.
  c.require(t.moe.routing_imbalance <= static_cast<double>(m.moe ? p.ep : 1),
            "/training/moe_routing_imbalance", [&] {
              return m.moe ? "must be at most ep (" + str(p.ep) +
                                 "): the busiest rank receives at most every routed token"
                           : std::string("must be 1 for a dense model");
            });
  for (const auto& issue : pipeline_layout_issues(m, p)) {
    c.require(false, issue.path.c_str(), issue.message);
  }
}

void validate_recompute(const Config& config, Checker& c) {
  const RecomputeSpec& r = config.training.recompute;
  const ModelSpec& m = config.model;
  for (const auto module : r.modules) {
    if (module == RecomputeModule::kMlaUpProj) {
      c.require(m.mla.has_value(), "/training/recompute/modules",
                "\"mla_up_proj\" needs a model with mla");
    }
    if (module == RecomputeModule::kMoe || module == RecomputeModule::kMoeAct) {
      c.require(m.moe.has_value(), "/training/recompute/modules",
                "\"moe\" and \"moe_act\" need a model with moe");
    }
  }
  if (r.granularity == RecomputeGranularity::kFull) {
    const auto layout = pipeline_layout(m, config.training.parallel);
    int64_t min_chunk_layers = m.num_layers;
    for (const auto& stage : layout) {
      for (const auto& chunk : stage) {
        min_chunk_layers = std::min(min_chunk_layers, chunk.num_layers);
      }
    }
    if (r.method == RecomputeMethod::kUniform) {
      c.require(
          min_chunk_layers % r.num_layers == 0 || r.num_layers >= min_chunk_layers,
          "/training/recompute/num_layers", [&] {
            return "must divide the layers of every pipeline chunk with method \"uniform\", got " +
                   str(r.num_layers);
          });
    }
  }
}

bool has_module(const CudaGraphSpec& g, CudaGraphModule module) {
  return std::find(g.modules.begin(), g.modules.end(), module) != g.modules.end();
}

const char* format_key(GemmFormat format) {
  switch (format) {
    case GemmFormat::kBf16: return "/system/efficiency/gemm/bf16";
    case GemmFormat::kFp8: return "/system/efficiency/gemm/fp8";
    case GemmFormat::kFp8Blockwise: return "/system/efficiency/gemm/fp8_blockwise";
    case GemmFormat::kMxfp8: return "/system/efficiency/gemm/mxfp8";
    case GemmFormat::kNvfp4: return "/system/efficiency/gemm/nvfp4";
  }
  return "";
}

// The FP8 recipe's hardware gate: MXFP8 needs block-scaled tensor cores
// (Transformer Engine quantization.py, compute capability >= 10.0).
void validate_fp8_recipe_gpu(const Config& config, Checker& c) {
  const GpuSpec& gpu = config.system.gpu;
  c.require(config.training.dtype != Dtype::kFp8 || config.training.fp8_recipe != Fp8Recipe::kMxfp8 ||
                gpu.peak_fp4_flops_per_s > 0.0,
            "/training/fp8_recipe", [&] {
              return "\"mxfp8\" needs block-scaled (MX) tensor cores (compute capability >= 10.0; "
                     "system.gpu.peak_tflops.fp4 > 0); " + gpu.name + " has none";
            });
}

// Precision rules. Hardware gates are Transformer Engine's
// (transformer_engine/pytorch/quantization.py: fp8 needs compute capability
// >= 8.9, blockwise >= 9.0, mxfp8 and nvfp4 >= 10.0); a GPU's fp8 / fp4 peaks
// stand for them here (fp4 tensor cores come with the MX block-scaled formats).
// Megatron-LM rules: fp8 parameters need the distributed optimizer
// (arguments.py: --fp8-param-gather); fp4 excludes fp8.
void validate_precision(const Config& config, Checker& c) {
  const TrainingSpec& t = config.training;
  const GpuSpec& gpu = config.system.gpu;
  const bool fp8 = t.dtype == Dtype::kFp8, fp4 = t.dtype == Dtype::kFp4;
  c.require(fp8 || t.fp8_recipe == Fp8Recipe::kDelayed, "/training/fp8_recipe",
            "applies only to dtype \"fp8\" (set dtype or remove fp8_recipe)");
  c.require(fp8 || fp4 || !t.fp8_param_gather, "/training/fp8_param_gather",
            "applies only to dtype \"fp8\" or \"fp4\"");
  // Megatron-FSDP's own buffer settings (Megatron-LM --fsdp-double-buffer,
  // --suggested-communication-unit-size): nothing to set without it.
  c.require(!t.fsdp_double_buffer || t.zero_stage >= 2, "/training/fsdp_double_buffer",
            "needs zero_stage 2 or 3 (Megatron-FSDP)");
  c.require(t.fsdp_communication_unit_elements == 0 || t.zero_stage >= 2,
            "/training/fsdp_communication_unit_elements", "needs zero_stage 2 or 3 (Megatron-FSDP)");
  c.require(!t.fp8_param_gather || t.zero_stage >= 1, "/training/fp8_param_gather",
            "needs the distributed optimizer (zero_stage >= 1), as Megatron-LM requires");
  c.require(!fp8 || gpu.peak_fp8_flops_per_s > 0.0, "/training/dtype", [&] {
    return "\"fp8\" needs a GPU with fp8 tensor cores (system.gpu.peak_tflops.fp8 > 0); " +
           gpu.name + " has none";
  });
  c.require(!fp4 || gpu.peak_fp4_flops_per_s > 0.0, "/training/dtype", [&] {
    return "\"fp4\" (NVFP4) needs a GPU with fp4 tensor cores (system.gpu.peak_tflops.fp4 > 0); " +
           gpu.name + " has none";
  });
  validate_fp8_recipe_gpu(config, c);
  c.require(t.hidden_dropout < 1.0, "/training/hidden_dropout", "must be below 1");
  c.require(t.attention_dropout < 1.0, "/training/attention_dropout", "must be below 1");
}

// Optimizer CPU offload (Megatron-LM HybridDeviceOptimizer,
// megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py): the host figures must be
// stated, and arguments.py refuses --fp8-param-gather with a recipe other than delayed.
void validate_offload(const Config& config, Checker& c) {
  const TrainingSpec& t = config.training;
  if (t.optimizer_offload_fraction <= 0.0) return;
  c.require(config.system.host.stated(), "/training/optimizer_offload_fraction", [&] {
    return "needs the system's host figures (system.host: memory_gib_per_gpu, "
           "memory_bandwidth_gb_per_s_per_gpu, link_gb_per_s); system \"" + config.system.name +
           "\" states none";
  });
  c.require(!t.fp8_param_gather || t.fp8_recipe == Fp8Recipe::kDelayed, "/training/fp8_param_gather",
            "with optimizer_offload_fraction > 0 Megatron-LM needs fp8_recipe \"delayed\"");
}

// NVLink SHARP reduces inside the NVSwitch of one NVLink domain (NCCL's NVLS; it
// spans nodes only through CollNet, which trainsim does not model).
void validate_links(const Config& config, Checker& c) {
  c.require(config.system.inter_node.nvls_all_reduce_efficiency <= 0.0,
            "/system/inter_node/nvls_all_reduce_efficiency",
            "NVLink SHARP serves one NVLink domain: set it on system.intra_node");
  for (const LinkSpec& tier : config.system.intra_node_tiers) {
    c.require(tier.nvls_all_reduce_efficiency <= 0.0, "/system/intra_node_tiers",
              "nvls_all_reduce_efficiency: tiers are PCIe switch levels, without NVLink SHARP");
  }
}

// Activation CPU offload (Megatron-LM --cpu-offloading-num-layers): TransformerConfig
// (megatron/core/transformer/transformer_config.py __post_init__) refuses a count outside
// [0, num_layers), pipeline parallelism, activation recompute and CUDA graphs other than
// full-iteration ones; the copies need the system's host link and memory.
void validate_activation_offload(const Config& config, Checker& c) {
  const TrainingSpec& t = config.training;
  const int64_t n = t.activation_offload_layers;
  if (n <= 0) return;
  const char* path = "/training/activation_offload_layers";
  c.require(n < config.model.num_layers, path, [&] {
    return "must be below the model's " + std::to_string(config.model.num_layers) +
           " layers (Megatron-LM offloads at most all layers but the last)";
  });
  c.require(t.parallel.pp == 1, path, "Megatron-LM has no activation CPU offload with pipeline parallelism (pp must be 1)");
  c.require(t.recompute.granularity == RecomputeGranularity::kNone, path,
            "Megatron-LM refuses activation CPU offload with activation recompute (recompute.granularity must be \"none\")");
  c.require(t.cuda_graph.impl == CudaGraphImpl::kNone || t.cuda_graph.impl == CudaGraphImpl::kFullIteration, path,
            "Megatron-LM supports CUDA graphs with activation CPU offload only as full-iteration graphs");
  c.require(config.system.host.stated(), path, [&] {
    return "needs the system's host figures (system.host: memory_gib_per_gpu, "
           "memory_bandwidth_gb_per_s_per_gpu, link_gb_per_s); system \"" + config.system.name +
           "\" states none";
  });
}

// The flex dispatcher's SM budget: Megatron-LM reads moe_flex_dispatcher_num_sms only in the
// flex dispatcher's backends (megatron/core/transformer/moe/token_dispatcher.py), and the
// kernels cannot hold more SMs than the GPU has.
void validate_flex_dispatcher(const Config& config, Checker& c) {
  const MoeTrainingSpec& moe = config.training.moe;
  const char* path = "/training/moe_flex_dispatcher_num_sms";
  if (moe.dispatcher != MoeDispatcher::kFlex) {
    c.require(moe.flex_dispatcher_num_sms == MoeTrainingSpec{}.flex_dispatcher_num_sms, path,
              "applies only to moe_token_dispatcher \"flex\" (set moe_token_dispatcher or remove "
              "moe_flex_dispatcher_num_sms)");
    return;
  }
  const int64_t gpu_sms = config.system.efficiency.num_sms;  // 0 = not stated
  c.require(gpu_sms == 0 || moe.flex_dispatcher_num_sms <= gpu_sms, path, [&] {
    return "must be at most the GPU's " + str(gpu_sms) + " SMs (system.efficiency.num_sms), got " +
           str(moe.flex_dispatcher_num_sms);
  });
}

// Expert-parallel overlap (Megatron-LM --overlap-moe-expert-parallel-comm, --delay-wgrad-compute,
// --moe-shared-expert-overlap): the refusals of TransformerConfig.__post_init__
// (megatron/core/transformer/transformer_config.py, the overlap_moe_expert_parallel_comm and
// delay_wgrad_compute blocks and the shared-expert checks) and of megatron/training/arguments.py.
// Every trainsim dtype trains on bf16 or fp16 parameters (fp8 / fp4 GEMMs on top), which the
// overlap requires; the dispatchers trainsim models (alltoall, flex) are both allowed.
void validate_ep_overlap(const Config& config, Checker& c) {
  const TrainingSpec& t = config.training;
  const ParallelSpec& p = t.parallel;
  const OverlapSpec& o = t.overlap;
  const RecomputeSpec& r = t.recompute;
  const bool has_moe_module = std::find(r.modules.begin(), r.modules.end(), RecomputeModule::kMoe) != r.modules.end();
  if (o.moe_ep_comm) {
    const char* path = "/training/overlap_moe_expert_parallel_comm";
    c.require(config.model.moe.has_value() && p.ep > 1, path,
              "needs a mixture-of-experts model and ep > 1 (Megatron-LM: only supported with expert model parallelism)");
    c.require(r.granularity != RecomputeGranularity::kFull, "/training/recompute/granularity",
              "Megatron-LM refuses full recompute with overlap_moe_expert_parallel_comm");
    c.require(r.granularity != RecomputeGranularity::kSelective || r.num_layers == 0,
              "/training/recompute/num_layers",
              "must be 0 with overlap_moe_expert_parallel_comm (Megatron-LM refuses recompute_num_layers)");
    c.require(!has_moe_module, "/training/recompute/modules",
              "\"moe\" cannot be recomputed with overlap_moe_expert_parallel_comm (Megatron-LM)");
    c.require(!o.moe_shared_expert, "/training/moe_shared_expert_overlap",
              "cannot be combined with overlap_moe_expert_parallel_comm (Megatron-LM)");
    c.require(config.model.mtp_num_layers <= 1, "/model/mtp_num_layers",
              "must be at most 1 with overlap_moe_expert_parallel_comm (Megatron-LM)");
    c.require(p.pp == 1 || p.vpp > 1, "/training/vpp",
              "must be > 1 with overlap_moe_expert_parallel_comm and pp > 1 (Megatron-LM needs a virtual "
              "pipeline: the combined 1F1B runs in the interleaved schedule)");
    c.require(p.schedule == PipelineSchedule::kOneFOneB, "/training/pipeline_schedule",
              "must be \"1f1b\" with overlap_moe_expert_parallel_comm (Megatron-LM's schedules)");
    const CudaGraphSpec& g = t.cuda_graph;
    c.require(g.impl != CudaGraphImpl::kTransformerEngine ||
                  (!has_module(g, CudaGraphModule::kMoe) && !has_module(g, CudaGraphModule::kMlp)),
              "/training/cuda_graph/modules",
              "\"moe\" and \"mlp\" cannot be captured by transformer_engine graphs with "
              "overlap_moe_expert_parallel_comm (Megatron-LM)");
  }
  if (o.delay_wgrad) {
    c.require(o.moe_ep_comm, "/training/delay_wgrad_compute",
              "needs overlap_moe_expert_parallel_comm (Megatron-LM)");
    const int64_t te = t.te_version_major * 100 + t.te_version_minor;
    c.require(!o.grad_reduce || te >= 208, "/training/te_version",
              "must be at least 2.8 for delay_wgrad_compute with overlap_grad_reduce (Megatron-LM arguments.py)");
    c.require(t.gradient_accumulation_fusion || te >= 207, "/training/te_version",
              "must be at least 2.7 for delay_wgrad_compute without gradient_accumulation_fusion "
              "(Megatron-LM arguments.py)");
  }
  if (o.moe_shared_expert && config.model.moe && config.model.moe->shared_expert_ffn_hidden_size > 0) {
    c.require(std::find(r.modules.begin(), r.modules.end(), RecomputeModule::kSharedExperts) == r.modules.end(),
              "/training/recompute/modules",
              "\"shared_experts\" cannot be recomputed with moe_shared_expert_overlap (Megatron-LM)");
  }
}

// The low-precision GEMM format must have a figure in the system.
void validate_gemm_figures(const Config& config, Checker& c) {
  const GemmFormat format = gemm_format(config.training);
  if (format == GemmFormat::kBf16) return;
  if ((format == GemmFormat::kFp8 || format == GemmFormat::kFp8Blockwise || format == GemmFormat::kMxfp8) &&
      config.system.gpu.peak_fp8_flops_per_s <= 0.0) {
    return;  // reported by validate_precision
  }
  c.require(config.system.efficiency.gemm[static_cast<size_t>(format)] > 0.0, format_key(format),
            "missing: the system has no GEMM efficiency for the precision this training uses");
}

// Megatron-LM's CUDA-graph rules (megatron/core/transformer/transformer_config.py
// __post_init__ and arguments.py).
void validate_cuda_graph(const Config& config, Checker& c) {
  const CudaGraphSpec& g = config.training.cuda_graph;
  const ModelSpec& m = config.model;
  if (g.impl == CudaGraphImpl::kNone) {
    c.require(g.modules.empty(), "/training/cuda_graph/modules", "needs impl other than \"none\"");
    return;
  }
  c.require(g.impl != CudaGraphImpl::kFullIteration || g.modules.empty(),
            "/training/cuda_graph/modules", "must be empty with impl \"full_iteration\"");
  const bool moe_modules = has_module(g, CudaGraphModule::kMoe) ||
                           has_module(g, CudaGraphModule::kMoeRouter) ||
                           has_module(g, CudaGraphModule::kMoePreprocess);
  c.require(!moe_modules || m.moe.has_value(), "/training/cuda_graph/modules",
            "\"moe\", \"moe_router\" and \"moe_preprocess\" need a model with moe");
  c.require(!has_module(g, CudaGraphModule::kMoePreprocess) || has_module(g, CudaGraphModule::kMoeRouter),
            "/training/cuda_graph/modules", "\"moe_preprocess\" needs \"moe_router\"");
  c.require(!(has_module(g, CudaGraphModule::kMoe) && has_module(g, CudaGraphModule::kMoeRouter)),
            "/training/cuda_graph/modules", "\"moe\" and \"moe_router\" cannot both be captured");
  c.require(!has_module(g, CudaGraphModule::kMoe) || config.training.moe.pad_to_capacity,
            "/training/cuda_graph/modules",
            "\"moe\" captures only drop-and-pad MoE (moe_pad_to_capacity): dropless routing has "
            "data-dependent shapes");
  c.require(!has_module(g, CudaGraphModule::kMlp) || !m.moe || num_moe_layers(m) < m.num_layers,
            "/training/cuda_graph/modules", "\"mlp\" needs a dense layer");
  c.require(g.impl == CudaGraphImpl::kFullIteration ||
                config.training.recompute.granularity != RecomputeGranularity::kFull,
            "/training/cuda_graph/impl", "full recompute with CUDA graphs needs \"full_iteration\"");
}

// One group of rules on its own.
template <void (*Rules)(const Config&, Checker&)>
Issues run_rules(const Config& config) {
  Issues issues;
  Checker checker(issues);
  Rules(config, checker);
  return issues;
}

}  // namespace

Issues fp8_recipe_gpu_issues(const Config& config) { return run_rules<validate_fp8_recipe_gpu>(config); }
Issues optimizer_offload_issues(const Config& config) { return run_rules<validate_offload>(config); }
Issues activation_offload_issues(const Config& config) {
  return run_rules<validate_activation_offload>(config);
}

// The probe holds every degree at 1; expert parallelism is what the key needs on
// every plan it matters for (search/choices.cpp: ep > 1), so the rules run with ep 2.
Issues ep_overlap_value_issues(const Config& config) {
  Config probe = config;
  probe.training.parallel.ep = 2;
  return run_rules<validate_ep_overlap>(probe);
}

std::optional<Issue> check_tokens_per_micro_batch(int64_t seq_len, int64_t micro_batch_size,
                                                  const std::string& path) {
  if (seq_len * micro_batch_size <= kMaxTokensPerMicroBatch) return std::nullopt;  // <= 2^56
  return Issue{path, "seq_len*micro_batch_size must be at most " +
                         str(kMaxTokensPerMicroBatch) + " tokens, got " +
                         str(seq_len * micro_batch_size)};
}

std::optional<Issue> check_world_size(const ParallelSpec& p, std::optional<int64_t> dp,
                                      const std::string& prefix) {
  // Each factor is below 2^25, so the partial products stay inside int64 (the
  // plain product of four limits would overflow).
  const std::pair<const char*, int64_t> factors[] = {
      {"tp", p.tp}, {"cp", p.cp}, {"pp", p.pp}, {"dp", dp.value_or(1)}};
  std::string names;
  int64_t product = 1;
  for (const auto& [name, value] : factors) {
    if (!names.empty()) names += '*';
    names += name;
    product *= value;
    if (product > kMaxGpus) {
      return Issue{prefix + "/" + name, names + " must be at most " + str(kMaxGpus) +
                                            " (the largest number of GPUs), got " + str(product)};
    }
  }
  return std::nullopt;
}

void derive_sizes(const SizeRequest& request, TrainingSpec& training, SystemSpec& system,
                  Issues& issues) {
  ParallelSpec& parallel = training.parallel;
  const int64_t model_parallel = parallel.tp * parallel.pp * parallel.cp;
  if (request.dp) {
    parallel.dp = *request.dp;
    if (system.num_gpus == 0) system.num_gpus = model_parallel * parallel.dp;
  } else if (system.num_gpus > 0) {
    if (system.num_gpus % model_parallel != 0) {
      issues.push_back({"/system/num_gpus", "must be a multiple of tp*pp*cp (" + str(model_parallel) +
                                                ") when training.dp is not set, got " +
                                                str(system.num_gpus)});
      return;
    }
    parallel.dp = system.num_gpus / model_parallel;
  } else {
    issues.push_back({"/training/dp", "missing required key (or set /system/num_gpus)"});
    return;
  }
  const int64_t sequences_per_round = training.micro_batch_size * parallel.dp;
  if (request.num_micro_batches) {
    training.num_micro_batches = *request.num_micro_batches;
  } else if (request.global_batch_size) {
    if (*request.global_batch_size % sequences_per_round != 0) {
      issues.push_back({request.batch_path, "must be a multiple of micro_batch_size*dp (" +
                                                str(sequences_per_round) + "), got " +
                                                str(*request.global_batch_size)});
      return;
    }
    training.num_micro_batches = *request.global_batch_size / sequences_per_round;
  }
  // Simulating more passes would take minutes and gigabytes (input_limits.h). In
  // double: pp * vpp * micro-batches can exceed int64 before validation bounds pp * vpp.
  const double passes = static_cast<double>(parallel.pp) * static_cast<double>(parallel.vpp) *
                        static_cast<double>(training.num_micro_batches);
  if (passes > static_cast<double>(kMaxPipelinePasses)) {
    issues.push_back({request.num_micro_batches ? "/training/num_micro_batches" : request.batch_path,
                      "too many micro-batches to simulate: num_micro_batches*pp*vpp must be at most " +
                          str(kMaxPipelinePasses) + ", got " + str(training.num_micro_batches) +
                          "*" + str(parallel.pp) + "*" + str(parallel.vpp)});
  }
}

Issues validate(const Config& config) {
  Issues issues;
  Checker checker(issues);
  validate_model(config.model, checker);
  validate_parallel(config, checker);
  validate_precision(config, checker);
  if (issues.empty()) validate_gemm_figures(config, checker);
  validate_cuda_graph(config, checker);
  validate_offload(config, checker);
  validate_links(config, checker);
  validate_activation_offload(config, checker);
  validate_flex_dispatcher(config, checker);
  validate_ep_overlap(config, checker);
  if (issues.empty()) validate_recompute(config, checker);
  return issues;
}

}  // namespace trainsim
