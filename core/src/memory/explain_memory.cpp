#include "memory/explain_memory.h"

#include <cctype>
#include <map>
#include <string>

#include "explanation.h"
#include "memory/static_memory.h"
#include "model/shard_groups.h"

namespace trainsim {
namespace {

std::string count_text(double value) { return std::to_string(static_cast<long long>(value)); }

// A term's symbol: letters, digits and '_' only, unique within the formula.
std::string symbol_of(const std::string& name, std::map<std::string, int>& used) {
  std::string out;
  for (const char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "m_" + out;
  const int n = ++used[out];
  return n == 1 ? out : out + "_" + std::to_string(n);
}

const char* buffer_meaning(const std::string& name) {
  if (name == "te_dummy_wgrad") return "TE's bf16 dummy wgrad tensors, one per distinct weight shape";
  if (name == "te_cublas_workspace") return "TE's cuBLAS workspace (32 MiB + 1 KiB on Hopper and newer, else 4 MiB)";
  if (name == "te_cublas_workspace_userbuffers") return "TE's extra cuBLAS workspaces for TP comm overlap";
  if (name == "te_cublas_workspace_grouped") return "TE's grouped-GEMM cuBLAS workspaces (4)";
  if (name == "torch_cublas_workspace") return "PyTorch's cuBLAS workspace (router / output layer GEMMs)";
  if (name == "torch_cublaslt_workspace") return "PyTorch's cuBLASLt workspace";
  if (name == "output_layer_gather_buffer") return "the output layer's sequence-parallel all-gather buffer";
  if (name == "fsdp_gathered_units") return "ZeRO 3: gathered weights of the unit in use and those prefetched (Megatron-FSDP)";
  if (name == "fsdp_unsharded_unit_grads") return "ZeRO 2/3: unsharded gradients queued for their reduce-scatter and being produced (Megatron-FSDP)";
  return "static buffer";
}

// Sum of named tensors, one term per name (their sum over the name's entries).
void add_named(const std::vector<TraceTensor>& tensors, std::map<std::string, double>& sums,
               std::vector<std::string>& order) {
  for (const TraceTensor& t : tensors) {
    if (sums.find(t.name) == sums.end()) order.push_back(t.name);
    sums[t.name] += t.bytes;
  }
}

std::string group_meaning(double divisor, const char* part, int zero_from, int64_t zero_stage,
                          const char* group) {
  if (divisor == 1.0 && zero_stage < zero_from) {
    return std::string("1: ZeRO stage ") + std::to_string(zero_stage) + " keeps " + part + " whole";
  }
  return std::string("ZeRO ") + std::to_string(zero_stage) + " shards " + part + " over the " + group +
         " group";
}

}  // namespace

void explain_stage_allocated(const Config& config, const StageStatics& statics,
                             const ActivationPeakFigures& peak, const StageMemory& s,
                             std::vector<Explanation>& out) {
  const TrainingSpec& t = config.training;
  const ZeroDivisors dense = zero_divisors(t, dense_shard_group(t.parallel));
  const ZeroDivisors expert = zero_divisors(t, expert_shard_group(t.parallel));
  const bool moe = statics.expert_parameters > 0.0;
  const int64_t z = t.zero_stage;
  const char* dense_group = "dp x cp";
  const char* expert_group = "expert data-parallel (tp x dp x cp / (ep x etp))";

  Explanation w{stage_pointer(s.stage, "parameters_bytes"), s.parameters_bytes,
                moe ? "W_dense / g_dense + W_expert / g_expert" : "W_dense / g_dense", {},
                "weights in their GEMM dtype (bf16: 2 B, fp8 weights: 1 B per element), as Megatron-LM "
                "allocates them (megatron/core/distributed/param_and_grad_buffer.py); ZeRO 3 shards them "
                "(Rajbhandari et al. 2020; Megatron-FSDP, megatron/core/distributed/fsdp)"};
  w.terms.push_back(term("W_dense", statics.dense_weight_bytes, "bytes",
                         "dense weights of this stage's layers (" + count_text(statics.dense_parameters) +
                             " elements on this GPU after TP)"));
  w.terms.push_back(term("g_dense", dense.parameters, "count", group_meaning(dense.parameters, "weights", 3, z, dense_group)));
  if (moe) {
    w.terms.push_back(term("W_expert", statics.expert_weight_bytes, "bytes",
                           "routed experts' weights on this GPU (" + count_text(statics.expert_parameters) + " elements)"));
    w.terms.push_back(term("g_expert", expert.parameters, "count", group_meaning(expert.parameters, "weights", 3, z, expert_group)));
  }
  out.push_back(std::move(w));

  const double gb = grad_bytes_per_param(t);
  Explanation g{stage_pointer(s.stage, "gradients_bytes"), s.gradients_bytes,
                moe ? "P_dense * b_grad / g_dense + P_expert * b_grad / g_expert" : "P_dense * b_grad / g_dense", {},
                "main-grad buffer (megatron/core/distributed/param_and_grad_buffer.py: fp32, bf16 with "
                "--grad-reduce-in-bf16); ZeRO 2/3 keep only this rank's shard (Rajbhandari et al. 2020)"};
  g.terms.push_back(term("P_dense", statics.dense_parameters, "count", "dense parameter elements on this GPU"));
  g.terms.push_back(term("b_grad", gb, "bytes/param", t.grad_reduce_in_bf16 ? "bf16 main grads" : "fp32 main grads"));
  g.terms.push_back(term("g_dense", dense.gradients, "count", group_meaning(dense.gradients, "gradients", 2, z, dense_group)));
  if (moe) {
    g.terms.push_back(term("P_expert", statics.expert_parameters, "count", "routed-expert parameter elements on this GPU"));
    g.terms.push_back(term("g_expert", expert.gradients, "count", group_meaning(expert.gradients, "gradients", 2, z, expert_group)));
  }
  out.push_back(std::move(g));

  Explanation o{stage_pointer(s.stage, "optimizer_bytes"), s.optimizer_bytes,
                moe ? "(P_dense * b_adam / g_dense + P_expert * b_adam / g_expert) * (1 - f_off)"
                    : "P_dense * b_adam / g_dense * (1 - f_off)",
                {},
                "mixed-precision Adam: fp32 master weights, exp_avg and exp_avg_sq, 12 B per parameter "
                "(megatron/training/theoretical_memory_usage.py); the distributed optimizer shards them "
                "over the data-parallel group (megatron/core/optimizer/distrib_optimizer.py, ZeRO 1)"};
  o.terms.push_back(term("P_dense", statics.dense_parameters, "count", "dense parameter elements on this GPU"));
  o.terms.push_back(term("b_adam", kOptimizerBytesPerParam, "bytes/param", "fp32 master + exp_avg + exp_avg_sq"));
  o.terms.push_back(term("f_off", config.training.optimizer_offload_fraction, "fraction",
                         "optimizer_offload_fraction: the part of the shard whose states live in host memory "
                         "(megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py)"));
  o.terms.push_back(term("g_dense", dense.optimizer, "count", group_meaning(dense.optimizer, "optimizer states", 1, z, dense_group)));
  if (moe) {
    o.terms.push_back(term("P_expert", statics.expert_parameters, "count", "routed-expert parameter elements on this GPU"));
    o.terms.push_back(term("g_expert", expert.optimizer, "count", group_meaning(expert.optimizer, "optimizer states", 1, z, expert_group)));
  }
  out.push_back(std::move(o));

  std::map<std::string, double> sums;
  std::vector<std::string> order;
  add_named(statics.first_forward, sums, order);
  add_named(statics.first_backward, sums, order);
  Explanation b{stage_pointer(s.stage, "buffers_bytes"), s.buffers_bytes, "", {},
                "TransformerEngine (transformer_engine/pytorch/module/base.py: get_workspace, dummy wgrad "
                "for gradient-accumulation fusion), PyTorch's cuBLAS workspaces (aten/src/ATen/cuda/"
                "CublasHandlePool.cpp), Megatron-FSDP unit buffers (megatron/core/distributed/fsdp/src/"
                "docs/runtime_schedule.md)"};
  std::map<std::string, int> used;
  for (const std::string& name : order) {
    const std::string symbol = symbol_of(name, used);
    b.formula += (b.formula.empty() ? "" : " + ") + symbol;
    b.terms.push_back(term(symbol, sums[name], "bytes", buffer_meaning(name)));
  }
  if (b.formula.empty()) b.formula = "0";
  out.push_back(std::move(b));

  Explanation a{stage_pointer(s.stage, "activations_bytes"), s.activations_bytes,
                peak.one_f_one_b ? "(n - 1) * S + W - T" : "L + W - T", {},
                "tensors each op saves for its backward (Korthikanti et al. 2022, Reducing Activation "
                "Recomputation in Large Transformer Models, section 4, per op as TransformerEngine and "
                "Megatron-LM keep them); micro-batches in flight from the pipeline schedule "
                "(megatron/core/pipeline_parallel/schedules.py)"};
  if (peak.one_f_one_b) {
    a.terms.push_back(term("n", static_cast<double>(s.in_flight_micro_batches), "count",
                           "micro-batches whose activations are alive at the peak (1F1B: min(pp - stage, micro-batches))"));
    a.terms.push_back(term("S", peak.stored_per_chunk_bytes, "bytes", "activations one micro-batch keeps on this stage"));
  } else {
    a.terms.push_back(term("L", peak.others_bytes, "bytes",
                           "activations of the other micro-batch chunks alive at the peak (" +
                               std::to_string(s.in_flight_micro_batches) + " in flight)"));
  }
  a.terms.push_back(term("W", peak.running_bytes, "bytes",
                         "the running micro-batch's live bytes at the peak op" +
                             (s.peak_op.empty() ? std::string() : " (" + s.peak_op + ")") +
                             ", its working set included"));
  a.terms.push_back(term("T", s.transient_bytes, "bytes", "the peak op's working set (the transient part)"));
  out.push_back(std::move(a));

  Explanation tr{stage_pointer(s.stage, "transient_bytes"), s.transient_bytes, "T", {},
                 "outputs and temporaries of the op running at the peak that it does not keep for "
                 "backward (the activation walk over the op's allocations, model/activation_walk.cpp)"};
  tr.terms.push_back(term("T", s.transient_bytes, "bytes",
                          "working set of " + (s.peak_op.empty() ? std::string("the peak op") : s.peak_op)));
  out.push_back(std::move(tr));

  Explanation p{stage_pointer(s.stage, "peak_bytes"), s.peak_bytes, "P + G + O + B + A + T", {},
                "the sum of the parts at the stage's peak, as torch.cuda.max_memory_allocated counts them"};
  p.terms = {term("P", s.parameters_bytes, "bytes", "parameters"), term("G", s.gradients_bytes, "bytes", "gradients"),
             term("O", s.optimizer_bytes, "bytes", "optimizer states"), term("B", s.buffers_bytes, "bytes", "buffers"),
             term("A", s.activations_bytes, "bytes", "activations"), term("T", s.transient_bytes, "bytes", "transient")};
  out.push_back(std::move(p));
}

void explain_stage_device(const StageMemory& s, std::vector<Explanation>& out) {
  const AllocatorReplaySummary& a = s.allocator;
  Explanation r{stage_pointer(s.stage, "reserved_bytes"), s.reserved_bytes, "", {},
                "PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp) replayed over the "
                "stage's allocation trace: reserved = allocated at the reserved peak + the cached, "
                "unused bytes of its segments"};
  if (a.replayed && s.reserved_bytes != s.peak_bytes) {
    r.formula = "A_r + F";
    r.terms = {term("A_r", a.allocated_at_peak_reserved_bytes, "bytes",
                    "allocated when reserved peaked" + (a.peak_reserved_at.empty() ? std::string() : " (at " + a.peak_reserved_at + ")")),
               term("F", s.fragmentation_bytes, "bytes", "reserved but unallocated (fragmentation, cached blocks)")};
  } else {
    r.formula = "P";
    r.terms = {term("P", s.peak_bytes, "bytes",
                    a.replayed ? "the allocated peak (the replay reserved no more)"
                               : "the allocated peak: not replayed, a lower bound")};
  }
  out.push_back(std::move(r));

  Explanation o{stage_pointer(s.stage, "outside_allocator_bytes"), s.outside_allocator_bytes, "", {}, ""};
  std::map<std::string, int> used;
  for (const MemoryTerm& m : s.outside) {
    const std::string symbol = symbol_of(m.name, used);
    o.formula += (o.formula.empty() ? "" : " + ") + symbol;
    o.terms.push_back(term(symbol, m.bytes, "bytes", m.name + " (" + m.source + ")"));
  }
  if (o.formula.empty()) o.formula = "0";
  o.source = "device memory outside PyTorch's allocator: the CUDA context and NCCL's communicator "
             "buffers (nccl src/init.cc computeBuffSizes); each term names its own source";
  out.push_back(std::move(o));

  Explanation d{stage_pointer(s.stage, "device_bytes"), s.device_bytes, "R + X", {},
                "what must fit the usable capacity (nvidia-smi's used memory): the allocator's reserved "
                "bytes plus the memory outside it"};
  d.terms = {term("R", s.reserved_bytes, "bytes", "reserved by the caching allocator"),
             term("X", s.outside_allocator_bytes, "bytes", "outside the allocator")};
  out.push_back(std::move(d));
}

}  // namespace trainsim
