#include "model/op_factory.h"

#include "model/param_count.h"

namespace trainsim {
namespace {

double d(int64_t value) { return static_cast<double>(value); }

void add_comm(Op& op, Pass pass, Collective collective, CommGroup group, double bytes) {
  op.comms.push_back({pass, collective, group, bytes});
}

void set_memory_pass(Op& op, Pass pass, double bytes) {
  PassCost& cost = op.cost[static_cast<int>(pass)];
  cost.kernel_bytes = {bytes, 0.0};
  cost.compute = ComputeClass::kNone;
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
  const double in = 2 * x, weight = 2 * d(width), rstd = 2 * r;
  if (ctx_.training.kernels.fused_norm) {
    set_memory_pass(op, Pass::kForward, in + weight + in);
    set_memory_pass(op, Pass::kBackwardData, in + weight + in + rstd);
    set_memory_pass(op, Pass::kBackwardWeight, in + 2 * weight);
  } else {
    const double in32 = 4 * x;
    set_memory_pass(op, Pass::kForward, (in + in32) + (in32 + in) + 4 * in32 + 4 * rstd + in + weight);
    set_memory_pass(op, Pass::kBackwardData,
                    (in + in32) + (in + in32) + 11 * in32 + 5 * rstd + in + weight);
    set_memory_pass(op, Pass::kBackwardWeight, 2 * in + weight);
  }
  return op;
}

Op OpFactory::quantizer(const char* name, double numel, bool recompute) const {
  Op op;
  op.name = name;
  op.kind = OpKind::kQuantizer;
  op.recompute = recompute;
  op.fwd_peak_bytes = 3 * numel;  // bf16 in, fp8 out
  op.input_bytes = 2 * numel;
  set_memory_pass(op, Pass::kForward, 3 * numel);
  return op;
}

void OpFactory::set_gemm_costs(Op& op, int64_t rows, int64_t k, int64_t n, bool row_parallel) const {
  const double act = op.fp8 ? 1.0 : 2.0;
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
  op.cost[0].kernel_bytes = {input + weight + output, 0.0};
  op.cost[1].kernel_bytes = {weight + output + input, 0.0};
  // A row-parallel wgrad reads the (local) input and output grad, not the weight.
  op.cost[2].kernel_bytes = {output + input + (row_parallel ? 0.0 : weight) + main_grad, 0.0};
  op.gemm = {ctx_.b, rows / ctx_.b, k, n};
  op.row_parallel = row_parallel;
}

Op OpFactory::column_linear(const LinearArgs& a) const {
  Op op;
  op.name = a.name;
  op.kind = OpKind::kLinear;
  op.recompute = a.recompute;
  op.fp8 = ctx_.fp8 && a.allow_fp8;
  const double act = op.fp8 ? 1.0 : 2.0;
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
  op.weight_bytes_per_param = act;
  if (ctx_.te_dummy_wgrad) {
    op.wgrad_rows = a.out_width;
    op.wgrad_cols = a.in_width;
  }
  set_gemm_costs(op, gathered, a.in_width, a.out_width, false);
  op.recompute_comm = true;
  if (ctx_.tp > 1 && !a.gathered_input) {
    const double bytes = d(gathered) * d(a.in_width) * 2.0;
    if (ctx_.sp) {
      add_comm(op, Pass::kForward, Collective::kAllGather, CommGroup::kTp, bytes);
      add_comm(op, Pass::kBackwardData, Collective::kReduceScatter, CommGroup::kTp, bytes);
      add_comm(op, Pass::kBackwardWeight, Collective::kAllGather, CommGroup::kTp, bytes);
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
  const double act = op.fp8 ? 1.0 : 2.0;
  op.cache_bytes = a.input_shared ? 0.0 : d(a.rows) * d(a.in_width) * act;
  op.fwd_peak_bytes = op.bwd_peak_bytes =
      d(a.rows) * d(a.in_width) * act + d(a.rows) * d(a.out_width) * 2.0;
  op.input_bytes = d(a.rows) * d(a.in_width) * act;
  op.dense_params = d(a.in_width) * d(a.out_width);
  op.weight_bytes_per_param = act;
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
    const bool fused = ctx_.training.kernels.fused_swiglu;
    set_memory_pass(op, Pass::kForward, fused ? 3.0 * out : 5.0 * out);
    set_memory_pass(op, Pass::kBackwardData, fused ? 3.0 * out : 8.0 * out);
  } else if (ctx_.model.activation == Activation::kSquaredRelu) {
    // Megatron-LM squared_relu (megatron/core/activations.py): pow(relu(x), 2), two
    // unfused PyTorch kernels; both backward functions use the relu output, saved once.
    op.cache_bytes = out;
    op.fwd_peak_bytes = op.bwd_peak_bytes = 2.0 * out;
    op.input_bytes = out;
    set_memory_pass(op, Pass::kForward, 4.0 * out);
    set_memory_pass(op, Pass::kBackwardData, 6.0 * out);
  } else {
    op.cache_bytes = 3.0 * out;
    op.fwd_peak_bytes = op.bwd_peak_bytes = 2.0 * out;
    op.input_bytes = out;
    set_memory_pass(op, Pass::kForward, 2.0 * out);
    set_memory_pass(op, Pass::kBackwardData, 2.0 * out);
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

void add_linear(OpList& ops, const OpFactory& factory, const LinearArgs& args, bool row_parallel) {
  const OpContext& ctx = factory.ctx();
  if (ctx.fp8 && args.allow_fp8) {
    const double numel = static_cast<double>(args.rows) * static_cast<double>(args.in_width);
    ops.push_back(factory.quantizer(args.name, numel, args.recompute));
  }
  ops.push_back(row_parallel ? factory.row_linear(args) : factory.column_linear(args));
}

}  // namespace trainsim
