#include "model/layer_ops.h"

#include "model/attention_ops.h"
#include "model/mlp_ops.h"

namespace trainsim {
namespace {

double d(int64_t value) { return static_cast<double>(value); }

}  // namespace

void append_embedding_ops(OpList& ops, const OpFactory& f) {
  const OpContext& ctx = f.ctx();
  const int64_t h = ctx.model.hidden_size;
  const double vocab_rows = d(ctx.vocab / ctx.tp);
  const double tokens = d(ctx.b * ctx.seq_cp);  // the lookup runs before the SP scatter
  Op op;
  op.name = "embedding";
  op.kind = OpKind::kEmbedding;
  op.fwd_peak_bytes = 4.0 * tokens + 2.0 * tokens * d(h);  // int32 ids + output
  op.bwd_peak_bytes = 2.0 * vocab_rows * d(h);             // dense gradient of the table
  op.input_bytes = 4.0 * tokens;
  op.dense_params = vocab_rows * d(h);
  if (ctx.model.position_embedding == PositionEmbedding::kLearned) {
    op.dense_params += d(ctx.model.max_position_embeddings) * d(h);
  }
  // Kernels: the lookup (plus a dropout when hidden_dropout > 0) forward; the
  // dense embedding backward (ATen embedding_dense_backward: sort the ids,
  // count, accumulate) about four.
  op.cost[0].bytes = 4.0 * tokens + 2.0 * vocab_rows * d(h) + 2.0 * tokens * d(h);
  op.cost[0].kernels = ctx.training.hidden_dropout > 0.0 ? 2.0 : 1.0;
  op.cost[2].bytes = 2.0 * vocab_rows * d(h) * 4.0;
  op.cost[2].kernels = 4.0;
  if (ctx.tp > 1) {
    // Vocab-parallel lookup: all-reduce (reduce-scatter under SP) of the output.
    const double bytes = d(ctx.tokens_local()) * d(h) * 2.0;
    op.comms.push_back({Pass::kForward, Collective::kAllReduce, CommGroup::kTp, bytes});
    if (ctx.sp) op.comms.push_back({Pass::kBackwardWeight, Collective::kAllGather, CommGroup::kTp, bytes});
  }
  ops.push_back(op);
}

void append_layer_ops(OpList& ops, const OpFactory& f, bool moe_layer, const LayerRecompute& rc,
                      double attention_fraction) {
  append_attention_ops(ops, f, rc, attention_fraction);
  append_mlp_ops(ops, f, moe_layer, rc);
}

void append_mtp_ops(OpList& ops, const OpFactory& f, bool moe_layer, double attention_fraction,
                    bool holds_embedding_copy, const LayerRecompute& recompute) {
  const OpContext& ctx = f.ctx();
  const int64_t h = ctx.model.hidden_size;
  for (int64_t k = 0; k < ctx.model.mtp_num_layers; ++k) {
    const size_t embedding = ops.size();
    append_embedding_ops(ops, f);
    ops[embedding].name = "mtp.embedding";
    ops[embedding].dense_params =
        holds_embedding_copy && k == 0 ? d(ctx.vocab / ctx.tp) * d(h) : 0.0;
    ops.push_back(f.norm("mtp.enorm", ctx.tokens_local(), h, false));
    ops.push_back(f.norm("mtp.hnorm", ctx.tokens_local(), h, false));
    LinearArgs eh;
    eh.name = "mtp.eh_proj";
    eh.rows = ctx.tokens_local();
    eh.in_width = 2 * h;
    eh.out_width = h / ctx.tp;
    add_linear(ops, f, eh, false);
    append_layer_ops(ops, f, moe_layer, recompute, attention_fraction);
    append_head_ops(ops, f, false);
  }
}

void append_head_ops(OpList& ops, const OpFactory& f, bool holds_output_weight) {
  const OpContext& ctx = f.ctx();
  const int64_t h = ctx.model.hidden_size;
  ops.push_back(f.norm("final_layernorm", ctx.tokens_local(), h, false));
  LinearArgs out;
  out.name = "output_layer";
  out.rows = ctx.tokens_local();
  out.in_width = h;
  out.out_width = ctx.vocab / ctx.tp;
  out.allow_fp8 = false;
  out.holds_weight = holds_output_weight;
  add_linear(ops, f, out, false);
  if (ctx.sp && ctx.tp > 1) {
    // Megatron's output layer is its own ColumnParallelLinear: under sequence
    // parallelism it all-gathers its input into the global memory buffer, a
    // persistent [s/cp, b, h] tensor (megatron/core/tensor_parallel/layers.py,
    // LinearWithGradAccumulationAndAsyncCommunication.forward: get_global_memory_buffer()
    // .get_tensor(..., "mpu"); counted once per stage in memory/stage_statics.h), so the
    // gathered input is not part of its forward working set. Backward re-gathers into
    // the same buffer and needs the full dgrad output of that size instead: unchanged.
    ops.back().fwd_peak_bytes -= d(ctx.tokens_gemm()) * d(h) * 2.0;
  }
  // Vocab-parallel cross-entropy over [b * s, vocab / tp] logits
  // (megatron/core/tensor_parallel/cross_entropy.py; TE/Apex fused variant).
  const double rows = d(ctx.tokens_gemm());
  const double logits = rows * d(ctx.vocab / ctx.tp);
  const bool fused = ctx.training.kernels.fused_cross_entropy;
  Op ce;
  ce.name = "cross_entropy";
  ce.kind = OpKind::kCrossEntropy;
  ce.input_bytes = 2.0 * logits;
  if (fused) {
    ce.cache_bytes = 2.0 * logits;
    ce.fwd_peak_bytes = 2.0 * logits + 16.0 * rows + (ctx.tp > 1 ? 12.0 * rows * d(ctx.tp) : 0.0);
    // Fused (TE / native fused vocab-parallel cross-entropy): about two kernels
    // forward (max, then exp-sum and target logit), one backward.
    ce.cost[0] = {0.0, 4.0 * logits + 4.0 * rows, 2.0, ComputeClass::kNone,
                  MemoryClass::kCrossEntropyFused};
    ce.cost[1] = {0.0, 4.0 * logits + 4.0 * rows, 1.0, ComputeClass::kNone,
                  MemoryClass::kCrossEntropyFused};
  } else {
    // fp32 upcast of the logits is kept for backward.
    ce.cache_bytes = 4.0 * logits;
    ce.fwd_peak_bytes = 6.0 * logits;
    const double b = d(ctx.b);
    // Unfused _VocabParallelCrossEntropy (tensor_parallel/cross_entropy.py):
    // upcast, max, subtract, target mask and gather, exp, sum, log and the
    // loss average are kernels of their own, about ten forward and four backward.
    ce.cost[0] = {0.0, 38.0 * logits + 8.0 * rows + 8.0 * b, 10.0, ComputeClass::kNone,
                  MemoryClass::kCrossEntropy};
    ce.cost[1] = {0.0, 14.0 * logits + 4.0 * b, 4.0, ComputeClass::kNone,
                  MemoryClass::kCrossEntropy};
  }
  if (ctx.tp > 1) {
    // Max-logit all-reduce, then the sum-exp / target-logit all-reduce(s) of fp32 per token.
    ce.comms.push_back({Pass::kForward, Collective::kAllReduce, CommGroup::kTp, rows * 4.0});
    if (fused) {
      ce.comms.push_back({Pass::kForward, Collective::kAllReduce, CommGroup::kTp, 2.0 * rows * 4.0});
    } else {
      ce.comms.push_back({Pass::kForward, Collective::kAllReduce, CommGroup::kTp, rows * 4.0});
      ce.comms.push_back({Pass::kForward, Collective::kAllReduce, CommGroup::kTp, rows * 4.0});
    }
  }
  ops.push_back(ce);
}

}  // namespace trainsim
