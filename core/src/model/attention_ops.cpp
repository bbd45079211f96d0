// Attention block ops: input norm, QKV (GQA) or the MLA projections, core
// attention, output projection.
#include "model/attention_ops.h"

#include <algorithm>

namespace trainsim {
namespace {

double d(int64_t value) { return static_cast<double>(value); }

struct AttentionDims {
  double rows = 0;         ///< b * gathered sequence
  double heads = 0;        ///< query heads on this tp rank
  double kv_heads = 0;     ///< key/value heads on this tp rank (MLA: = heads)
  int64_t qk_dim = 0;
  int64_t v_dim = 0;
  double score_fraction = 1.0;  ///< share of the causal scores computed (sliding window)
};

// Flash-attention working sets, including context-parallel all-to-all
// (Ulysses-style, TE >= 2.8 keeps the pre-a2a output) and all-gather / ring
// variants. Byte formulas: SimuMax v1.2 CoreAttention (validated against
// Megatron-LM + TE runs); ring (p2p) holds one extra K/V block in flight.
void set_flash_memory(Op& op, const OpContext& ctx, const AttentionDims& a, bool mla,
                      bool input_shared) {
  const double q = a.rows * a.heads * d(a.qk_dim);
  const double k = a.rows * (mla ? a.heads : a.kv_heads) * d(a.qk_dim);
  const double v = a.rows * (mla ? a.heads : a.kv_heads) * d(a.v_dim);
  const double out = a.rows * a.heads * d(a.v_dim) * 2.0;
  const double lse = a.rows * a.heads * 2.0;
  const double qkv = 2.0 * (q + k + v);
  const bool cp_a2a = ctx.cp > 1 && ctx.training.parallel.cp_comm_type == CpCommType::kAllToAll;
  const double saved_out = (ctx.fp8 || (cp_a2a && ctx.te_cp_saves_output)) ? out : 0.0;
  // When q, k, v are stored by a checkpoint (MLA up-projection recompute), only
  // the softmax statistics (and output) are its own.
  op.cache_bytes = (input_shared ? 0.0 : qkv) + lse + saved_out;
  op.fwd_peak_bytes = qkv + lse + out;
  op.bwd_peak_bytes = 2.0 * qkv + lse + out - saved_out;
  if (cp_a2a) {
    const double three = 4.0 * qkv;  // a2a input + output of the three tensors in flight
    op.fwd_peak_bytes =
        std::max({three, 3.0 * qkv + out, 2.0 * qkv + 4.0 * out, qkv + op.cache_bytes});
    const double base = ctx.te_cp_saves_output ? saved_out + 2.0 * out : 4.0 * out;
    const double before = ctx.te_cp_saves_output ? saved_out + 4.0 * out : 8.0 * out;
    op.bwd_peak_bytes =
        std::max({before, 2.0 * qkv + base + 2.0 * q + 2.0 * k, base + three}) - saved_out;
  } else if (ctx.cp > 1) {
    // All-gather CP gathers the other ranks' K/V; ring CP receives one block at a time.
    const double kv = 2.0 * (k + v);
    const double blocks = ctx.training.parallel.cp_comm_type == CpCommType::kAllGather
                              ? d(ctx.cp - 1)
                              : 1.0;
    op.fwd_peak_bytes += kv * blocks;
    op.bwd_peak_bytes += 2.0 * kv * blocks;
  }
}

// Math (unfused) attention keeps the b * heads * s^2 softmax.
void set_math_memory(Op& op, const OpContext& ctx, const AttentionDims& a, bool input_shared) {
  const double q = a.rows * a.heads * d(a.qk_dim);
  const double kv = a.rows * a.kv_heads * d(a.qk_dim);
  const double seq = a.rows / d(ctx.b);
  const double softmax = d(ctx.b) * a.heads * seq * seq;
  const bool shared = input_shared && a.heads == a.kv_heads;
  op.cache_bytes = (shared ? 0.0 : 2.0 * (q + 2.0 * kv)) + 2.0 * softmax;
  op.fwd_peak_bytes = 4.0 * softmax;
  op.bwd_peak_bytes = 8.0 * softmax;
}

// Executed FLOPs, as FlashAttention's benchmarks count them
// (Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py: forward
// 4*b*h*s^2*d, halved when causal; backward 2.5x the forward: the four
// backward matmuls plus the recomputed scores). Per (query, key) pair the
// forward does 2*(d_qk + d_v) FLOPs. A causal flash kernel skips the blocks
// above the diagonal, so it executes the s(s+1)/2 causal pairs; a sliding
// window keeps only its share of them (model/attention_window.h). The unfused
// (math) path multiplies the full s x s score matrix and masks it afterwards
// (Megatron-LM megatron/core/transformer/dot_product_attention.py: baddbmm,
// then the fused scale-mask-softmax), so it executes all s^2 pairs.
// Context parallelism splits the pairs evenly over the cp ranks (all-to-all:
// heads/cp heads over the full sequence; ring / all-gather: s/cp load-balanced
// queries against all keys), so the work per rank is 1/cp of the heads x
// sequence work, never rounded (heads/cp may be a fraction).
void set_attention_costs(Op& op, const OpContext& ctx, const AttentionDims& a, bool mla) {
  const bool flash = ctx.training.kernels.flash_attention;
  const double full_seq = ctx.cp > 1 ? a.rows / d(ctx.b) * d(ctx.cp) : a.rows / d(ctx.b);
  const double causal_pairs = full_seq * (full_seq + 1.0) / 2.0;
  const double pairs = flash ? causal_pairs * a.score_fraction : full_seq * full_seq;
  const double rank_pairs = d(ctx.b) * a.heads * pairs / d(ctx.cp);
  const double forward = 2.0 * rank_pairs * d(a.qk_dim + a.v_dim);
  op.cost[0].flops = forward;
  // Flash recomputes the scores in backward (2.5x forward, the FlashAttention
  // convention); the math path keeps them, so its backward is 2x the forward.
  op.cost[1].flops = (flash ? 2.5 : 2.0) * forward;
  op.cost[0].compute = ComputeClass::kAttentionForward;
  op.cost[1].compute = ComputeClass::kAttentionBackward;
  const double q = a.rows * a.heads * d(a.qk_dim);
  const double k = a.rows * (mla ? a.heads : a.kv_heads) * d(a.qk_dim);
  const double v = a.rows * (mla ? a.heads : a.kv_heads) * d(a.v_dim);
  const double o = a.rows * a.heads * d(a.v_dim);
  const double lse = a.rows * a.heads;
  // Kernels: flash forward is one kernel; its backward three (FlashAttention-2/3
  // bwd: the dO.O preprocessing, the main kernel, the dQ conversion). The math
  // path's score and context GEMMs (two forward, four backward) move the score
  // matrix; its softmax is an op of its own (math_softmax below).
  if (flash) {
    op.cost[0].bytes = 2.0 * (q + k + v + o + lse);
    op.cost[1].bytes = 2.0 * (2 * q + 2 * k + 2 * v + o + lse);
    op.cost[0].kernels = 1.0;
    op.cost[1].kernels = 3.0;
  } else {
    const double sm = a.rows * a.heads * (a.rows / d(ctx.b));
    op.cost[0].bytes = 2.0 * ((q + k + sm) + (sm + v + o));
    op.cost[1].bytes = 2.0 * (2 * (sm + v + o) + 2 * (q + k + sm));
    op.cost[0].kernels = 2.0;
    op.cost[1].kernels = 4.0;
  }
  // Shape of the efficiency lookup (SimuMax's key: heads per rank after tp and
  // cp, full sequence). With fewer heads than cp ranks the key's head count is
  // 0 and no measured entry matches; the work above is unaffected.
  const double kv_heads = mla ? d(ctx.model.num_kv_heads) / d(ctx.tp) : a.kv_heads;
  op.attention = {ctx.b,
                  static_cast<int64_t>(full_seq),
                  static_cast<int64_t>(a.heads / d(ctx.cp)),
                  static_cast<int64_t>(kv_heads / d(ctx.cp)),
                  a.qk_dim,
                  a.v_dim};
  op.attention.rank_heads = a.heads / d(ctx.cp);
  op.attention.causal = flash;
  op.attention.window_fraction = a.score_fraction;
  if (ctx.cp > 1 && ctx.training.parallel.cp_comm_type == CpCommType::kAllToAll) {
    // Ulysses all-to-all: q, k, v in, the output back; backward mirrors it
    // (TE < 2.8 also re-exchanges the output).
    const double kvh = mla ? d(ctx.model.num_kv_heads) / d(ctx.tp) : a.kv_heads;
    const double qb = 2.0 * a.rows * a.heads * d(a.qk_dim);
    const double kb = 2.0 * a.rows * kvh * d(a.qk_dim);
    const double vb = 2.0 * a.rows * kvh * d(a.v_dim);
    const double ob = 2.0 * a.rows * a.heads * d(a.v_dim);
    for (const double bytes : {qb, kb, vb, ob}) {
      op.comms.push_back({Pass::kForward, Collective::kAllToAll, CommGroup::kCp, bytes});
      op.comms.push_back({Pass::kBackwardData, Collective::kAllToAll, CommGroup::kCp, bytes});
    }
    if (!ctx.te_cp_saves_output) {
      op.comms.push_back({Pass::kBackwardData, Collective::kAllToAll, CommGroup::kCp, ob});
    }
  } else if (ctx.cp > 1) {
    // Ring / all-gather: the other cp-1 ranks' K/V blocks cross the cp group. Ring
    // attention (TE's p2p cp_comm_type) exchanges the next block while computing on
    // the current one (Liu et al. 2023, Ring Attention), so it overlaps compute:
    // time/op_time.cpp prices it per ring step on the ring's slowest hop, backward
    // sending dK/dV with K/V (about twice forward's ring traffic).
    const double kv_bytes = 2.0 * (k + v);
    const bool ring = ctx.training.parallel.cp_comm_type == CpCommType::kRing;
    op.comms.push_back({Pass::kForward, Collective::kAllGather, CommGroup::kCp,
                        kv_bytes * d(ctx.cp), ring});
    op.comms.push_back({Pass::kBackwardData, Collective::kReduceScatter, CommGroup::kCp,
                        kv_bytes * d(ctx.cp), ring});
  }
}

// The unfused path's softmax over the b x heads x s x s scores (Megatron-LM
// fusions/fused_softmax.py): scale, causal mask and softmax in one kernel when
// fused (scaled_upper_triang_masked_softmax), three PyTorch kernels when not;
// then the attention dropout (probabilities, 1-byte mask) when p > 0.
Op math_softmax(const OpFactory& f, const AttentionDims& a) {
  const OpContext& ctx = f.ctx();
  const double sm = a.rows * a.heads * (a.rows / d(ctx.b)) / d(ctx.cp);
  const bool fused = ctx.training.kernels.fused_softmax;
  const bool dropout = ctx.training.attention_dropout > 0.0;
  const double forward = (fused ? 4.0 : 12.0) * sm + (dropout ? 5.0 * sm : 0.0);
  const double backward = (fused ? 6.0 : 12.0) * sm + (dropout ? 5.0 * sm : 0.0);
  const double kernels = (fused ? 1.0 : 3.0) + (dropout ? 1.0 : 0.0);
  Op op = f.elementwise("attention.softmax", forward, kernels, backward, kernels);
  return op;
}

Op core_attention(const OpFactory& f, const AttentionDims& a, bool mla, bool recompute,
                  bool input_shared, double input_bytes) {
  const OpContext& ctx = f.ctx();
  Op op;
  op.name = "attention.core_attention";
  op.kind = OpKind::kAttention;
  op.recompute = recompute;
  if (ctx.training.kernels.flash_attention) {
    set_flash_memory(op, ctx, a, mla, input_shared);
  } else {
    set_math_memory(op, ctx, a, input_shared);
  }
  op.input_bytes = input_bytes;
  set_attention_costs(op, ctx, a, mla);
  return op;
}

void append_gqa(OpList& ops, const OpFactory& f, const AttentionRecompute& r, bool keep_tail,
                double score_fraction) {
  const OpContext& ctx = f.ctx();
  const ModelSpec& m = ctx.model;
  const int64_t qkv_width = (m.num_attention_heads + 2 * m.num_kv_heads) * m.head_dim / ctx.tp;
  LinearArgs qkv;
  qkv.name = "attention.linear_qkv";
  qkv.rows = ctx.tokens_local();
  qkv.in_width = m.hidden_size;
  qkv.out_width = qkv_width;
  qkv.recompute = r.q_up || r.discard_norm_output;
  qkv.input_shared = r.discard_norm_output;
  add_linear(ops, f, qkv, false);
  // Megatron "layernorm" recompute alone (transformer_layer.py,
  // CheckpointWithoutOutput around the input norm): only the norm re-runs, so the
  // segment ends at the QKV projection, whose output is kept; core attention's
  // own checkpoint (core_attn) then stores q, k, v as usual.
  const bool norm_only = r.discard_norm_output && !r.q_up;
  ops.back().recompute_tail = norm_only;
  ops.back().segment_end = norm_only;
  AttentionDims dims;
  dims.score_fraction = score_fraction;
  dims.rows = d(ctx.tokens_gemm());
  dims.heads = d(m.num_attention_heads) / d(ctx.tp);
  dims.kv_heads = d(m.num_kv_heads) / d(ctx.tp);
  dims.qk_dim = dims.v_dim = m.head_dim;
  if (m.qk_layernorm) {
    // Qwen3-style per-head RMSNorm on q and k: keeps its q/k input.
    Op norm = f.norm("attention.qk_layernorm",
                     ctx.tokens_gemm() * (m.num_attention_heads + m.num_kv_heads) / ctx.tp,
                     m.head_dim, r.q_up);
    norm.dense_params *= 2.0;  // separate q and k norm weights
    ops.push_back(norm);
  }
  if (m.position_embedding == PositionEmbedding::kRope) {
    append_neutral(ops, f.rope("attention.rotary_emb",
                               dims.rows * (dims.heads + dims.kv_heads) * d(m.head_dim)));
  }
  ops.push_back(core_attention(f, dims, false, r.core, false, dims.rows * d(qkv_width) * 2.0));
  ops.back().recompute_tail = r.core && keep_tail;
  if (!ctx.training.kernels.flash_attention) append_neutral(ops, math_softmax(f, dims));
  LinearArgs out;
  out.name = "attention.linear_out";
  out.rows = ctx.tokens_gemm();
  out.in_width = m.num_attention_heads * m.head_dim / ctx.tp;
  out.out_width = m.hidden_size;
  out.recompute = r.out_proj;
  add_linear(ops, f, out, true);
}

// DeepSeek-V2 multi-latent attention (arXiv:2405.04434, Sec. 2.1.2): low-rank
// query and key/value compressions with their norms, decoupled RoPE keys.
// Down projections are duplicated over tp (they see the gathered sequence);
// up projections are column-parallel over heads.
void append_mla(OpList& ops, const OpFactory& f, const LayerRecompute& rc, double score_fraction) {
  const OpContext& ctx = f.ctx();
  const ModelSpec& m = ctx.model;
  const MlaSpec& mla = *m.mla;
  const AttentionRecompute& r = rc.attention;
  const int64_t heads = m.num_attention_heads / ctx.tp;
  const int64_t qk_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
  const int64_t rows_local = ctx.tokens_local();
  const int64_t rows = ctx.tokens_gemm();
  const bool cp_a2a = ctx.cp > 1 && ctx.training.parallel.cp_comm_type == CpCommType::kAllToAll;
  const bool bypass_up = r.mla_up_proj && cp_a2a;  // TE cannot keep q/k/v across the a2a
  const bool down_segment_end = rc.selective && r.input_norm;
  auto linear = [&](const char* name, int64_t in_rows, int64_t in_width, int64_t out_width,
                    bool recompute, bool gathered, bool input_restored = false) {
    LinearArgs a;
    a.name = name;
    a.rows = in_rows;
    a.in_width = in_width;
    a.out_width = out_width;
    a.recompute = recompute;
    a.gathered_input = gathered;
    a.input_restored = input_restored;
    add_linear(ops, f, a, false);
    return &ops.back();
  };
  // Megatron "layernorm" recompute: the input norm's output is discarded and
  // re-computed in backward (transformer_layer.py, CheckpointWithoutOutput), so
  // the projections reading it store no copy of it, and one that starts a
  // segment of its own stores no checkpoint (the norm's segment restores it).
  const bool discarded_input = r.discard_norm_output;
  if (mla.q_lora_rank == 0) {
    Op* q_proj = linear("attention.linear_q_proj", rows_local, m.hidden_size, heads * qk_dim,
                        r.q_up || discarded_input, false);
    if (discarded_input) {
      q_proj->cache_bytes = 0.0;
      if (!r.q_up) {
        q_proj->recompute_tail = true;
        q_proj->segment_end = down_segment_end;
      }
    }
  } else {
    Op* down = linear("attention.linear_q_down_proj", rows_local, m.hidden_size, mla.q_lora_rank,
                      r.q_down, false);
    down->cache_bytes = r.discard_norm_output ? 0.0 : down->cache_bytes;
    down->segment_end = down_segment_end;
    down->recompute_tail = r.q_down && (rc.keep_tail_outputs || r.discard_norm_output);
    ops.push_back(f.norm("attention.q_layernorm", rows, mla.q_lora_rank, r.q_norm));
    linear("attention.linear_q_up_proj", rows, mla.q_lora_rank, heads * qk_dim, r.q_up, true);
  }
  // The kv down projection shares its input with the q down projection.
  Op* kv_down = linear("attention.linear_kv_down_proj", rows_local, m.hidden_size,
                       mla.kv_lora_rank + mla.qk_rope_head_dim, r.kv_down, false,
                       discarded_input);
  kv_down->cache_bytes = 0.0;
  kv_down->segment_end = down_segment_end;
  kv_down->recompute_tail = r.kv_down && (rc.keep_tail_outputs || r.discard_norm_output);
  const double dr = static_cast<double>(rows);
  // The splits and concats between the projections and core attention are
  // re-run only when the up projections are (mla_up_proj, SimuMax attn_proj):
  // Megatron's core_attn checkpoint wraps core attention alone, its inputs
  // being the finished q, k, v (multi_latent_attention.py forward,
  // _checkpointed_attention_forward), so a core_attn-only segment never
  // stores the latent or up-projected tensors again.
  const bool up_chain = r.core && r.kv_up;
  ops.push_back(f.free_op("attention.kv_split",
                          dr * static_cast<double>(mla.kv_lora_rank + mla.qk_rope_head_dim) * 2,
                          up_chain));
  ops.push_back(f.norm("attention.kv_layernorm", rows, mla.kv_lora_rank, r.kv_norm));
  linear("attention.linear_kv_up_proj", rows, mla.kv_lora_rank,
         heads * (mla.qk_nope_head_dim + mla.v_head_dim), r.kv_up, true);
  const double h = static_cast<double>(heads);
  ops.push_back(f.free_op("attention.kv_up_split",
                          dr * h * static_cast<double>(mla.qk_nope_head_dim + mla.v_head_dim) * 2,
                          up_chain));
  {
    // RoPE on the decoupled rope parts of q (every head) and of the shared k.
    Op rope = f.rope("attention.rotary_emb",
                     dr * (h + 1.0) * static_cast<double>(mla.qk_rope_head_dim));
    rope.input_bytes = dr * static_cast<double>(mla.qk_rope_head_dim) * 2;
    rope.recompute = r.rope;
    ops.push_back(rope);
  }
  ops.push_back(f.free_op("attention.k_rope_concat", dr * h * static_cast<double>(qk_dim) * 2,
                          up_chain));
  const double qkv_input = dr * h * static_cast<double>(2 * qk_dim + mla.v_head_dim) * 2;
  ops.push_back(f.free_op("attention.qkv_concat", qkv_input, up_chain));
  AttentionDims dims;
  dims.score_fraction = score_fraction;
  dims.rows = dr;
  dims.heads = dims.kv_heads = h;
  dims.qk_dim = qk_dim;
  dims.v_dim = mla.v_head_dim;
  const bool core_rc = r.core && !bypass_up;
  ops.push_back(core_attention(f, dims, true, core_rc, r.mla_up_proj && !bypass_up, qkv_input));
  ops.back().recompute_tail =
      core_rc && (rc.keep_tail_outputs || (r.mla_up_proj && !bypass_up));
  if (!ctx.training.kernels.flash_attention) append_neutral(ops, math_softmax(f, dims));
  LinearArgs out;
  out.name = "attention.linear_out_proj";
  out.rows = rows;
  out.in_width = heads * mla.v_head_dim;
  out.out_width = m.hidden_size;
  out.recompute = r.out_proj;
  add_linear(ops, f, out, true);
}

}  // namespace

void append_attention_ops(OpList& ops, const OpFactory& f, const LayerRecompute& rc,
                          double score_fraction) {
  const OpContext& ctx = f.ctx();
  const AttentionRecompute& r = rc.attention;
  const size_t first = ops.size();
  Op norm = f.norm("input_layernorm", ctx.tokens_local(), ctx.model.hidden_size, r.input_norm);
  norm.segment_start = rc.starts_segment;
  ops.push_back(norm);
  if (ctx.model.mla) {
    append_mla(ops, f, rc, score_fraction);
  } else {
    append_gqa(ops, f, r, rc.keep_tail_outputs, score_fraction);
  }
  append_neutral(ops, f.residual_add("attention.residual_add", d(ctx.tokens_local()),
                                     ctx.model.hidden_size));
  for (size_t i = first; i < ops.size(); ++i) ops[i].scope = GraphScope::kAttn;
}

}  // namespace trainsim
