// The CPU side of a step. In eager PyTorch the host issues every kernel; the
// GPU runs them as they arrive, so a stretch of the step lasts as long as the
// slower of the two: max(GPU time, host launch time). The host can run ahead of
// the GPU until it has to wait for a GPU result: Megatron-Core's dropless MoE
// dispatchers copy the tokens-per-expert counts to the host once per MoE layer
// forward (megatron/core/transformer/moe/token_dispatcher.py,
// _maybe_dtoh_and_synchronize; the AllGather dispatcher's .cpu() call), so each
// MoE layer's forward is a stretch of its own, plus the GPU idle of the sync.
// Sync-free stretches (dense layers, every backward) pool over the whole
// chunk pass. CUDA graphs replace a captured region's kernel launches by one
// graph launch (Megatron-LM --cuda-graph-impl, --cuda-graph-modules); the
// sync regions cannot be captured.
#pragma once

#include "trainsim/spec.h"

namespace trainsim {

// A stretch of GPU work and the host work that issues it.
struct HostStretch {
  double gpu_s = 0.0;
  double launches = 0.0;  ///< kernel (and graph) launches the host makes
  double syncs = 0.0;     ///< host-device synchronisations at its end
};

// Host time of `launches` launches.
inline double host_launch_s(double launches, const HostSpec& host) { return launches * host.launch_s; }

// GPU idle caused by the host in one stretch: max(0, host - GPU) + the syncs.
inline double host_overhead_s(const HostStretch& s, const HostSpec& host) {
  const double behind = host_launch_s(s.launches, host) - s.gpu_s;
  return (behind > 0.0 ? behind : 0.0) + s.syncs * host.sync_s;
}

}  // namespace trainsim
