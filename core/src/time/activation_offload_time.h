// Activation CPU offload (Megatron-LM --cpu-offloading-num-layers, run by Transformer
// Engine's get_cpu_offload_context, transformer_engine/pytorch/cpu_offload.py): the time the
// GPU waits for the copies of one micro-batch, as TE's DefaultOffloadSynchronizer orders
// them on its one offload stream.
//   forward:  layer i's saved tensors start their D2H copy when layer i + 1 starts; the
//             compute stream waits for that copy before layer L - N + i (where TE frees
//             the GPU copy), so the copies overlap the compute of the layers in between;
//   backward: layer i's H2D reload starts before the backward of layer L - 1 - N + i and
//             the backward of layer i waits for it (prefetch).
// Each copy moves its layer's saved bytes over the host link (system.host.link_gb_per_s x
// link_efficiency); what the layers' compute does not hide is exposed.
#pragma once

#include <vector>

#include "model/model_plan.h"
#include "time/chunk_time.h"
#include "trainsim/spec.h"

namespace trainsim {

// One transformer layer of a chunk, in forward order.
struct OffloadLayer {
  double forward_s = 0.0;        ///< its forward pass (compute + exposed comm + host wait)
  double backward_s = 0.0;       ///< its backward pass (incl. recompute)
  double offloaded_bytes = 0.0;  ///< saved bytes copied to host (0: kept on the GPU)
};

struct OffloadTime {
  double forward_exposed_s = 0.0;   ///< compute-stream wait for D2H copies, per micro-batch
  double backward_exposed_s = 0.0;  ///< compute-stream wait for H2D reloads, per micro-batch
  double d2h_s = 0.0;               ///< all D2H copies of a micro-batch, end to end
  double h2d_s = 0.0;               ///< all H2D reloads of a micro-batch, end to end
};

// The schedule above over the layers (the offloaded ones first), with copies at
// link_bytes_per_s. No offloaded layer or no link: all zero.
OffloadTime activation_offload_time(const std::vector<OffloadLayer>& layers, double link_bytes_per_s);

// The chunk's transformer layers (a block of several layers is split evenly among them).
std::vector<OffloadLayer> offload_layers(const ModelPlan& plan, const ChunkPlan& chunk,
                                         const std::vector<ChunkTime>& per_block);

// activation_offload_time of a chunk of the plan on the config's host link.
OffloadTime chunk_offload_time(const Config& config, const ModelPlan& plan, const ChunkPlan& chunk,
                               const std::vector<ChunkTime>& per_block);

}  // namespace trainsim
