// Per-micro-batch time of one virtual pipeline chunk: the sum over its ops of
// forward, backward (data + weight gradients) and recompute, with their
// collectives kept apart by kind so exposed communication can be reported.
#pragma once

#include <vector>

#include "model/model_plan.h"
#include "time/host_time.h"
#include "time/op_time.h"
#include "trainsim/spec.h"

namespace trainsim {

struct ChunkTime {
  double forward_s = 0.0;      ///< compute only
  double backward_s = 0.0;     ///< data + weight gradients, compute only
  double recompute_s = 0.0;
  /// The weight-gradient pass inside backward_s / backward_comm (the wgrad GEMMs and
  /// their elementwise work, Pass::kBackwardWeight): the W a zero-bubble or DualPipe
  /// schedule splits off the input-gradient B (Qi et al., arXiv:2401.10241 section 2).
  double weight_s = 0.0;
  CommTimes weight_comm;
  /// GPU idle waiting for the host (time/host_time.h), forward and backward (+ recompute).
  double forward_host_s = 0.0;
  double backward_host_s = 0.0;
  /// Sync-free stretches, pooled over a chunk pass before the host overhead is taken.
  HostStretch forward_free;
  HostStretch backward_free;
  /// W's part of backward_free. A schedule that runs W apart from B (zero-bubble,
  /// DualPipe) issues W's kernels when W runs: the host waits of B (with recompute)
  /// and of W are then taken separately, so a faster GPU never moves host time into B.
  HostStretch weight_free;
  double input_grad_host_s = 0.0;
  double weight_host_s = 0.0;
  CommTimes forward_comm;
  CommTimes backward_comm;
  CommTimes recompute_comm;
  /// Expert all-to-all the shared experts hide (--moe-shared-expert-overlap), forward and
  /// backward, already taken out of forward_comm / backward_comm (time/ep_overlap.h).
  double shared_hidden_ep_s = 0.0;
  double executed_flops = 0.0;  ///< forward + backward + recompute FLOPs as priced
  int measured_lookups = 0;
  int model_lookups = 0;

  double forward_phase_s() const { return forward_s + forward_comm.total() + forward_host_s; }
  double backward_phase_s() const {
    return backward_s + backward_comm.total() + recompute_s + recompute_comm.total() + backward_host_s;
  }
  double weight_phase_s() const { return weight_s + weight_comm.total(); }
  /// B and W when W runs apart (time/pipeline_run.cpp pass_costs).
  double input_grad_pass_s() const {
    return backward_phase_s() - backward_host_s + input_grad_host_s - weight_phase_s();
  }
  double weight_pass_s() const { return weight_phase_s() + weight_host_s; }
  CommTimes comm() const {
    CommTimes all = forward_comm;
    all += backward_comm;
    all += recompute_comm;
    return all;
  }
};

// Times of every distinct block of the plan (index = block id).
std::vector<std::vector<OpTime>> block_op_times(const Config& config, const ModelPlan& plan);

// One repeat of each block (index = block id): its ops' times summed; with
// --moe-shared-expert-overlap less the all-to-all its shared experts hide.
std::vector<ChunkTime> block_times(const Config& config, const ModelPlan& plan,
                                   const std::vector<std::vector<OpTime>>& per_op);

// A chunk: its runs' block times times their repeats; the host overhead of its
// sync-free stretches is taken over the whole chunk pass.
ChunkTime chunk_time(const std::vector<ChunkTime>& per_block, const ChunkPlan& chunk,
                     const HostSpec& host);

}  // namespace trainsim
