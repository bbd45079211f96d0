// Data-parallel communication of one stage over a step, by ZeRO stage, and the
// optimizer step.
//
//  0  all-reduce of the gradients once per step (Megatron DDP)
//  1  reduce-scatter of the gradients and all-gather of the updated parameters once
//     per step (Megatron DistributedOptimizer; ZeRO-1, Rajbhandari et al. 2020,
//     arXiv:1910.02054 section 5.1)
//  2  the gradients are reduce-scattered after every micro-batch's backward (no full
//     gradient is kept: ZeRO-2, arXiv:1910.02054 section 5.2; Megatron-FSDP
//     optim_grads), the parameters all-gathered once after the optimizer step
//  3  every unit (a transformer layer, or the embedding / head) all-gathers its
//     parameters before its forward and again before its backward, and
//     reduce-scatters its gradients after its backward, every micro-batch (ZeRO-3,
//     arXiv:1910.02054 section 5.3; Megatron-FSDP optim_grads_params,
//     megatron/core/distributed/fsdp/src/megatron_fsdp/megatron_fsdp.py; PyTorch
//     FSDP2 fully_shard with reshard_after_forward). The next unit's gather is
//     prefetched behind the current unit's compute (double buffering:
//     megatron/core/distributed/fsdp/src/docs/runtime_schedule.md).
#pragma once

#include <vector>

#include "trainsim/spec.h"

namespace trainsim {

// One FSDP unit: parameter elements held by one GPU before data-parallel sharding.
struct DpUnit {
  double dense = 0.0;
  double expert = 0.0;
  double count = 1.0;  ///< identical units in a row (a run of repeated layers)
};

// One virtual chunk of the stage: its units in forward order and its compute per
// micro-batch (the windows the communication may hide behind).
struct DpChunk {
  std::vector<DpUnit> units;
  double forward_s = 0.0;
  double backward_s = 0.0;
};

struct DpStage {
  double dense = 0.0;   ///< parameter elements of the stage on one GPU (unsharded)
  double expert = 0.0;
  std::vector<DpChunk> chunks;
  double passes = 1.0;  ///< micro-batches each chunk runs per step
};

struct DpTime {
  double reduce_scatter_s = 0.0;  ///< gradients over the step (all-reduce with ZeRO 0)
  double all_gather_s = 0.0;      ///< parameters over the step
  double reduce_bytes = 0.0;      ///< gradient bytes reduced per step (sum of messages)
  double gather_bytes = 0.0;      ///< parameter bytes gathered per step
  double reduce_calls = 0.0;      ///< collectives (buckets) per step
  double gather_calls = 0.0;
  /// What compute does not hide, per pass of each chunk (ZeRO 2 / 3: it lengthens
  /// the chunk's forward and backward inside the pipeline) ...
  std::vector<double> forward_pass_exposed_s;
  std::vector<double> backward_pass_exposed_s;
  /// ... and once per step after the pipeline (ZeRO 0 / 1, ZeRO 2's gather and last bucket).
  double step_exposed_s = 0.0;
  /// Of step_exposed_s, the gradient reduction's part. It starts when the stage's own last
  /// backward ends (Megatron's finish_grad_sync in finalize_model_grads, called when the
  /// rank's forward_backward_func returns), which on every pipeline stage but the first
  /// comes before the pipeline's end: that stage's cool-down idle hides it.
  double step_reduce_exposed_s = 0.0;
  double exposed_s = 0.0;  ///< over the step: passes x per-pass exposure + step_exposed_s
  double total() const { return reduce_scatter_s + all_gather_s; }
};

DpTime dp_comm_time(const Config& config, const DpStage& stage);

// Adam step over the GPU's shard, as a sequence of HBM passes (zero the grad
// buffer, grad norm, scaling, clip, Adam, copy to bf16 params); with optimizer CPU
// offload, the offloaded fraction's copies and host step beside the GPU part's Adam.
double optimizer_time_s(const Config& config, double dense_params, double expert_params);

// The passes optimizer_time_s combines, in order: the HBM passes of the GPU part, then with
// optimizer CPU offload the "d2h", "host_adam" and "h2d" steps of the offloaded part (bytes
// moved over the host link or through host memory).
struct OptimizerPass {
  const char* name;
  double bytes = 0.0;    ///< HBM bytes read and written
  double seconds = 0.0;  ///< memory_kernel_time_s of those bytes
};
std::vector<OptimizerPass> optimizer_passes(const Config& config, double dense_params, double expert_params);

// The offloaded part of an optimizer step over `offloaded_elements` shard elements:
// gradient copies to the host, the host's Adam step, parameter copies back.
struct OffloadStepTime {
  double d2h_s = 0.0;
  double host_step_s = 0.0;
  double h2d_s = 0.0;
};
OffloadStepTime offloaded_step_time(const Config& config, double offloaded_elements);

}  // namespace trainsim
