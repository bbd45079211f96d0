// MLP half of a transformer layer: pre-MLP norm, then a dense MLP or a MoE
// block (model/moe_ops.cpp).
#include "model/mlp_ops.h"

#include <algorithm>
#include <cmath>

#include "model/moe_ops.h"
#include "model/param_count.h"

namespace trainsim {
namespace {

double d(int64_t value) { return static_cast<double>(value); }

int64_t up_width(const ModelSpec& m, int64_t ffn) {
  return gated_activation(m.activation) ? 2 * ffn : ffn;
}

}  // namespace

// Dense MLP (or the shared experts of a MoE layer): fc1 -> activation -> fc2.
void append_dense_mlp(OpList& ops, const OpFactory& f, const LayerRecompute& rc, int64_t ffn,
                      bool shared) {
  const OpContext& ctx = f.ctx();
  const MlpRecompute& r = rc.mlp;
  const bool checkpointed = shared ? (r.shared || r.moe) : (r.linear || r.dense_mlp);
  // Megatron "layernorm" recompute (transformer_layer.py: the pre-MLP norm runs
  // under CheckpointWithoutOutput, its output is discarded once the MLP has run
  // and re-computed when backward reaches the MLP). With the MLP itself not
  // checkpointed, fc1 keeps its output and only the norm re-runs (fc1 is the
  // segment's kept tail). With "mlp" too, the MLP checkpoint's input is that
  // discarded output: norm, fc1, activation and fc2 form one segment whose
  // checkpoint is the norm's input, and fc1 re-runs with the rest.
  const bool norm_tail = r.discard_norm_output && !shared && !checkpointed;
  LinearArgs fc1;
  fc1.name = shared ? "mlp.shared_experts.linear_fc1" : "mlp.linear_fc1";
  fc1.rows = ctx.tokens_local();
  fc1.in_width = ctx.model.hidden_size;
  fc1.out_width = up_width(ctx.model, ffn) / ctx.tp;
  fc1.recompute = checkpointed || norm_tail;
  // Its input is the discarded norm output (shared experts read it too): no copy of its own.
  fc1.input_shared = r.discard_norm_output && !checkpointed;
  add_linear(ops, f, fc1, false);
  ops.back().recompute_tail = norm_tail;
  ops.push_back(f.activation(shared ? "mlp.shared_experts.activation" : "mlp.activation",
                             d(ctx.tokens_gemm()), ffn / ctx.tp, checkpointed));
  LinearArgs fc2;
  fc2.name = shared ? "mlp.shared_experts.linear_fc2" : "mlp.linear_fc2";
  fc2.rows = ctx.tokens_gemm();
  fc2.in_width = ffn / ctx.tp;
  fc2.out_width = ctx.model.hidden_size;
  fc2.recompute = checkpointed;
  add_linear(ops, f, fc2, true);
  ops.back().recompute_tail = checkpointed && rc.keep_tail_outputs;
}

void append_mlp_ops(OpList& ops, const OpFactory& f, bool moe_layer, const LayerRecompute& rc) {
  const OpContext& ctx = f.ctx();
  const size_t first = ops.size();
  ops.push_back(f.norm("pre_mlp_layernorm", ctx.tokens_local(), ctx.model.hidden_size,
                       rc.mlp.pre_norm));
  if (moe_layer) {
    ops.back().scope = GraphScope::kMoeRouter;
    append_moe(ops, f, rc);
  } else {
    append_dense_mlp(ops, f, rc, ctx.model.ffn_hidden_size, false);
    for (size_t i = first; i < ops.size(); ++i) ops[i].scope = GraphScope::kMlp;
  }
  append_neutral(ops, f.residual_add("mlp.residual_add", d(ctx.tokens_local()), ctx.model.hidden_size));
}

}  // namespace trainsim
