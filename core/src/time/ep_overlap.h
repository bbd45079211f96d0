// Expert-parallel overlap as Megatron-LM runs it.
//
// --overlap-moe-expert-parallel-comm (megatron/core/pipeline_parallel/combined_1f1b.py,
// megatron/core/models/common/model_chunk_schedule_plan.py at NVIDIA/Megatron-LM@d98e8a64):
// in the steady 1F1B phase the forward of one micro-batch and the backward of another run
// merged, layer by layer (forward layer i beside backward layer L-1-i). Each layer is split
// into schedule nodes, issued in TransformerLayerSchedulePlan.run's order:
//   comm stream: combine_bwd | dispatch_fwd -> dispatch_bwd | combine_fwd
//   comp stream: pre_dispatch_fwd | mlp_bwd -> mlp_bwd_dw -> mlp_fwd | pre_dispatch_bwd -> dw
// A stream runs its nodes in issue order; the nodes of one micro-batch wait for each other
// through the chunk's shared CUDA event (pipeline_parallel/utils.py ScheduleNode
// stream_acquire_context), so each pass is a chain: forward pre_dispatch -> dispatch -> mlp ->
// combine -> next layer; backward combine -> mlp -> dispatch -> pre_dispatch -> next layer.
// --delay-wgrad-compute moves the expert and attention weight gradients out of the chain
// (TransformerLayerNode.backward_dw runs on the stream without the event): the dispatch
// backward no longer waits for the expert wgrad, which fills the comm gap instead.
//
// trainsim's model: the nodes as above on two streams, every item starting when its stream
// and its pass's chain allow. Compute (with TP/CP collectives, recompute) runs on the compute
// stream; the expert all-to-all (and expert-TP collectives) on the communication stream. The
// combine node's own kernels (unpermute, shared-expert add, residual add), which Megatron
// issues on the communication stream, are kept on the compute stream (they share the SMs
// with the other pass), so a merged step hides expert communication only.
//
// --moe-shared-expert-overlap (megatron/core/transformer/moe/shared_experts.py): the shared
// experts' FC1 runs on a side stream during the dispatch all-to-all and FC2 during the
// combine, in both passes: min(shared-expert time, all-to-all time) per layer and pass hides.
//
// The overlap slowdown: while the all-to-all runs beside compute its kernels hold SMs (NCCL
// one per channel, NVIDIA/nccl src/enqueue.cc; the flex dispatcher its SM budget, Megatron-LM
// transformer_config.py moe_flex_dispatcher_num_sms, DeepEP's "historical default 20";
// training.moe_flex_dispatcher_num_sms here), so the compute beside it runs at (1 - f) of
// its speed, f = those SMs / the GPU's SMs. To first order the compute loses f of the
// overlapped time and finishes that much later: an overlap that hides h seconds of
// communication saves h (1 - f) (comm_sm_fraction(), net_overlap_saving_s()).
#pragma once

#include <vector>

#include "model/op.h"
#include "time/op_time.h"
#include "trainsim/spec.h"

namespace trainsim {

// One transformer layer of one micro-batch, split into Megatron's schedule nodes (seconds).
struct LayerParts {
  // Forward.
  double pre_dispatch_fwd_s = 0.0;  ///< attention, norms, shared experts, router, permute
  double dispatch_fwd_s = 0.0;      ///< all-to-all (communication stream)
  double mlp_fwd_s = 0.0;           ///< grouped expert GEMMs and activation (a dense MLP)
  double combine_fwd_s = 0.0;       ///< all-to-all (communication stream)
  double epilogue_fwd_s = 0.0;      ///< unpermute, shared-expert add, residual add
  // Backward (recompute included where its ops sit).
  double epilogue_bwd_s = 0.0;
  double combine_bwd_s = 0.0;
  double mlp_dgrad_s = 0.0;
  double mlp_wgrad_s = 0.0;
  double dispatch_bwd_s = 0.0;
  double pre_dispatch_dgrad_s = 0.0;
  double pre_dispatch_wgrad_s = 0.0;
  // Shared experts (inside pre_dispatch), for --moe-shared-expert-overlap.
  double shared_fwd_s = 0.0;
  double shared_bwd_s = 0.0;

  double forward_s() const {
    return pre_dispatch_fwd_s + dispatch_fwd_s + mlp_fwd_s + combine_fwd_s + epilogue_fwd_s;
  }
  double backward_s() const {
    return epilogue_bwd_s + combine_bwd_s + mlp_dgrad_s + mlp_wgrad_s + dispatch_bwd_s +
           pre_dispatch_dgrad_s + pre_dispatch_wgrad_s;
  }
  double forward_comm_s() const { return dispatch_fwd_s + combine_fwd_s; }
  double backward_comm_s() const { return dispatch_bwd_s + combine_bwd_s; }
};

// The layers of one block (ops and their priced times, one micro-batch), in forward order.
// A layer starts at its "input_layernorm" op; in a MoE layer the ops before the token
// dispatch form pre_dispatch, those between dispatch and combine the mlp node; a dense layer's
// MLP (from "pre_mlp_layernorm") is its mlp node.
std::vector<LayerParts> block_layer_parts(const OpList& ops, const std::vector<OpTime>& times);

struct MergedLayers {
  double serial_s = 0.0;  ///< both passes one after the other
  double merged_s = 0.0;  ///< the two-stream schedule
  double hidden_s() const { return serial_s - merged_s; }
};

// The forward of `forward` and the backward of `backward` (both lists in forward layer
// order) run merged as TransformerModelChunkSchedulePlan.run does: forward layer i beside
// backward layer (B - 1 - i) for i < min(F, B), then the backward's remaining layers, then
// the forward's. Either list may be empty (a pass alone: merged == serial).
// 0 <= hidden_s() <= the communication of both passes; merged_s >= their compute.
MergedLayers merge_layers(const std::vector<LayerParts>& forward, const std::vector<LayerParts>& backward,
                          bool delay_wgrad);

// --moe-shared-expert-overlap: the all-to-all time one layer's shared experts hide, forward
// and backward (min of the two per pass), before the overlap slowdown.
double shared_expert_hidden_forward_s(const LayerParts& layer);
double shared_expert_hidden_backward_s(const LayerParts& layer);

// f above: the SMs the expert all-to-all holds over the GPU's SMs (system.efficiency.num_sms;
// 0 = not stated: no slowdown). The flex dispatcher (DeepEP / HybridEP) holds its SM budget
// (training.moe_flex_dispatcher_num_sms, DeepEP's 20 by default), the NCCL all-to-all one SM
// per channel (system.nccl_channels).
double comm_sm_fraction(const Config& config);

// What hiding `hidden_s` of communication saves once the compute beside it is slowed:
// hidden_s * (1 - sm_fraction).
double net_overlap_saving_s(double hidden_s, double sm_fraction);

}  // namespace trainsim
