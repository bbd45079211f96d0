// The CPU side of a step. In eager PyTorch the host issues every kernel; the
// GPU runs them as they arrive, so a stretch of the step lasts as long as the
// slower of the two: max(GPU time, host launch time). The host can run ahead of
// the GPU until it has to wait for a GPU result: Megatron-Core's dropless MoE
// dispatchers copy the tokens-per-expert counts to the host once per MoE layer
// forward (megatron/core/transformer/moe/token_dispatcher.py,
// _maybe_dtoh_and_synchronize; the AllGather dispatcher's .cpu() call), so each
// MoE layer's forward is a stretch of its own, plus the GPU idle of the sync.
// Sync-free stretches (dense layers, every backward) pool over the whole
// chunk pass. After a sync the host has no lead: the GPU runs each kernel only
// once the host has issued it, so the stretch that follows (the dispatch, the
// experts, the combine) lasts at least as long as the host takes to reach any
// kernel plus the GPU work from that kernel on (host_idle_s). CUDA graphs replace a captured region's kernel launches by one
// graph launch (Megatron-LM --cuda-graph-impl, --cuda-graph-modules); the
// sync regions cannot be captured.
#pragma once

#include <span>

#include "trainsim/spec.h"

namespace trainsim {

// A stretch of GPU work and the host work that issues it.
struct HostStretch {
  double gpu_s = 0.0;
  double host_s = 0.0;  ///< the host's CPU time for the kernel (and graph) launches it makes
  double syncs = 0.0;   ///< host-device synchronisations at its end
};

// GPU idle caused by the host in one stretch: max(0, host - GPU) + the syncs.
inline double host_overhead_s(const HostStretch& s, const HostSpec& host) {
  const double behind = s.host_s - s.gpu_s;
  return (behind > 0.0 ? behind : 0.0) + s.syncs * host.sync_s;
}

// One op's share of a pass: the kernels the host launches for it, the GPU time
// they take, and whether the host waits for the GPU after it.
struct HostItem {
  double launches = 0.0;
  double gpu_s = 0.0;
  bool sync_after = false;
  double host_s = 0.0;  ///< the host's CPU time for its launches
};

// GPU idle caused by the host over a pass of items in issue order. Before the
// first sync the host may have run ahead, so that stretch costs
// max(0, host - GPU) as above. Each sync costs host.sync_s, and the stretch
// after it starts with the host at the GPU's side: with a host time h per launch
// and an op's kernels of equal GPU time g = G_i / m_i, kernel j of op i starts no
// earlier than it is issued, so the stretch ends no earlier than
//   max over i of  H_<i + max(h + G_i, m_i h + g) + G_>i
// (the two ends of op i: its first kernel, or its last when the host is the
// slower); the idle is that minus the stretch's GPU time.
double host_idle_s(std::span<const HostItem> items, const HostSpec& host);

}  // namespace trainsim
