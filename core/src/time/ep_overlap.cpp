#include "time/ep_overlap.h"

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace trainsim {
namespace {

enum class Node { kPreDispatch, kMlp, kEpilogue };

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

// Compute-stream time of one op in a pass: its kernels and the collectives that run on the
// compute stream (TP / CP); the expert all-to-all and expert-TP collectives go apart.
double compute_part(const OpTime& t, size_t pass) {
  return t.compute_s[pass] + t.comm[pass].tp_s + t.comm[pass].cp_s;
}

void add_op(LayerParts& layer, Node node, const Op& op, const OpTime& t, bool moe_layer) {
  const std::string_view name = op.name;
  const double recompute = t.recompute_s + t.recompute_comm.tp_s + t.recompute_comm.cp_s;
  const double forward = compute_part(t, 0);
  const double dgrad = compute_part(t, 1) + recompute;
  const double wgrad = compute_part(t, 2);
  // Expert all-to-all of the token dispatch and combine (their ops carry it); any other EP
  // traffic stays with its op's compute.
  const double ep_forward = t.comm[0].ep_s;
  const double ep_backward = t.comm[1].ep_s + t.comm[2].ep_s + t.recompute_comm.ep_s;
  const bool dispatch = moe_layer && name == "mlp.token_dispatch";
  const bool combine = moe_layer && name == "mlp.token_combine";
  if (dispatch) {
    layer.dispatch_fwd_s += ep_forward;
    layer.dispatch_bwd_s += ep_backward;
  } else if (combine) {
    layer.combine_fwd_s += ep_forward;
    layer.combine_bwd_s += ep_backward;
  }
  const double fwd = forward + (dispatch || combine ? 0.0 : ep_forward);
  const double bwd = dgrad + (dispatch || combine ? 0.0 : ep_backward);
  if (starts_with(name, "mlp.shared_experts.")) {
    layer.shared_fwd_s += fwd;
    layer.shared_bwd_s += bwd + wgrad;
  }
  switch (node) {
    case Node::kPreDispatch:
      layer.pre_dispatch_fwd_s += fwd;
      layer.pre_dispatch_dgrad_s += bwd;
      layer.pre_dispatch_wgrad_s += wgrad;
      break;
    case Node::kMlp:
      layer.mlp_fwd_s += fwd;
      layer.mlp_dgrad_s += bwd;
      layer.mlp_wgrad_s += wgrad;
      break;
    case Node::kEpilogue:
      layer.epilogue_fwd_s += fwd;
      layer.epilogue_bwd_s += bwd + wgrad;
      break;
  }
}

// Two CUDA streams and the two passes' event chains (model_chunk_schedule_plan.py).
struct TwoStreams {
  double compute = 0.0;
  double comm = 0.0;
  double forward_chain = 0.0;
  double backward_chain = 0.0;

  // A node on `stream` of the pass whose chain is `chain`: it waits for both. A node of no
  // work is a no-op node (NoopScheduleNode: no event wait or record).
  static void node(double& stream, double& chain, double seconds) {
    if (seconds <= 0.0) return;
    const double end = std::max(stream, chain) + seconds;
    stream = end;
    chain = end;
  }
  // A delayed weight gradient: after its dgrad on the same stream, outside the event chain.
  static void off_chain(double& stream, double seconds) { stream += std::max(0.0, seconds); }

  double end() const { return std::max({compute, comm, forward_chain, backward_chain}); }
};

// TransformerLayerSchedulePlan.run for one forward layer and/or one backward layer.
void run_layer(TwoStreams& s, const LayerParts* f, const LayerParts* b, bool delay_wgrad) {
  if (b != nullptr) {
    TwoStreams::node(s.compute, s.backward_chain, b->epilogue_bwd_s);
    TwoStreams::node(s.comm, s.backward_chain, b->combine_bwd_s);
  }
  if (f != nullptr) TwoStreams::node(s.compute, s.forward_chain, f->pre_dispatch_fwd_s);
  if (b != nullptr) {
    TwoStreams::node(s.compute, s.backward_chain, b->mlp_dgrad_s + (delay_wgrad ? 0.0 : b->mlp_wgrad_s));
  }
  if (f != nullptr) TwoStreams::node(s.comm, s.forward_chain, f->dispatch_fwd_s);
  if (b != nullptr) {
    if (delay_wgrad) TwoStreams::off_chain(s.compute, b->mlp_wgrad_s);
    TwoStreams::node(s.comm, s.backward_chain, b->dispatch_bwd_s);
  }
  if (f != nullptr) {
    TwoStreams::node(s.compute, s.forward_chain, f->mlp_fwd_s);
    TwoStreams::node(s.comm, s.forward_chain, f->combine_fwd_s);
  }
  if (b != nullptr) {
    TwoStreams::node(s.compute, s.backward_chain,
                     b->pre_dispatch_dgrad_s + (delay_wgrad ? 0.0 : b->pre_dispatch_wgrad_s));
    if (delay_wgrad) TwoStreams::off_chain(s.compute, b->pre_dispatch_wgrad_s);
  }
  if (f != nullptr) TwoStreams::node(s.compute, s.forward_chain, f->epilogue_fwd_s);
}

}  // namespace

std::vector<LayerParts> block_layer_parts(const OpList& ops, const std::vector<OpTime>& times) {
  // Layer boundaries: each layer starts with its input norm (model/attention_ops.cpp).
  std::vector<size_t> starts;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (std::string_view(ops[i].name) == "input_layernorm") starts.push_back(i);
  }
  std::vector<LayerParts> layers;
  layers.reserve(starts.size());
  for (size_t l = 0; l < starts.size(); ++l) {
    const size_t begin = starts[l];
    const size_t end = l + 1 < starts.size() ? starts[l + 1] : ops.size();
    bool moe_layer = false;
    for (size_t i = begin; i < end; ++i) moe_layer = moe_layer || std::string_view(ops[i].name) == "mlp.token_dispatch";
    LayerParts layer;
    Node node = Node::kPreDispatch;
    for (size_t i = begin; i < end; ++i) {
      const std::string_view name = ops[i].name;
      if (!moe_layer && name == "pre_mlp_layernorm") node = Node::kMlp;
      if (moe_layer && name == "mlp.token_combine") node = Node::kEpilogue;
      add_op(layer, node, ops[i], times[i], moe_layer);
      // The dispatch preprocess (permutation) belongs to pre_dispatch; the experts follow.
      if (moe_layer && name == "mlp.token_dispatch") node = Node::kMlp;
    }
    layers.push_back(layer);
  }
  return layers;
}

