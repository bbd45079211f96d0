#include "time/efficiency.h"

#include "time/attention_efficiency.h"
#include "time/gemm_calibration.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace trainsim {
namespace {

std::string str(int64_t value) { return std::to_string(value); }

const char* grad_dtype(const TrainingSpec& t) { return t.grad_reduce_in_bf16 ? "bf16" : "fp32"; }

std::string gemm_key(const Op& op, Pass pass, const TrainingSpec& t) {
  const GemmShape& g = op.gemm;
  switch (pass) {
    case Pass::kForward:
      return "b=" + str(g.b) + ", m=" + str(g.m) + ", k=" + str(g.k) + ", n=" + str(g.n) +
             ", layout=TN, accumulate=False, out_dtype=bf16";
    case Pass::kBackwardData:
      return "b=" + str(g.b) + ", m=" + str(g.m) + ", k=" + str(g.n) + ", n=" + str(g.k) +
             ", layout=NN, accumulate=False, out_dtype=bf16";
    case Pass::kBackwardWeight:
      return "b=1, m=" + str(g.n) + ", k=" + str(g.b * g.m) + ", n=" + str(g.k) +
             ", layout=NT, accumulate=True, out_dtype=" + grad_dtype(t);
  }
  return "";
}

std::string grouped_key(const Op& op, Pass pass, const TrainingSpec& t) {
  const GroupedGemmShape& g = op.grouped;
  std::string key = "ng=" + str(g.num_groups) + ", M=" + str(g.m) + ", N=" + str(g.n) +
                    ", K=" + str(g.k) + ", dtype=" + (op.fp8 ? "fp8" : "bf16") +
                    ", out_dtype=bf16, main_grad_dtype=" + grad_dtype(t);
  switch (pass) {
    case Pass::kForward:
      return key + ", stage=fwd, grad=False, accumulate=False, use_split_accumulator=False, "
                   "single_output=True";
    case Pass::kBackwardData:
      return key + ", stage=bwd_grad_act, grad=True, accumulate=False, "
                   "use_split_accumulator=True, single_output=False";
    case Pass::kBackwardWeight:
      return key + ", stage=bwd_grad_w, grad=True, accumulate=True, use_split_accumulator=True, "
                   "single_output=False";
  }
  return "";
}

std::string attention_key(const Op& op) {
  const AttentionShape& a = op.attention;
  return "batch=" + str(a.batch) + ", seq_len=" + str(a.seq_len) + ", head_num=" + str(a.heads) +
         ", kv_head_num=" + str(a.kv_heads) + ", qk_head_dim=" + str(a.qk_head_dim) +
         ", v_head_dim=" + str(a.v_head_dim) + ", qkv_contiguous=True";
}

double lookup(const std::map<std::string, double>& table, const std::string& key, bool& found) {
  const auto it = table.find(key);
  found = it != table.end();
  return found ? it->second : 0.0;
}

double plateau(const EfficiencySpec& e, GemmFormat format, bool grouped, Figure& figure) {
  const auto i = static_cast<size_t>(format);
  if (grouped && e.grouped_gemm[i] > 0.0) {
    figure = gemm_figure(format, true);
    return e.grouped_gemm[i];
  }
  figure = gemm_figure(format, false);
  return e.gemm[i];
}

// The K roll-off of a format: the bf16 figure scaled by the format's peak over
// the bf16 peak (at the same bytes per output tile, a faster K loop makes the
// tile's fixed prologue/epilogue cost relatively larger: the roofline-ridge
// argument of efficiency.h).
double ridge(GemmFormat format, const SystemSpec& system, Dtype dtype) {
  const double bf16 = format_peak_flops(GemmFormat::kBf16, system.gpu, dtype);
  return bf16 > 0.0 ? system.efficiency.gemm_k_half * format_peak_flops(format, system.gpu, dtype) / bf16
                    : 0.0;
}

// Unfused attention: the score GEMM (s x d by d x s) and the context GEMM
// (s x s by s x d) per head carry half of the FLOPs each (cuBLAS batched GEMMs,
// Megatron-LM dot_product_attention.py baddbmm / bmm).
double math_attention_factor(const Op& op, const EfficiencySpec& e, double k0) {
  const AttentionShape& a = op.attention;
  const double s = static_cast<double>(a.seq_len), d = static_cast<double>(a.qk_head_dim);
  const double groups = static_cast<double>(a.batch) * std::max(1.0, a.rank_heads);
  const double scores = gemm_shape_factor(e, k0, s, s, d, groups);
  const double context = gemm_shape_factor(e, k0, s, static_cast<double>(a.v_head_dim), s, groups);
  return 2.0 / (1.0 / scores + 1.0 / context);
}

// Flash attention runs one thread block per (batch, head, 128-query tile) of
// the rank's share of the work (Dao 2023, Sec. 3.2).
double flash_occupancy(const Op& op, double tiles_half, int64_t num_sms) {
  const AttentionShape& a = op.attention;
  const double query_tiles = std::ceil(static_cast<double>(a.seq_len) / 128.0);
  const double tiles = static_cast<double>(a.batch) * a.rank_heads * query_tiles;
  if (tiles_half > 0.0) return tiles / (tiles + tiles_half);
  return attention_wave_utilization(tiles, num_sms);
}

// A shape the measured table of this GPU does not hold (gemm_calibration.h):
// a bf16 GEMM takes the measured level (the model times the residual of the
// nearest measured shapes, like an exact hit: no sustained fraction); another
// format keeps its own plateau and takes the table's shape dependence, the
// residual over the dense table's median residual. Returns whether the result
// now stands for a measurement.
bool apply_calibration(const Op& op, Pass pass, const GemmCalibrationTables& tables, Figure table,
                       EfficiencyLookup& out) {
  const std::optional<GemmCalibration> c = tables.calibrate(op, pass);
  if (!c) return false;
  out.calibration_figure = table;
  if (!op.fp8 && op.format == GemmFormat::kBf16) {
    out.efficiency *= c->residual;
    out.figure = table;
    return true;
  }
  out.efficiency *= c->residual / c->dense_level;
  return false;
}

}  // namespace

