#include "time/efficiency.h"

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

double ratio(double x, double half) { return half > 0.0 ? x / (x + half) : 1.0; }

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

double gemm_shape_efficiency(const EfficiencySpec& spec, double m, double n, double k,
                             double groups) {
  double wave = 1.0;
  if (spec.num_sms > 0) {
    const double tiles = groups * std::ceil(m / static_cast<double>(spec.tile_m)) *
                         std::ceil(n / static_cast<double>(spec.tile_n));
    const double sms = static_cast<double>(spec.num_sms);
    wave = tiles / (std::ceil(tiles / sms) * sms);
  }
  const double half = spec.gemm_half_size;
  return wave * ratio(m, half) * ratio(n, half) * ratio(k, half);
}

EfficiencyLookup compute_efficiency(const Op& op, Pass pass, const SystemSpec& system,
                                    const TrainingSpec& training) {
  const EfficiencySpec& e = system.efficiency;
  const ComputeClass cls = op.cost[static_cast<int>(pass)].compute;
  EfficiencyLookup out;
  bool found = false;
  switch (cls) {
    case ComputeClass::kGemm: {
      if (!op.fp8 && !e.measured_gemm.empty()) {
        out.efficiency = lookup(e.measured_gemm, gemm_key(op, pass, training), found);
      }
      if (found) break;
      // The pass's (m, n, k): forward m x k by k x n, dgrad m x n by n x k, wgrad n x m by m x k.
      const double rows = static_cast<double>(op.gemm.b * op.gemm.m);
      const double k = static_cast<double>(op.gemm.k), n = static_cast<double>(op.gemm.n);
      const double shape = pass == Pass::kForward        ? gemm_shape_efficiency(e, rows, n, k, 1)
                           : pass == Pass::kBackwardData ? gemm_shape_efficiency(e, rows, k, n, 1)
                                                         : gemm_shape_efficiency(e, n, k, rows, 1);
      out.efficiency = (op.fp8 ? e.fp8_gemm : e.gemm) * shape;
      break;
    }
    case ComputeClass::kGroupedGemm: {
      if (!e.measured_grouped_gemm.empty()) {
        out.efficiency = lookup(e.measured_grouped_gemm, grouped_key(op, pass, training), found);
      }
      if (found) break;
      const double groups = static_cast<double>(op.grouped.num_groups);
      // Rows per expert is an average (tokens / local experts, rounded down); when
      // there are fewer routed tokens than experts it rounds to 0, yet every expert
      // that receives a token still runs at least one row tile.
      const double m = std::max(1.0, static_cast<double>(op.grouped.m));
      const double k = static_cast<double>(op.grouped.k), n = static_cast<double>(op.grouped.n);
      const double shape = pass == Pass::kForward ? gemm_shape_efficiency(e, m, n, k, groups)
                           : pass == Pass::kBackwardData
                               ? gemm_shape_efficiency(e, m, k, n, groups)
                               : gemm_shape_efficiency(e, n, k, m, groups);
      out.efficiency = (op.fp8 ? e.fp8_grouped_gemm : e.grouped_gemm) * shape;
      break;
    }
    case ComputeClass::kAttentionForward:
      // Unfused (math) attention runs its score and context matmuls as cuBLAS
      // batched GEMMs over the full score matrix: the GEMM plateau prices them.
      if (!op.attention.causal) {
        out.efficiency = e.gemm;
        break;
      }
      if (!e.measured_attention_forward.empty()) {
        out.efficiency = lookup(e.measured_attention_forward, attention_key(op), found);
      }
      if (!found) out.efficiency = e.attention_forward;
      break;
    case ComputeClass::kAttentionBackward:
      if (!op.attention.causal) {
        out.efficiency = e.gemm;
        break;
      }
      if (!e.measured_attention_backward.empty()) {
        out.efficiency = lookup(e.measured_attention_backward, attention_key(op), found);
      }
      if (!found) out.efficiency = e.attention_backward;
      break;
    case ComputeClass::kNone:
      break;
  }
  out.measured = found;
  return out;
}

}  // namespace trainsim
