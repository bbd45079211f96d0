#include "time/chunk_time.h"

#include <algorithm>

namespace trainsim {
namespace {

// With --tp-comm-overlap, TE overlaps a GEMM's tensor-parallel all-gather /
// reduce-scatter with the GEMM itself (userbuffers ring exchange); only the
// part longer than the GEMM stays exposed.
CommTimes exposed(const CommTimes& comm, double compute_s, bool tp_overlap) {
  CommTimes out = comm;
  if (tp_overlap) out.tp_s = std::max(0.0, comm.tp_s - compute_s);
  return out;
}

}  // namespace

std::vector<std::vector<OpTime>> block_op_times(const Config& config, const ModelPlan& plan) {
  std::vector<std::vector<OpTime>> per_op(plan.blocks.size());
  for (size_t b = 0; b < plan.blocks.size(); ++b) {
    per_op[b].reserve(plan.blocks[b]->ops.size());
    for (const Op& op : plan.blocks[b]->ops) per_op[b].push_back(op_time(op, config));
  }
  return per_op;
}

std::vector<ChunkTime> block_times(const Config& config,
                                   const std::vector<std::vector<OpTime>>& per_op) {
  const bool tp_overlap = config.training.overlap.tp_comm;
  std::vector<ChunkTime> per_block(per_op.size());
  for (size_t b = 0; b < per_op.size(); ++b) {
    ChunkTime& block = per_block[b];
    for (const OpTime& t : per_op[b]) {
      block.forward_s += t.compute_s[0];
      block.backward_s += t.compute_s[1] + t.compute_s[2];
      block.recompute_s += t.recompute_s;
      block.forward_comm += exposed(t.comm[0], t.compute_s[0], tp_overlap);
      CommTimes backward = exposed(t.comm[1], t.compute_s[1], tp_overlap);
      const CommTimes weight = exposed(t.comm[2], t.compute_s[2], tp_overlap);
      backward += weight;
      block.backward_comm += backward;
      block.weight_s += t.compute_s[2];
      block.weight_comm += weight;
      block.recompute_comm += exposed(t.recompute_comm, t.recompute_s, tp_overlap);
      block.executed_flops += t.flops[0] + t.flops[1] + t.flops[2] + (t.recompute_s > 0 ? t.flops[0] : 0);
      block.measured_lookups += t.measured_lookups;
      block.model_lookups += t.model_lookups;
    }
  }
  return per_block;
}

ChunkTime chunk_time(const std::vector<ChunkTime>& per_block, const ChunkPlan& chunk) {
  ChunkTime total;
  for (const BlockRun& run : chunk.runs) {
    const ChunkTime& block = per_block[static_cast<size_t>(run.block)];
    const double r = static_cast<double>(run.repeat);
    total.forward_s += r * block.forward_s;
    total.backward_s += r * block.backward_s;
    total.recompute_s += r * block.recompute_s;
    total.weight_s += r * block.weight_s;
    total.weight_comm += block.weight_comm.scaled(r);
    total.forward_comm += block.forward_comm.scaled(r);
    total.backward_comm += block.backward_comm.scaled(r);
    total.recompute_comm += block.recompute_comm.scaled(r);
    total.executed_flops += r * block.executed_flops;
    total.measured_lookups += block.measured_lookups;
    total.model_lookups += block.model_lookups;
  }
  return total;
}

}  // namespace trainsim