std::string efficiency_key(const Op& op, Pass pass, const TrainingSpec& training) {
  switch (op.cost[static_cast<int>(pass)].compute) {
    case ComputeClass::kGemm:
      return gemm_key(op, pass, training);
    case ComputeClass::kGroupedGemm:
      return grouped_key(op, pass, training);
    case ComputeClass::kAttentionForward:
    case ComputeClass::kAttentionBackward:
      return attention_key(op);
    case ComputeClass::kNone:
      return "";
  }
  return "";
}

double format_peak_flops(GemmFormat format, const GpuSpec& gpu, Dtype dtype) {
  switch (format) {
    case GemmFormat::kBf16:
      return dtype == Dtype::kFp16 ? gpu.peak_fp16_flops_per_s : gpu.peak_bf16_flops_per_s;
    case GemmFormat::kNvfp4:
      return gpu.peak_fp4_flops_per_s;
    default:
      return gpu.peak_fp8_flops_per_s;
  }
}

double gemm_shape_factor(const EfficiencySpec& spec, double k0, double m, double n, double k,
                         double groups) {
  double wave = 1.0;
  if (spec.num_sms > 0) {
    const double tiles = groups * std::ceil(m / static_cast<double>(spec.tile_m)) *
                         std::ceil(n / static_cast<double>(spec.tile_n));
    const double sms = static_cast<double>(spec.num_sms);
    wave = tiles / (std::ceil(tiles / sms) * sms);
  }
  return wave * (k0 > 0.0 ? k / (k + k0) : 1.0);
}

EfficiencyLookup compute_efficiency(const Op& op, Pass pass, const SystemSpec& system,
                                    const TrainingSpec& training) {
  return compute_efficiency(op, pass, system, training, GemmCalibrationTables(system, training));
}

