#include "time/tp_overlap.h"

#include <algorithm>

namespace trainsim {

TpOverlapMethod tp_overlap_method(Collective collective, Pass pass) {
  if (collective == Collective::kAllGather && pass != Pass::kBackwardWeight) {
    return TpOverlapMethod::kRingExchange;
  }
  if (collective == Collective::kReduceScatter && pass == Pass::kForward) return TpOverlapMethod::kPipeline;
  return TpOverlapMethod::kBulk;
}

TpOverlapCost tp_overlap_cost(TpOverlapMethod method, double compute_s, double comm_s,
                              double step_comm_s, int64_t tp) {
  TpOverlapCost cost;
  if (tp <= 1 || comm_s <= 0.0) return cost;
  const double n = static_cast<double>(tp);
  if (method == TpOverlapMethod::kRingExchange) {
    // tp chunk GEMMs; the n - 1 transfers each run beside one chunk's GEMM
    // (the local shard's GEMM hides the first).
    cost.exposed_comm_s = (n - 1.0) * std::max(0.0, step_comm_s - compute_s / n);
    cost.extra_launches = 2.0 * n - 3.0;  // n GEMMs and n - 1 copies, one of each already counted
    return cost;
  }
  if (method == TpOverlapMethod::kPipeline) {
    const double k = kTePipelineSplits;
    // GEMM 1; then k - 1 steps of (GEMM i+1 beside reduce-scatter i); then the last reduce-scatter.
    const double total_s = compute_s / k + (k - 1.0) * std::max(compute_s / k, comm_s / k) + comm_s / k;
    cost.exposed_comm_s = total_s - compute_s;
    cost.extra_launches = 2.0 * k - 2.0;  // k GEMMs and k reduce-scatters
    return cost;
  }
  cost.exposed_comm_s = std::max(0.0, comm_s - compute_s);
  return cost;
}

}  // namespace trainsim
