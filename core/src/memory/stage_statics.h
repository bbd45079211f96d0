// The long-lived tensors of one pipeline stage, in the order and the pieces
// Megatron-LM, Transformer Engine and PyTorch allocate them, for the
// allocation trace (allocation_trace.h), and their totals for StageMemory.
//
//  setup           model construction and optimizer set-up: the contiguous
//                  parameter buffer (distributed optimizer) or one tensor per
//                  module's weights, the contiguous main-grad buffer
//                  (megatron/core/distributed/param_and_grad_buffer.py,
//                  _ParamAndGradBuffer: param_data / grad_data, dense and
//                  expert buffers apart), the fp32 master copy of each
//                  parameter's shard (megatron/core/optimizer/distrib_optimizer.py,
//                  _build_model_and_main_param_groups: shard_model_param.clone().float())
//  first_forward   workspaces made at the first GEMM and kept: Transformer
//                  Engine's cuBLAS workspaces (transformer_engine/pytorch/cpp_extensions/
//                  gemm.py, get_cublas_workspace: 32 MiB + 1 KiB from compute
//                  capability 9, else 4 MiB; x3 in one tensor for userbuffer GEMMs;
//                  one per cuBLAS stream (4) for grouped GEMMs), PyTorch's
//                  cuBLAS and cuBLASLt workspaces on stages that call torch.matmul
//                  (aten/src/ATen/cuda/CublasHandlePool.cpp: 4096 KiB x 2 + 16 KiB x 8,
//                  32 MiB on compute capability 9.0; cuBLASLt 1 MiB), and Megatron's
//                  global all-gather buffer of the sequence-parallel output layer
//                  (megatron/core/utils.py GlobalMemoryBuffer, used by
//                  tensor_parallel/layers.py LinearWithGradAccumulationAndAsyncCommunication:
//                  [s/cp, b, h] bf16, never freed)
//                  and, with ZeRO 3 (Megatron-FSDP), the gathered units in use and
//                  prefetched at the busiest moment (stage_statics.cpp add_fsdp_buffers)
//  first_backward  Transformer Engine's dummy wgrad tensors (one per weight shape)
//                  and, with ZeRO 2 / 3, the unsharded gradients queued for their
//                  reduce-scatter and being produced (add_fsdp_buffers), and with --defer-embedding-wgrad-compute the
//                  output layer's inputs and logits gradients kept for the flush
//                  (stage_statics.cpp add_deferred_wgrad_buffers)
//  optimizer_state the Adam moments, made by the first optimizer step
//                  (FusedAdam initialises exp_avg / exp_avg_sq lazily, one pair per
//                  master shard)
#pragma once

#include <cstdint>
#include <vector>

#include "model/model_plan.h"
#include "trainsim/spec.h"

namespace trainsim {

struct TraceTensor {
  const char* name = "";
  double bytes = 0.0;
};

struct StageStatics {
  std::vector<TraceTensor> setup;
  std::vector<TraceTensor> first_forward;
  std::vector<TraceTensor> first_backward;
  std::vector<TraceTensor> optimizer_state;
  // Totals (StageMemory parts).
  double parameters_bytes = 0.0;
  double gradients_bytes = 0.0;
  double optimizer_bytes = 0.0;
  double host_bytes = 0.0;  ///< pinned host memory of the offloaded optimizer part
  double buffers_bytes = 0.0;     ///< TE dummy wgrad tensors, FSDP unit gradients
  double workspace_bytes = 0.0;   ///< cuBLAS workspaces, the output layer's gather buffer, FSDP gathered units
  double dense_parameters = 0.0;  ///< elements held by one GPU
  double expert_parameters = 0.0;
  double dense_weight_bytes = 0.0;   ///< unsharded bytes of the dense weights (their GEMM dtype)
  double expert_weight_bytes = 0.0;  ///< unsharded bytes of the routed experts' weights
};

// pieces: false lists only the totals' tensors in bulk (one per kind), for
// traces that must stay short; the totals are the same.
StageStatics stage_statics(const Config& config, const ModelPlan& plan, size_t stage,
                           bool pieces = true);

}  // namespace trainsim
