#include "time/chunk_time.h"

#include <algorithm>
#include <utility>

#include "time/ep_overlap.h"

namespace trainsim {

std::vector<std::vector<OpTime>> block_op_times(const Config& config, const ModelPlan& plan) {
  std::vector<std::vector<OpTime>> per_op(plan.blocks.size());
  // The measured GEMM tables' keys are parsed once here, not at every lookup.
  const GemmCalibrationTables tables(config.system, config.training);
  for (size_t b = 0; b < plan.blocks.size(); ++b) {
    per_op[b].reserve(plan.blocks[b]->ops.size());
    for (const Op& op : plan.blocks[b]->ops) per_op[b].push_back(op_time(op, config, tables));
  }
  return per_op;
}

std::vector<ChunkTime> block_times(const Config& config, const ModelPlan& plan,
                                   const std::vector<std::vector<OpTime>>& per_op) {
  const HostSpec& host = config.system.efficiency.host;
  std::vector<ChunkTime> per_block(per_op.size());
  for (size_t b = 0; b < per_op.size(); ++b) {
    ChunkTime& block = per_block[b];
    HostStretch forward, backward, recompute, weight_pass;
    // The forward and recompute passes op by op, for the stretches after a host sync.
    std::vector<HostItem> forward_items, recompute_items;
    forward_items.reserve(per_op[b].size());
    bool in_graph = false;
    bool recompute_sync = false;
    for (const OpTime& t : per_op[b]) {
      // A captured region costs one graph launch per pass.
      const double graph_launch = t.captured && !in_graph ? 1.0 : 0.0;
      forward.host_s += graph_launch * host.launch_s;
      backward.host_s += graph_launch * host.launch_s;
      in_graph = t.captured;
      forward_items.push_back({graph_launch + t.launches[0], t.compute_s[0] + t.comm[0].total(), t.host_sync,
                               graph_launch * host.launch_s + t.host_s[0]});
      if (t.recompute_s > 0.0) {
        recompute_items.push_back({t.recompute_launches, t.recompute_s + t.recompute_comm.total(), t.host_sync,
                                   t.recompute_host_s});
      }
      forward.host_s += t.host_s[0];
      backward.host_s += t.host_s[1] + t.host_s[2];
      weight_pass.host_s += t.host_s[2];
      recompute.host_s += t.recompute_host_s;
      if (t.host_sync) {
        forward.syncs += 1.0;
        if (t.recompute_s > 0.0) recompute_sync = true;
      }
      block.forward_s += t.compute_s[0];
      block.backward_s += t.compute_s[1] + t.compute_s[2];
      block.recompute_s += t.recompute_s;
      block.forward_comm += t.comm[0];
      CommTimes backward_comm = t.comm[1];
      const CommTimes weight = t.comm[2];
      backward_comm += weight;
      block.backward_comm += backward_comm;
      block.weight_s += t.compute_s[2];
      block.weight_comm += weight;
      block.recompute_comm += t.recompute_comm;
      block.executed_flops += t.flops[0] + t.flops[1] + t.flops[2] + (t.recompute_s > 0 ? t.flops[0] : 0);
      block.measured_lookups += t.measured_lookups;
      block.model_lookups += t.model_lookups;
    }
    if (config.training.overlap.moe_shared_expert && plan.blocks[b]->moe) {
      // The shared experts run beside the dispatch and combine (time/ep_overlap.h), slowed
      // by the SMs the all-to-all holds.
      const double sm_fraction = comm_sm_fraction(config);
      for (const LayerParts& layer : block_layer_parts(plan.blocks[b]->ops, per_op[b])) {
        const double f = std::min(net_overlap_saving_s(shared_expert_hidden_forward_s(layer), sm_fraction),
                                  block.forward_comm.ep_s);
        const double bw = std::min(net_overlap_saving_s(shared_expert_hidden_backward_s(layer), sm_fraction),
                                   block.backward_comm.ep_s);
        block.forward_comm.ep_s -= f;
        block.backward_comm.ep_s -= bw;
        block.shared_hidden_ep_s += f + bw;
      }
    }
    forward.gpu_s = block.forward_s + block.forward_comm.total();
    backward.gpu_s = block.backward_s + block.backward_comm.total();
    recompute.gpu_s = block.recompute_s + block.recompute_comm.total();
    weight_pass.gpu_s = block.weight_s + block.weight_comm.total();
    block.weight_free = weight_pass;
    if (forward.syncs > 0.0) {
      // A block with a host sync (a dropless MoE layer) is a stretch of its own, and
      // the host issues what follows the sync with no lead (time/host_time.h).
      block.forward_host_s = host_idle_s(forward_items, host);
    } else {
      block.forward_free = forward;
    }
    if (recompute_sync) {
      block.backward_host_s = host_idle_s(recompute_items, host);
      block.backward_free = backward;
    } else {
      block.backward_free = {backward.gpu_s + recompute.gpu_s, backward.host_s + recompute.host_s, 0.0};
    }
  }
  return per_block;
}

ChunkTime chunk_time(const std::vector<ChunkTime>& per_block, const ChunkPlan& chunk,
                     const HostSpec& host) {
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
    total.shared_hidden_ep_s += r * block.shared_hidden_ep_s;
    total.executed_flops += r * block.executed_flops;
    total.measured_lookups += block.measured_lookups;
    total.model_lookups += block.model_lookups;
    total.forward_host_s += r * block.forward_host_s;
    total.backward_host_s += r * block.backward_host_s;
    for (auto [pooled, part] : {std::pair{&total.forward_free, &block.forward_free},
                                std::pair{&total.backward_free, &block.backward_free},
                                std::pair{&total.weight_free, &block.weight_free}}) {
      pooled->gpu_s += r * part->gpu_s;
      pooled->host_s += r * part->host_s;
    }
  }
  total.forward_host_s += host_overhead_s(total.forward_free, host);
  const HostStretch input_grad{total.backward_free.gpu_s - total.weight_free.gpu_s,
                               total.backward_free.host_s - total.weight_free.host_s, 0.0};
  total.input_grad_host_s = total.backward_host_s + host_overhead_s(input_grad, host);
  total.weight_host_s = host_overhead_s(total.weight_free, host);
  total.backward_host_s += host_overhead_s(total.backward_free, host);
  return total;
}

}  // namespace trainsim