EfficiencyLookup compute_efficiency(const Op& op, Pass pass, const SystemSpec& system,
                                    const TrainingSpec& training, const GemmCalibrationTables& tables) {
  const EfficiencySpec& e = system.efficiency;
  const ComputeClass cls = op.cost[static_cast<int>(pass)].compute;
  EfficiencyLookup out;
  bool found = false;
  switch (cls) {
    case ComputeClass::kGemm: {
      if (!op.fp8 && !e.measured_gemm.empty()) {
        out.efficiency = lookup(e.measured_gemm, gemm_key(op, pass, training), found);
        out.figure = Figure::kMeasuredGemm;
      }
      if (found) break;
      // The pass's (m, n, k): forward m x k by k x n, dgrad m x n by n x k, wgrad n x m by m x k.
      const double rows = static_cast<double>(op.gemm.b * op.gemm.m);
      const double k = static_cast<double>(op.gemm.k), n = static_cast<double>(op.gemm.n);
      const double k0 = ridge(op.format, system, training.dtype);
      const double shape = pass == Pass::kForward        ? gemm_shape_factor(e, k0, rows, n, k, 1)
                           : pass == Pass::kBackwardData ? gemm_shape_factor(e, k0, rows, k, n, 1)
                                                         : gemm_shape_factor(e, k0, n, k, rows, 1);
      out.efficiency = plateau(e, op.format, false, out.figure) * shape;
      out.source = EfficiencySource::kShapeModel;
      found = apply_calibration(op, pass, tables, Figure::kMeasuredGemm, out);
      break;
    }
    case ComputeClass::kGroupedGemm: {
      if (!e.measured_grouped_gemm.empty()) {
        out.efficiency = lookup(e.measured_grouped_gemm, grouped_key(op, pass, training), found);
        out.figure = Figure::kMeasuredGroupedGemm;
      }
      if (found) break;
      const double groups = static_cast<double>(op.grouped.num_groups);
      // Rows per expert is an average (tokens / local experts, rounded down); when
      // there are fewer routed tokens than experts it rounds to 0, yet every expert
      // that receives a token still runs at least one row tile.
      const double m = std::max(1.0, static_cast<double>(op.grouped.m));
      const double k = static_cast<double>(op.grouped.k), n = static_cast<double>(op.grouped.n);
      const double k0 = ridge(op.format, system, training.dtype);
      const double shape = pass == Pass::kForward ? gemm_shape_factor(e, k0, m, n, k, groups)
                           : pass == Pass::kBackwardData
                               ? gemm_shape_factor(e, k0, m, k, n, groups)
                               : gemm_shape_factor(e, k0, n, k, m, groups);
      out.efficiency = plateau(e, op.format, true, out.figure) * shape;
      out.source = EfficiencySource::kShapeModel;
      found = apply_calibration(op, pass, tables, Figure::kMeasuredGroupedGemm, out);
      break;
    }
    case ComputeClass::kAttentionForward:
    case ComputeClass::kAttentionBackward: {
      const bool forward = cls == ComputeClass::kAttentionForward;
      if (!op.attention.causal) {
        // Unfused (math) attention: cuBLAS batched GEMMs on the full score matrix.
        const double k0 = ridge(GemmFormat::kBf16, system, training.dtype);
        out.efficiency = plateau(e, GemmFormat::kBf16, false, out.figure) *
                         math_attention_factor(op, e, k0);
        out.source = EfficiencySource::kShapeModel;
        break;
      }
      const auto& measured = forward ? e.measured_attention_forward : e.measured_attention_backward;
      if (!measured.empty()) {
        out.efficiency = lookup(measured, attention_key(op), found);
        out.figure = forward ? Figure::kMeasuredAttentionForward : Figure::kMeasuredAttentionBackward;
      }
      if (found) break;
      const auto& table = forward ? e.attention.forward : e.attention.backward;
      const double half = forward ? e.attention.forward_tiles_half : e.attention.backward_tiles_half;
      out.efficiency = attention_table_efficiency(table, op.attention.qk_head_dim, true,
                                                  static_cast<double>(op.attention.seq_len)) *
                       flash_occupancy(op, half, e.num_sms);
      out.figure = forward ? Figure::kAttentionForward : Figure::kAttentionBackward;
      out.source = EfficiencySource::kTable;
      break;
    }
    case ComputeClass::kNone:
      break;
  }
  out.measured = found;
  if (found) {
    out.source = EfficiencySource::kMeasuredTable;
  } else {
    out.efficiency *= e.sustained_fraction;
  }
  return out;
}

}  // namespace trainsim
