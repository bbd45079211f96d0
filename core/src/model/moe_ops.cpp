// The MoE block: shared experts, router (+ load balancing), dispatch, grouped
// expert GEMMs, combine (Megatron-Core moe_layer.py, router.py,
// token_dispatcher.py, experts.py; SimuMax moe_module.py for the memory terms).
#include "model/moe_ops.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "model/mlp_ops.h"
#include "model/param_count.h"

namespace trainsim {
namespace {

double d(int64_t value) { return static_cast<double>(value); }

int64_t up_width(const ModelSpec& m, int64_t ffn) {
  return gated_activation(m.activation) ? 2 * ffn : ffn;
}

double logit_bytes(const OpContext& ctx) { return ctx.training.moe.router_fp32 ? 4.0 : 2.0; }

Op router(const OpFactory& f, const MlpRecompute& r, bool selective) {
  const OpContext& ctx = f.ctx();
  const int64_t h = ctx.model.hidden_size;
  const int64_t experts = ctx.model.moe->num_experts;
  const double tokens = d(ctx.tokens_local());
  const double logit = logit_bytes(ctx);
  Op op;
  op.name = "mlp.router";
  op.kind = OpKind::kRouter;
  // Megatron "layernorm" recompute (transformer_layer.py, CheckpointWithoutOutput):
  // the router reads the discarded pre-MLP norm output, so it keeps no copy, and
  // when it starts a segment of its own (after the shared experts) the norm's
  // segment restores its input. Without the "moe" checkpoint only the norm re-runs
  // (the router is the kept tail); with it the router re-runs with the layer.
  const bool norm_only = r.discard_norm_output && !r.moe;
  op.recompute = r.router || r.discard_norm_output || r.moe;
  op.recompute_tail = norm_only;
  op.segment_end = selective && norm_only;
  op.cache_bytes = r.discard_norm_output ? 0.0 : tokens * d(h) * 2;
  op.fwd_peak_bytes = op.bwd_peak_bytes =
      tokens * d(h) * 2 + tokens * d(experts) * logit + d(h) * d(experts) * 2;
  op.input_bytes = r.discard_norm_output ? 0.0 : tokens * d(h) * 2;
  op.dense_params = d(h) * d(experts);
  // Router GEMM over local tokens, then the score function, top-k and the
  // load-balancing loss over the scores (Megatron-LM moe/router.py TopKRouter,
  // moe_utils.py topk_routing_with_score_function): unfused, score function,
  // top-k, the probability scatter into the routing map, normalisation and the
  // auxiliary loss (tokens per expert, mean, product, sum, scale) are PyTorch
  // kernels of their own, about a dozen forward and ten backward; with
  // --moe-router-fusion TE's fused top-k-with-score-function and fused aux-loss
  // kernels leave the GEMM plus about three per pass.
  // --moe-router-dtype fp32: the GEMM (TE general_gemm, bf16 inputs) writes fp32 logits and
  // the scores and top-k run in fp32 (moe_utils.py RouterGatingLinearFunction).
  const double gemm_bytes = d(h) * d(experts) * 2 + tokens * d(h) * 2 + tokens * d(experts) * logit;
  const double softmax = tokens * d(experts) * logit * (ctx.sp && ctx.tp > 1 ? d(ctx.tp) : 1.0);
  const bool fused = ctx.training.kernels.moe_router_fusion;
  for (int pass = 0; pass < kNumPasses; ++pass) {
    op.cost[pass].flops = 2.0 * tokens * d(h) * d(experts);
    op.cost[pass].compute = ComputeClass::kGemm;
  }
  op.cost[0].bytes = gemm_bytes + (fused ? 2.0 : 6.0) * softmax;
  op.cost[1].bytes = gemm_bytes + (fused ? 3.0 : 8.0) * softmax;
  op.cost[2].bytes = gemm_bytes;
  op.cost[0].kernels = fused ? 4.0 : 13.0;
  op.cost[1].kernels = fused ? 4.0 : 11.0;
  op.cost[2].kernels = 1.0;
  op.gemm = {ctx.b, ctx.seq_gemm, h, experts};
  op.scope = GraphScope::kMoeRouter;
  return op;
}

// Auxiliary load-balancing losses (router.py _apply_aux_loss / _apply_seq_aux_loss /
// _apply_global_aux_loss with moe_utils.py compute_routing_scores_for_aux_loss and
// switch_load_balancing_loss_func): from the logits the scores are recomputed in fp32
// with their own top-k routing map, tokens per expert summed over it, and the loss
// reduces scores x counts; its backward writes the fp32 score gradient and runs the
// score function's backward. Memory-bound passes over [tokens, experts]; the scores are
// kept for backward. Aux-loss-free balancing (router.py, expert_bias) adds the bias to
// the scores before top-k and counts tokens per expert (no backward). The router op
// counts the loss's kernel launches; this op adds its fp32 memory traffic.
Op load_balancing(const OpFactory& f, const MlpRecompute& r) {
  const OpContext& ctx = f.ctx();
  const MoeTrainingSpec& t = ctx.training.moe;
  const double cells = d(ctx.tokens_local()) * d(ctx.model.moe->num_experts);
  const double logit = logit_bytes(ctx);
  Op op;
  op.name = "mlp.router.load_balancing";
  op.kind = OpKind::kRouter;
  op.recompute = r.router || r.moe;
  const bool aux = t.aux_loss_coeff > 0.0 && t.load_balancing != MoeLoadBalancing::kNone;
  if (aux) {
    op.cache_bytes = 4.0 * cells;
    op.fwd_peak_bytes = op.bwd_peak_bytes = (4.0 + 1.0 + 4.0) * cells;
    op.cost[0].bytes = (logit + 4.0 + 1.0) * cells + (1.0 + 4.0) * cells;
    op.cost[1].bytes = 4.0 * cells + (4.0 + 4.0 + logit) * cells;
  }
  if (t.expert_bias) {
    op.fwd_peak_bytes = std::max(op.fwd_peak_bytes, 8.0 * cells);
    op.cost[0].bytes += (4.0 + 4.0 + 1.0) * cells;
    op.cost[0].kernels += 2.0;  // bias add and tokens-per-expert count
  }
  op.scope = GraphScope::kMoeRouter;
  return op;
}

Op grouped_linear(const OpFactory& f, const char* name, int64_t tokens, int64_t k, int64_t n,
                  bool recompute) {
  const OpContext& ctx = f.ctx();
  const int64_t local_experts = ctx.model.moe->num_experts / ctx.ep;
  const double act = ctx.fp8 ? ctx.act_bytes : 2.0;
  Op op;
  op.name = name;
  op.kind = OpKind::kGroupedLinear;
  op.fp8 = ctx.fp8;
  op.format = ctx.format;
  op.scope = GraphScope::kMoeExperts;
  op.recompute = recompute;
  op.cache_bytes = act * d(tokens) * d(k);
  op.fwd_peak_bytes = act * d(tokens) * d(k) + 2.0 * d(tokens) * d(n);
  // fp8 wgrad produces an fp32 weight gradient per local expert before accumulation.
  op.bwd_peak_bytes = op.fwd_peak_bytes + (ctx.fp8 ? 4.0 * d(local_experts) * d(k) * d(n) : 0.0);
  op.input_bytes = act * d(tokens) * d(k);
  op.expert_params = d(local_experts) * d(k) * d(n);
  op.weight_bytes_per_param = ctx.fp8 ? ctx.weight_bytes : 2.0;
  if (ctx.te_dummy_wgrad_grouped) {
    op.wgrad_rows = n;
    op.wgrad_cols = k;
    op.wgrad_grouped = true;
  }
  const double flops = 2.0 * d(tokens) * d(k) * d(n);
  const double weight = d(local_experts) * d(k) * d(n) * act;
  const double input = d(tokens) * d(k) * act;
  const double output = d(tokens) * d(n) * 2.0;
  const double main_grad = ctx.training.gradient_accumulation_fusion ? d(k) * d(n) * 4.0 : 0.0;
  for (int pass = 0; pass < kNumPasses; ++pass) {
    op.cost[pass].flops = flops;
    op.cost[pass].compute = ComputeClass::kGroupedGemm;
  }
  op.cost[0].bytes = input + weight + output;
  op.cost[1].bytes = weight + output + input;
  op.cost[2].bytes = output + input + weight + main_grad;
  // Transformer Engine's GroupedLinear runs one GEMM per local expert
  // (general_grouped_gemm loops over the experts on several streams), so the
  // host launches one kernel per expert and pass, all but the first from that
  // C++ loop (no Python per kernel; each a cuBLASLt call and a stream hand-off).
  // The experts' GEMMs go round Transformer Engine's compute streams (num_compute_streams
  // = 4, transformer_engine/common/util/multi_stream.h).
  for (PassCost& cost : op.cost) {
    cost.kernels = d(local_experts);
    cost.expert_gemm_kernels = std::max(0.0, d(local_experts) - 1.0);
    cost.streams = 4.0;
  }
  op.grouped = {local_experts, tokens / std::max<int64_t>(local_experts, 1), n, k};
  return op;
}

}  // namespace

RoutedTokens routed_tokens(const ModelSpec& model, const TrainingSpec& training, int64_t tokens) {
  const MoeSpec& moe = *model.moe;
  const MoeTrainingSpec& t = training.moe;
  const int64_t balanced = moe.top_k * tokens;
  RoutedTokens out{balanced, balanced};
  if (t.capacity_factor > 0.0) {
    const double capacity = std::ceil(d(balanced) * t.capacity_factor / d(moe.num_experts));
    const double padded = d(moe.num_experts) * capacity;
    if (t.pad_to_capacity) return {static_cast<int64_t>(padded), static_cast<int64_t>(padded)};
    out.sent = std::min(balanced, static_cast<int64_t>(padded));
    out.received = static_cast<int64_t>(
        std::min(std::ceil(d(balanced) * t.routing_imbalance), padded));
    return out;
  }
  if (t.routing_imbalance > 1.0) {
    out.received = static_cast<int64_t>(std::ceil(d(balanced) * t.routing_imbalance));
  }
  return out;
}

void append_moe(OpList& ops, const OpFactory& f, const LayerRecompute& rc) {
  const OpContext& ctx = f.ctx();
  const MoeSpec& moe = *ctx.model.moe;
  const MlpRecompute& r = rc.mlp;
  const int64_t h = ctx.model.hidden_size;
  const int64_t tokens = ctx.tokens_local();
  const double dt = d(tokens);
  const double experts = d(moe.num_experts);
  const bool probs_fused = ctx.training.moe.permute_probs_fused;
  if (moe.shared_expert_ffn_hidden_size > 0) {
    append_dense_mlp(ops, f, rc, moe.shared_expert_ffn_hidden_size, true);
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].name == std::string_view("mlp.shared_experts.linear_fc1")) {
      for (size_t j = i > 0 && ops[i - 1].kind == OpKind::kQuantizer ? i - 1 : i; j < ops.size(); ++j) {
        ops[j].scope = GraphScope::kMoeExperts;
      }
    }
  }
  ops.push_back(router(f, r, rc.selective));
  // The dispatcher copies the tokens-per-expert counts to the host once per
  // layer forward (token_dispatcher.py, _maybe_dtoh_and_synchronize; the
  // AllGather dispatcher's .cpu()): the host waits for the router. A drop-and-pad
  // MoE has static shapes: the all-to-all dispatcher fills its counts with the
  // capacity and never syncs (preprocess: cuda_sync_point stays "no_sync"), and a
  // captured one has no host step at all.
  const bool all_to_all = ctx.training.moe.dispatcher == MoeDispatcher::kAllToAll;
  const bool static_counts = all_to_all && ctx.training.moe.pad_to_capacity;
  ops.back().host_sync = !static_counts && !graph_captured(GraphScope::kMoeExperts, ctx.training);
  // Before that sync the dropless all-to-all dispatcher gathers every rank's
  // tokens-per-expert counts (int64, one per expert) over its tp_ep group
  // (token_dispatcher.py preprocess: gather_from_sequence_parallel_region; drop-and-pad
  // returns before it): a latency-bound collective the router's output waits on.
  // Priced over the expert group; with expert tensor parallelism the real group is
  // etp times larger.
  if (all_to_all && !static_counts && (ctx.ep > 1 || ctx.etp > 1)) {
    ops.back().comms.push_back({Pass::kForward, Collective::kAllGather, CommGroup::kEp,
                                8.0 * experts * d(ctx.ep) * d(ctx.etp)});
    ops.back().recompute_comm = true;
  }
  const MoeTrainingSpec& balance = ctx.training.moe;
  if ((balance.aux_loss_coeff > 0.0 && balance.load_balancing != MoeLoadBalancing::kNone) ||
      balance.expert_bias) {
    ops.push_back(load_balancing(f, r));
  }
  // Dispatch: tokens leave in top_k copies (fewer when dropped); with expert tensor
  // parallelism (and SP) each etp rank sees the etp group's tokens. The all-to-all is
  // priced at the busiest rank's larger side (what it sends or receives).
  const RoutedTokens routed = routed_tokens(ctx.model, ctx.training, tokens);
  const int64_t dispatched = routed.sent;
  const int64_t expert_tokens =
      (ctx.sp && ctx.etp > 1) ? routed_tokens(ctx.model, ctx.training, tokens * ctx.etp).received
                              : routed.received;
  const double td = d(dispatched);
  const double te = d(expert_tokens);
  const double exchanged = d(std::max(routed.sent, routed.received));
  const bool dispatch_rc = r.permute || r.moe;
  Op permute = f.free_op("mlp.token_dispatch", dt * d(h) * 2 + dt * experts * 4, dispatch_rc);
  permute.kind = OpKind::kPermutation;
  permute.cache_bytes = 8.0 * dt * experts;  // routing map and probabilities
  // Working set of the dispatch (megatron/core/transformer/moe/token_dispatcher.py,
  // MoEAlltoAllTokenDispatcher): the permuted tokens [T*k, h] (dispatch_preprocess,
  // moe_utils.permute), the all-to-all or expert-TP all-gather output [T_r, h]
  // (token_dispatch / dispatch_postprocess; with ep = etp = 1 it is the permuted
  // tensor itself) and, with several local experts, the copy sorted by expert
  // (sort_chunks_by_idxs). Backward runs the same steps in reverse.
  const double local_experts = d(moe.num_experts / ctx.ep);
  const double received = (ctx.ep > 1 || ctx.etp > 1) ? te : 0.0;
  const double sorted = local_experts > 1.0 ? te : 0.0;
  permute.fwd_peak_bytes = permute.bwd_peak_bytes = 2.0 * d(h) * (td + received + sorted);
  // Two permutations (tokens into expert order, then chunks by local expert
  // after the all-to-all; moe_utils.py permute, sort_chunks_by_idxs). Fused
  // (--moe-permute-fusion, TE moe_permute) each is a couple of kernels;
  // unfused the index computation (argsort, masks, index_select) is about six,
  // and with several local experts sort_chunks_by_idxs splits and concatenates.
  const bool fused_permute = ctx.training.kernels.moe_permute_fusion;
  const double permute_kernels = (fused_permute ? 2.0 : 6.0) + (local_experts > 1.0 ? 2.0 : 0.0);
  permute.cost[0] = {0.0, 2.0 * (dt * d(h) + td * d(h)) + 2.0 * 2.0 * td * d(h), permute_kernels,
                     ComputeClass::kNone, MemoryClass::kPermuteForward};
  permute.cost[1] = {0.0, 2.0 * (dt * d(h) + td * d(h)) + 2.0 * 2.0 * td * d(h), permute_kernels,
                     ComputeClass::kNone, MemoryClass::kPermuteBackward};
  permute.scope = GraphScope::kMoePreprocess;
  permute.recompute_comm = true;
  if (ctx.ep > 1) {
    for (const Pass pass : {Pass::kForward, Pass::kBackwardData}) {
      permute.comms.push_back({pass, Collective::kAllToAll, CommGroup::kEp, 2.0 * exchanged * d(h)});
      permute.comms.back().routed = true;
      if (probs_fused) {
        permute.comms.push_back({pass, Collective::kAllToAll, CommGroup::kEp, 2.0 * dt * experts});
      }
    }
  }
  if (ctx.etp > 1) {
    const double bytes = 2.0 * td * d(h) * d(ctx.etp);
    permute.comms.push_back({Pass::kForward, Collective::kAllGather, CommGroup::kEtp, bytes});
    permute.comms.push_back({Pass::kBackwardData, Collective::kReduceScatter, CommGroup::kEtp, bytes});
  }
  ops.push_back(permute);
  const int64_t up = up_width(ctx.model, moe.expert_ffn_hidden_size) / ctx.etp;
  const int64_t down = moe.expert_ffn_hidden_size / ctx.etp;
  const bool linear_rc = r.linear || r.moe;
  if (ctx.fp8) {
    Op q = f.quantizer("mlp.experts.linear_fc1", te * d(h), te * d(up), local_experts, linear_rc);
    q.scope = GraphScope::kMoeExperts;
    ops.push_back(q);
  }
  ops.push_back(grouped_linear(f, "mlp.experts.linear_fc1", expert_tokens, h, up, linear_rc));
  const bool act_rc = r.linear || r.moe || r.moe_act;
  Op act = f.activation("mlp.experts.activation", te, down, act_rc);
  if (probs_fused) {
    // Router probabilities are applied inside the expert activation (MCore >= 0.14).
    act.fwd_peak_bytes += 8.0 * dt * experts;
    act.bwd_peak_bytes += 8.0 * dt * experts;
    act.input_bytes += 4.0 * dt * experts;
    act.cost[0].bytes += 2.0 * dt * experts;
    act.cost[1].bytes += 2.0 * dt * experts;
  }
  act.scope = GraphScope::kMoeExperts;
  ops.push_back(act);
  if (ctx.fp8) {
    Op q = f.quantizer("mlp.experts.linear_fc2", te * d(down), te * d(h), local_experts, act_rc);
    q.scope = GraphScope::kMoeExperts;
    ops.push_back(q);
  }
  Op fc2 = grouped_linear(f, "mlp.experts.linear_fc2", expert_tokens, down, h, act_rc);
  if (r.moe_act) fc2.cache_bytes = 0.0;  // the recomputed activation regenerates its input
  fc2.recompute_tail = act_rc && (rc.keep_tail_outputs || r.moe_act);
  ops.push_back(fc2);
  Op combine = f.free_op("mlp.token_combine", 2.0 * te * d(h) + (probs_fused ? 0.0 : 4.0 * dt * experts),
                         dispatch_rc);
  combine.kind = OpKind::kUnpermutation;
  combine.segment_end = rc.selective && dispatch_rc;
  if (probs_fused) {
    combine.fwd_peak_bytes = 2.0 * std::max(te, dt) * d(h);
  } else {
    combine.cache_bytes = 2.0 * te * d(h);
    combine.fwd_peak_bytes = combine.bwd_peak_bytes = 2.0 * (te + dt) * d(h);
  }
  const double unpermute1 = 2.0 * 2.0 * te * d(h);
  const double unpermute2 = 2.0 * (te + dt) * d(h);
  combine.cost[0] = {0.0, unpermute1 + unpermute2, permute_kernels, ComputeClass::kNone,
                     MemoryClass::kPermuteForward};
  combine.cost[1] = {0.0, unpermute1 + unpermute2, permute_kernels, ComputeClass::kNone,
                     MemoryClass::kPermuteBackward};
  combine.scope = GraphScope::kMoeExperts;
  combine.recompute_comm = true;
  if (ctx.etp > 1) {
    const double bytes = 2.0 * te * d(h) * d(ctx.etp);
    combine.comms.push_back({Pass::kForward, Collective::kReduceScatter, CommGroup::kEtp, bytes});
    combine.comms.push_back({Pass::kBackwardData, Collective::kAllGather, CommGroup::kEtp, bytes});
  }
  if (ctx.ep > 1) {
    for (const Pass pass : {Pass::kForward, Pass::kBackwardData}) {
      combine.comms.push_back({pass, Collective::kAllToAll, CommGroup::kEp, 2.0 * exchanged * d(h)});
      combine.comms.back().routed = true;
    }
  }
  ops.push_back(combine);
  if (moe.shared_expert_ffn_hidden_size > 0) {
    // Routed plus shared expert outputs: read two, write one (forward only).
    Op add = f.free_op("mlp.shared_experts_add", 4.0 * dt * d(h), false);
    add.kind = OpKind::kElementwise;
    add.cost[0] = {0.0, 6.0 * dt * d(h), 1.0, ComputeClass::kNone, MemoryClass::kDefault};
    add.scope = GraphScope::kMoeExperts;
    ops.push_back(add);
  }
}


}  // namespace trainsim
