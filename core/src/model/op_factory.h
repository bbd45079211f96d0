// Constructors of the primitive ops (norms, column/row-parallel linears,
// grouped linears, attention, activations, fp8 casts). Each fills the memory
// fields (cache, transient working sets, input) and the cost fields (FLOPs,
// HBM bytes per pass, efficiency-lookup shape, collectives) of one op.
//
// Sources: activation bytes follow what Megatron-Core + Transformer Engine
// save for backward (te/pytorch/module/linear.py saves the pre-gather input
// under sequence parallelism; flash attention saves q, k, v, the output's
// log-sum-exp) as modelled and validated by SimuMax v1.2
// (simumax/core/transformer/dense_module.py); FLOPs are 2*M*N*K per GEMM pass;
// HBM bytes are inputs + weights + outputs (+ the fp32 main-grad with
// gradient-accumulation fusion). Collectives: Korthikanti et al. 2022,
// Sec. 4.2.2 (sequence parallelism: all-gather / reduce-scatter around
// column / row linears).
#pragma once

#include <cstdint>

#include "model/op.h"
#include "model/op_context.h"

namespace trainsim {

struct LinearArgs {
  const char* name = "";
  int64_t rows = 0;        ///< input rows on this rank (b * local sequence)
  int64_t in_width = 0;    ///< K on this rank
  int64_t out_width = 0;   ///< N on this rank
  bool recompute = false;
  bool input_shared = false;  ///< its input is stored by another op: caches nothing
  /// Its input is the output of a norm whose output is discarded and re-computed
  /// in backward (Megatron "layernorm" recompute): as the first op of a recompute
  /// segment it stores no checkpoint of its own (the norm's segment restores it).
  bool input_restored = false;
  bool allow_fp8 = true;      ///< false for the output layer (never fp8)
  bool gathered_input = false;  ///< input is already the full (gathered) sequence: no SP gather
  bool holds_weight = true;     ///< false when the weight is shared (tied output layer, pp = 1)
  GraphScope scope = GraphScope::kNone;  ///< CUDA-graph module of the layer it sits in
};

class OpFactory {
 public:
  explicit OpFactory(const OpContext& ctx) : ctx_(ctx) {}

  // RMSNorm / LayerNorm over `rows` x `width` (TE fused or unfused).
  Op norm(const char* name, int64_t rows, int64_t width, bool recompute) const;
  // fp8 / fp4 quantisation around a low-precision GEMM: its `numel`-element bf16
  // input (forward) and its `grad_numel`-element output gradient (backward);
  // `kernel_copies` launches per kernel (one per expert of a grouped linear).
  Op quantizer(const char* name, double numel, double grad_numel, double kernel_copies,
               bool recompute) const;
  // Column-parallel: input [rows, K] (pre-gather under SP), output [gathered rows, N].
  Op column_linear(const LinearArgs& args) const;
  // Row-parallel: input [gathered rows, K/tp], output [rows, N] (reduce-scattered under SP).
  Op row_linear(const LinearArgs& args) const;
  // SwiGLU / GeLU on [rows, up_width] -> [rows, out_width].
  Op activation(const char* name, double rows, int64_t out_width, bool recompute) const;
  // Zero-cost reshapes (split, concat, views) that can start a recompute segment.
  Op free_op(const char* name, double input_bytes, bool recompute) const;
  // A memory-bound elementwise op that keeps nothing for backward: `bytes` and
  // `kernels` per pass (forward, backward-data).
  Op elementwise(const char* name, double forward_bytes, double forward_kernels,
                 double backward_bytes, double backward_kernels) const;
  // Bias + dropout + residual add after a sublayer's output projection over
  // `rows` x `width` (Megatron-LM fusions/fused_bias_dropout.py), and in
  // backward the residual-gradient add where the two paths meet.
  Op residual_add(const char* name, double rows, int64_t width) const;
  // Rotary embedding applied to `numel` elements of q and k (two tensors).
  Op rope(const char* name, double numel) const;

  const OpContext& ctx() const { return ctx_; }

 private:
  void set_gemm_costs(Op& op, int64_t rows, int64_t k, int64_t n, bool row_parallel) const;
  const OpContext& ctx_;
};

// Appends an op that keeps nothing of its own across a recompute boundary
// without changing the recompute segments around it: it is recomputed exactly
// when its predecessor is and the predecessor does not close its segment.
void append_neutral(OpList& ops, Op op);

// Appends the quantizer (when fp8) and the linear.
void add_linear(OpList& ops, const OpFactory& factory, const LinearArgs& args, bool row_parallel);

}  // namespace trainsim