MergedLayers merge_layers(const std::vector<LayerParts>& forward, const std::vector<LayerParts>& backward,
                          bool delay_wgrad) {
  MergedLayers out;
  for (const LayerParts& l : forward) out.serial_s += l.forward_s();
  for (const LayerParts& l : backward) out.serial_s += l.backward_s();
  TwoStreams s;
  const size_t paired = std::min(forward.size(), backward.size());
  for (size_t i = 0; i < paired; ++i) {
    run_layer(s, &forward[i], &backward[backward.size() - 1 - i], delay_wgrad);
  }
  for (size_t i = paired; i < backward.size(); ++i) {
    run_layer(s, nullptr, &backward[backward.size() - 1 - i], delay_wgrad);
  }
  for (size_t i = paired; i < forward.size(); ++i) run_layer(s, &forward[i], nullptr, delay_wgrad);
  out.merged_s = std::min(out.serial_s, s.end());  // equal up to rounding when nothing overlaps
  return out;
}

double shared_expert_hidden_forward_s(const LayerParts& layer) {
  return std::min(layer.shared_fwd_s, layer.forward_comm_s());
}

double shared_expert_hidden_backward_s(const LayerParts& layer) {
  return std::min(layer.shared_bwd_s, layer.backward_comm_s());
}

double comm_sm_fraction(const Config& config) {
  const double sms = static_cast<double>(config.system.efficiency.num_sms);
  if (sms <= 0.0) return 0.0;
  // The flex dispatcher's SM budget (training.moe_flex_dispatcher_num_sms: Megatron-LM
  // moe_flex_dispatcher_num_sms, DeepEP's 20 when unset); NCCL runs one block per channel.
  const MoeTrainingSpec& moe = config.training.moe;
  const int64_t held = moe.dispatcher == MoeDispatcher::kFlex ? moe.flex_dispatcher_num_sms
                                                              : std::max<int64_t>(1, config.system.nccl_channels);
  return std::clamp(static_cast<double>(held) / sms, 0.0, 1.0);
}

double net_overlap_saving_s(double hidden_s, double sm_fraction) {
  return std::max(0.0, hidden_s) * (1.0 - std::clamp(sm_fraction, 0.0, 1.0));
}

}  // namespace trainsim
