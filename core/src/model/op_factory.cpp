#include "model/op_factory.h"

#include <algorithm>
#include <utility>
#include "model/param_count.h"

namespace trainsim {
namespace {

double d(int64_t value) { return static_cast<double>(value); }

void add_comm(Op& op, Pass pass, Collective collective, CommGroup group, double bytes) {
  op.comms.push_back({pass, collective, group, bytes});
}

void set_memory_pass(Op& op, Pass pass, double bytes, double kernels, double native_kernels = 0.0) {
  PassCost& cost = op.cost[static_cast<int>(pass)];
  cost.bytes = bytes;
  cost.kernels = bytes > 0.0 ? kernels : 0.0;
  cost.native_kernels = bytes > 0.0 ? native_kernels : 0.0;
  cost.compute = ComputeClass::kNone;
}

// HBM bytes (per element of a bf16 input) and kernels of quantising one GEMM
// operand for both GEMM orientations, per recipe (Transformer Engine
// transformer_engine/pytorch/csrc/quantizer.cpp, docs/features/
// low_precision_training/*): delayed scaling casts and transposes in one kernel
// that also records the amax (read 2, write 1 + 1); current (tensorwise)
// scaling reads the tensor twice (amax kernel, scale kernel, quantize kernel);
// 1x128 blockwise and MXFP8 produce rowwise and columnwise copies plus scales
// (4 B per 128 / 1 B per 32 elements and direction) in one kernel; NVFP4 takes
// an amax pass, then writes two 4-bit copies with an e4m3 scale per 16.
struct QuantCost {
  double bytes_per_element;
  double kernels;
};

QuantCost quant_cost(GemmFormat format, Fp8Recipe recipe) {
  switch (format) {
    case GemmFormat::kBf16:
      return {0.0, 0.0};
    case GemmFormat::kFp8:
      return recipe == Fp8Recipe::kTensorwise ? QuantCost{2.0 + 2.0 + 1.0 + 1.0, 3.0}
                                              : QuantCost{2.0 + 1.0 + 1.0, 1.0};
    case GemmFormat::kFp8Blockwise:
      return {2.0 + 1.0 + 1.0 + 2.0 * 4.0 / 128.0, 1.0};
    case GemmFormat::kMxfp8:
      return {2.0 + 1.0 + 1.0 + 2.0 / 32.0, 1.0};
    case GemmFormat::kNvfp4:
      return {2.0 + 2.0 + 0.5 + 0.5 + 2.0 / 16.0, 2.0};
  }
  return {0.0, 0.0};
}

}  // namespace

Op OpFactory::norm(const char* name, int64_t rows, int64_t width, bool recompute) const {
  Op op;
  op.name = name;
  op.kind = OpKind::kNorm;
  op.recompute = recompute;
  const double x = d(rows) * d(width);
  const double r = d(rows);
  if (ctx_.training.kernels.fused_norm) {
    // TE fused RMSNorm saves its bf16 input; rstd (fp32 per row) is transient here.
    op.cache_bytes = 2 * x;
    op.fwd_peak_bytes = 4 * x;
    op.bwd_peak_bytes = 4 * x + 2 * r;
  } else {
    // Unfused: fp32 upcast copies and per-row statistics are kept for backward.
    op.cache_bytes = 2 * (4 * x) + 2 * (4 * r) + 2 * x;
    op.fwd_peak_bytes = op.bwd_peak_bytes = 3 * (4 * x) + 2 * (4 * r);
  }
  op.input_bytes = 2 * x;
  op.dense_params = d(width) * (ctx_.model.norm == Norm::kLayerNorm ? 2.0 : 1.0);
  // HBM traffic (bytes): read input + weight, write output; backward adds rstd.
  // Kernels: TE's fused norm runs one forward kernel and a backward kernel plus
  // the gamma-gradient reduction (transformer_engine/common/normalization); the
  // unfused PyTorch path runs its elementwise steps one kernel each (upcast,
  // square, mean, rsqrt, scale, weight, downcast).
  const double in = 2 * x, weight = 2 * d(width), rstd = 2 * r;
  if (ctx_.training.kernels.fused_norm) {
    set_memory_pass(op, Pass::kForward, in + weight + in, 1);
    set_memory_pass(op, Pass::kBackwardData, in + weight + in + rstd, 1);
    set_memory_pass(op, Pass::kBackwardWeight, in + 2 * weight, 1);
  } else {
    const double in32 = 4 * x;
    set_memory_pass(op, Pass::kForward, (in + in32) + (in32 + in) + 4 * in32 + 4 * rstd + in + weight, 7);
    set_memory_pass(op, Pass::kBackwardData,
                    (in + in32) + (in + in32) + 11 * in32 + 5 * rstd + in + weight, 12);
    set_memory_pass(op, Pass::kBackwardWeight, 2 * in + weight, 2);
  }
  return op;
}

Op OpFactory::quantizer(const char* name, double numel, double grad_numel, double kernel_copies,
                        bool recompute) const {
  Op op;
  op.name = name;
  op.kind = OpKind::kQuantizer;
  op.recompute = recompute;
  op.fwd_peak_bytes = 3 * numel;  // bf16 in, fp8 out
  op.input_bytes = 2 * numel;
  // Forward: the input; backward: the output gradient. The weight is quantised
  // once per step and cached across micro-batches (with fp8 parameters it is
  // stored quantised): not priced per micro-batch. kernel_copies: per-expert
  // launches of a grouped linear (Transformer Engine quantises each expert's split
  // in one C++ call's loop: tex.split_quantize, called from
  // transformer_engine/pytorch/module/_split_quantization.py). Every kernel after
  // the first of that one call is a native launch: the per-expert copies, and
  // the amax and scale kernels that precede a current-scaling or NVFP4 cast
  // (transformer_engine/pytorch/csrc/quantizer.cpp, Float8CurrentScalingQuantizer::
  // quantize_impl: nvte_compute_amax, the amax all-reduce, nvte_compute_scale_from_amax,
  // nvte_quantize_v2, all within one call from Python).
  const QuantCost q = quant_cost(ctx_.format, ctx_.training.fp8_recipe);
  const double native = std::max(0.0, q.kernels * kernel_copies - 1.0);
  set_memory_pass(op, Pass::kForward, q.bytes_per_element * numel, q.kernels * kernel_copies, native);
  set_memory_pass(op, Pass::kBackwardData, q.bytes_per_element * grad_numel, q.kernels * kernel_copies, native);
  if (ctx_.format == GemmFormat::kFp8 && ctx_.training.fp8_recipe == Fp8Recipe::kTensorwise && ctx_.tp > 1 &&
      ctx_.sp) {
    // Current scaling reduces the amax of a sequence-parallel input over the tp
    // group before quantising (quantizer.cpp: allreduce of the amax, waited on).
    add_comm(op, Pass::kForward, Collective::kAllReduce, CommGroup::kTp, 4.0);
    add_comm(op, Pass::kBackwardData, Collective::kAllReduce, CommGroup::kTp, 4.0);
  }
  return op;
}

void OpFactory::set_gemm_costs(Op& op, int64_t rows, int64_t k, int64_t n, bool row_parallel) const {
  const double act = op.fp8 ? ctx_.act_bytes : 2.0;
  const double flops = 2.0 * d(rows) * d(k) * d(n);
  const double weight = d(k) * d(n) * act;
  const double input = d(rows) * d(k) * act;
  const double output = d(rows) * d(n) * 2.0;
  // Gradient-accumulation fusion reads/writes the fp32 main grad in the wgrad GEMM.
  const double main_grad = ctx_.training.gradient_accumulation_fusion ? d(k) * d(n) * 4.0 : 0.0;
  for (int pass = 0; pass < kNumPasses; ++pass) {
    op.cost[pass].flops = flops;
    op.cost[pass].compute = ComputeClass::kGemm;
  }
  op.cost[0].bytes = input + weight + output;
  op.cost[1].bytes = weight + output + input;
  // A row-parallel wgrad reads the (local) input and output grad, not the weight.
  op.cost[2].bytes = output + input + (row_parallel ? 0.0 : weight) + main_grad;
  for (PassCost& cost : op.cost) cost.kernels = 1.0;
  op.gemm = {ctx_.b, rows / ctx_.b, k, n};
  op.row_parallel = row_parallel;
}

Op OpFactory::column_linear(const LinearArgs& a) const {
  Op op;
  op.name = a.name;
  op.kind = OpKind::kLinear;
  op.recompute = a.recompute;
  op.fp8 = ctx_.fp8 && a.allow_fp8;
  op.format = op.fp8 ? ctx_.format : GemmFormat::kBf16;
  const double act = op.fp8 ? ctx_.act_bytes : 2.0;
  const bool gathers = ctx_.sp && !a.gathered_input;
  const int64_t gathered = gathers ? a.rows * ctx_.tp : a.rows;
  // TE saves the pre-gather (sequence-parallel) input and re-gathers it for
  // wgrad; fp8 runs keep the gathered fp8 copy (SimuMax applies this to every
  // column linear of an fp8 run).
  double cache = d(gathered) * d(a.in_width) * act;
  if (gathers && !ctx_.fp8) cache /= d(ctx_.tp);
  op.cache_bytes = a.input_shared ? 0.0 : cache;
  op.fwd_peak_bytes = op.bwd_peak_bytes =
      d(gathered) * d(a.in_width) * act + d(gathered) * d(a.out_width) * 2.0;
  op.input_bytes = d(a.rows) * d(a.in_width) * act;
  op.dense_params = a.holds_weight ? d(a.in_width) * d(a.out_width) : 0.0;
  op.weight_bytes_per_param = op.fp8 ? ctx_.weight_bytes : 2.0;
  if (ctx_.te_dummy_wgrad) {
    op.wgrad_rows = a.out_width;
    op.wgrad_cols = a.in_width;
  }
  set_gemm_costs(op, gathered, a.in_width, a.out_width, false);
  op.recompute_comm = true;
  if (ctx_.tp > 1 && !a.gathered_input) {
    const double bytes = d(gathered) * d(a.in_width) * 2.0;
    // Transformer Engine quantises a sequence-parallel input before gathering
    // it, so fp8 / fp4 runs all-gather the low-precision copy
    // (transformer_engine/pytorch/module/linear.py, layernorm_linear.py: the
    // input quantizer runs before gather_along_first_dim); gradients stay bf16.
    const double gather_bytes = d(gathered) * d(a.in_width) * act;
    if (ctx_.sp) {
      add_comm(op, Pass::kForward, Collective::kAllGather, CommGroup::kTp, gather_bytes);
      add_comm(op, Pass::kBackwardData, Collective::kReduceScatter, CommGroup::kTp, bytes);
      add_comm(op, Pass::kBackwardWeight, Collective::kAllGather, CommGroup::kTp, gather_bytes);
    } else {
      add_comm(op, Pass::kBackwardData, Collective::kAllReduce, CommGroup::kTp, bytes);
    }
  }
  return op;
}

Op OpFactory::row_linear(const LinearArgs& a) const {
  Op op;
  op.name = a.name;
  op.kind = OpKind::kLinear;
  op.recompute = a.recompute;
  op.fp8 = ctx_.fp8 && a.allow_fp8;
  op.format = op.fp8 ? ctx_.format : GemmFormat::kBf16;
  const double act = op.fp8 ? ctx_.act_bytes : 2.0;
  op.cache_bytes = a.input_shared ? 0.0 : d(a.rows) * d(a.in_width) * act;
  op.fwd_peak_bytes = op.bwd_peak_bytes =
      d(a.rows) * d(a.in_width) * act + d(a.rows) * d(a.out_width) * 2.0;
  op.input_bytes = d(a.rows) * d(a.in_width) * act;
  op.dense_params = d(a.in_width) * d(a.out_width);
  op.weight_bytes_per_param = op.fp8 ? ctx_.weight_bytes : 2.0;
  if (ctx_.te_dummy_wgrad) {
    op.wgrad_rows = a.out_width;
    op.wgrad_cols = a.in_width;
  }
  set_gemm_costs(op, a.rows, a.in_width, a.out_width, true);
  op.recompute_comm = true;
  if (ctx_.tp > 1) {
    const double bytes = d(a.rows) * d(a.out_width) * 2.0;
    if (ctx_.sp) {
      add_comm(op, Pass::kForward, Collective::kReduceScatter, CommGroup::kTp, bytes);
      add_comm(op, Pass::kBackwardData, Collective::kAllGather, CommGroup::kTp, bytes);
    } else {
      add_comm(op, Pass::kForward, Collective::kAllReduce, CommGroup::kTp, bytes);
    }
  }
  return op;
}

Op OpFactory::activation(const char* name, double rows, int64_t out_width, bool recompute) const {
  Op op;
  op.name = name;
  op.kind = OpKind::kActivation;
  op.recompute = recompute;
  const double out = rows * d(out_width) * 2.0;  // output bytes
  if (gated_activation(ctx_.model.activation)) {
    // Fused SwiGLU saves its (2x wide) input; unfused also keeps an intermediate. GeGLU
    // (Megatron-LM fused_bias_geglu.py) has the same shapes and kernels, with a GELU gate.
    // (fused_swiglu stands for Megatron's bias-activation fusion of either.)
    op.cache_bytes = (ctx_.training.kernels.fused_swiglu ? 2.0 : 3.0) * out;
    op.fwd_peak_bytes = op.bwd_peak_bytes = 3.0 * out;
    op.input_bytes = 2.0 * out;
    // Fused: Megatron's bias_swiglu_impl (one jit kernel per pass); unfused:
    // chunk, silu and multiply as separate PyTorch kernels (forward 2,
    // backward 4: silu', two products, the concatenated gradient).
    const bool fused = ctx_.training.kernels.fused_swiglu;
    set_memory_pass(op, Pass::kForward, fused ? 3.0 * out : 5.0 * out, fused ? 1 : 2);
    set_memory_pass(op, Pass::kBackwardData, fused ? 3.0 * out : 8.0 * out, fused ? 1 : 4);
  } else if (ctx_.model.activation == Activation::kSquaredRelu) {
    // Megatron-LM squared_relu (megatron/core/activations.py): pow(relu(x), 2), two
    // unfused PyTorch kernels; both backward functions use the relu output, saved once.
    op.cache_bytes = out;
    op.fwd_peak_bytes = op.bwd_peak_bytes = 2.0 * out;
    op.input_bytes = out;
    set_memory_pass(op, Pass::kForward, 4.0 * out, 2);
    set_memory_pass(op, Pass::kBackwardData, 6.0 * out, 3);
  } else {
    op.cache_bytes = 3.0 * out;
    op.fwd_peak_bytes = op.bwd_peak_bytes = 2.0 * out;
    op.input_bytes = out;
    set_memory_pass(op, Pass::kForward, 2.0 * out, 1);
    set_memory_pass(op, Pass::kBackwardData, 2.0 * out, 1);
  }
  return op;
}

Op OpFactory::free_op(const char* name, double input_bytes, bool recompute) const {
  Op op;
  op.name = name;
  op.kind = OpKind::kFree;
  op.recompute = recompute;
  op.input_bytes = input_bytes;
  return op;
}

Op OpFactory::elementwise(const char* name, double forward_bytes, double forward_kernels,
                          double backward_bytes, double backward_kernels) const {
  Op op;
  op.name = name;
  op.kind = OpKind::kElementwise;
  set_memory_pass(op, Pass::kForward, forward_bytes, forward_kernels);
  set_memory_pass(op, Pass::kBackwardData, backward_bytes, backward_kernels);
  return op;
}

Op OpFactory::residual_add(const char* name, double rows, int64_t width) const {
  // Forward: read the sublayer output and the residual, write the sum (plus the
  // bias and a 1-byte dropout mask when they exist); fused it is one jit kernel
  // (bias_dropout_add_fused_train), unfused one PyTorch kernel per step.
  // Dropout with p = 0 returns its input (ATen dropout), so it costs nothing.
  // Backward: the dropout mask applied to the gradient, the bias gradient
  // reduction, and the add of the residual path's gradient to the sublayer's.
  const double x = rows * d(width);
  const bool dropout = ctx_.training.hidden_dropout > 0.0;
  const bool bias = ctx_.model.linear_bias;
  const bool fused = ctx_.training.kernels.fused_bias_dropout;
  const double forward_bytes = 6.0 * x + (dropout ? x : 0.0) + (bias ? 2.0 * d(width) : 0.0);
  const double forward_kernels = fused ? 1.0 : 1.0 + (dropout ? 1.0 : 0.0) + (bias ? 1.0 : 0.0);
  const double backward_bytes = 6.0 * x + (dropout ? 5.0 * x : 0.0) + (bias ? 2.0 * x : 0.0);
  const double backward_kernels = 1.0 + (dropout ? 1.0 : 0.0) + (bias ? 1.0 : 0.0);
  Op op = elementwise(name, forward_bytes, forward_kernels, backward_bytes, backward_kernels);
  op.cache_bytes = dropout ? x : 0.0;  // the dropout mask (1 byte per element)
  return op;
}

Op OpFactory::rope(const char* name, double numel) const {
  // Read and write q and k once each: Transformer Engine's fused RoPE is one
  // kernel per tensor and pass (fused_apply_rotary_pos_emb); unfused,
  // Megatron-Core's _apply_rotary_pos_emb_bshd runs cos, sin, rotate_half
  // (two slices, a negation, a concat) and the multiply-adds, about five
  // kernels per tensor reading and writing it each time.
  const bool fused = ctx_.training.kernels.fused_rope;
  const double bytes = 4.0 * numel * (fused ? 1.0 : 5.0);
  const double kernels = fused ? 2.0 : 10.0;
  return elementwise(name, bytes, kernels, bytes, kernels);
}

void append_neutral(OpList& ops, Op op) {
  op.recompute = !ops.empty() && ops.back().recompute && !ops.back().segment_end;
  op.scope = ops.empty() ? GraphScope::kNone : ops.back().scope;
  ops.push_back(std::move(op));
}

void add_linear(OpList& ops, const OpFactory& factory, const LinearArgs& args, bool row_parallel) {
  const OpContext& ctx = factory.ctx();
  Op linear = row_parallel ? factory.row_linear(args) : factory.column_linear(args);
  if (ctx.fp8 && args.allow_fp8) {
    // The GEMM's input (local rows, before any sequence-parallel gather) and its
    // output gradient (the rows the GEMM computes).
    const double numel = static_cast<double>(args.rows) * static_cast<double>(args.in_width);
    const double grad = static_cast<double>(linear.gemm.b * linear.gemm.m) * static_cast<double>(args.out_width);
    Op q = factory.quantizer(args.name, numel, grad, 1.0, args.recompute);
    q.scope = args.scope;
    if (args.input_restored) q.input_bytes = 0.0;
    ops.push_back(q);
  }
  linear.scope = args.scope;
  if (args.input_restored) linear.input_bytes = 0.0;
  ops.push_back(linear);
}

}  // namespace trainsim
