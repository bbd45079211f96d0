#include "model/op_context.h"

#include "model/param_count.h"
#include "model/precision.h"

namespace trainsim {
namespace {

bool te_at_least(const TrainingSpec& t, int64_t major, int64_t minor) {
  return t.te_version_major > major || (t.te_version_major == major && t.te_version_minor >= minor);
}

}  // namespace

OpContext::OpContext(const ModelSpec& m, const TrainingSpec& t) : model(m), training(t) {
  const ParallelSpec& p = t.parallel;
  b = t.micro_batch_size;
  tp = p.tp;
  cp = p.cp;
  ep = p.ep;
  etp = p.etp;
  sp = p.sequence_parallel;
  seq_cp = t.seq_len / cp;
  seq_local = sp ? seq_cp / tp : seq_cp;
  seq_gemm = sp ? seq_local * tp : seq_local;
  vocab = padded_vocab_size(m, tp);
  format = gemm_format(t);
  fp8 = is_low_precision(format);
  // Quantised operands: fp8 one byte; NVFP4 half a byte plus an e4m3 scale per
  // 16 elements (Transformer Engine docs/features/low_precision_training, NVFP4).
  act_bytes = format == GemmFormat::kNvfp4 ? 0.5 + 1.0 / 16.0 : operand_bytes(format);
  // Weights of low-precision GEMMs are counted at their quantised size, as
  // before fp8_param_gather existed (the memory model is validated against
  // measured runs as it is). Without --fp8-param-gather Transformer Engine in
  // fact keeps the bf16 weight and caches quantised copies
  // (transformer_engine/pytorch/module/linear.py, is_first_microbatch);
  // pricing that belongs to the memory model's own validation.
  weight_bytes = fp8 ? act_bytes : 2.0;
  te_dummy_wgrad = t.gradient_accumulation_fusion && te_at_least(t, 2, 3);
  te_dummy_wgrad_grouped = t.gradient_accumulation_fusion && te_at_least(t, 2, 10);
  te_cp_saves_output = te_at_least(t, 2, 8);
  grad_bytes = t.grad_reduce_in_bf16 ? 2 : 4;
}

bool OpContext::captured(GraphScope scope) const { return graph_captured(scope, training); }

bool graph_captured(GraphScope scope, const TrainingSpec& training) {
  const CudaGraphSpec& g = training.cuda_graph;
  switch (g.impl) {
    case CudaGraphImpl::kNone:
      return false;
    case CudaGraphImpl::kFullIteration:
      // The step is one graph, except what a dropless MoE cannot capture: the
      // token counts are host values (megatron/core/transformer/cuda_graphs.py).
      if (scope == GraphScope::kMoePreprocess || scope == GraphScope::kMoeExperts) {
        return training.moe.pad_to_capacity;
      }
      return true;
    case CudaGraphImpl::kLocal:
    case CudaGraphImpl::kTransformerEngine:
      break;
  }
  auto has = [&](CudaGraphModule m) {
    for (const CudaGraphModule x : g.modules) {
      if (x == m) return true;
    }
    return false;
  };
  // Empty modules: each whole layer, except what a dropless MoE cannot capture
  // (megatron/core/transformer/cuda_graphs.py; the token counts are host values).
  const bool whole_layer = g.modules.empty();
  switch (scope) {
    case GraphScope::kNone:
      return false;
    case GraphScope::kAttn:
      return whole_layer || has(CudaGraphModule::kAttn);
    case GraphScope::kMlp:
      return whole_layer || has(CudaGraphModule::kMlp) || has(CudaGraphModule::kMoe);
    case GraphScope::kMoeRouter:
      return whole_layer || has(CudaGraphModule::kMoeRouter) || has(CudaGraphModule::kMoe);
    case GraphScope::kMoePreprocess:
      return has(CudaGraphModule::kMoePreprocess) || has(CudaGraphModule::kMoe) ||
             (whole_layer && training.moe.pad_to_capacity);
    case GraphScope::kMoeExperts:
      return has(CudaGraphModule::kMoe) || (whole_layer && training.moe.pad_to_capacity);
  }
  return false;
}

}  // namespace trainsim
