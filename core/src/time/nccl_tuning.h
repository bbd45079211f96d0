// NCCL's choice of algorithm and protocol for one collective, after its tuner
// (NVIDIA/nccl@5067397c src/graph/tuning.cc: ncclTopoTuneModel sets a latency
// and a bus bandwidth per collective, algorithm and protocol; ncclTopoGetAlgoTime
// prices a call as latency + bytes / algorithm bandwidth; the enqueue picks the
// fastest enabled pair). Modelled: ring and tree (tree for all-reduce only, as
// NCCL allows), each with the LL, LL128 and Simple protocols. Not modelled:
// NVLS / NVLS-tree (NVLink SHARP), CollNet and PAT (PAT needs one GPU per node),
// the per-channel bandwidth caps (perChMax*Bws x channels, above every preset's
// link bandwidth) and the tree pattern penalty.
//
// Inputs are trainsim's: the group's Simple-protocol ring bus bandwidth (the
// link's bandwidth x its achieved fraction, the slowest of NICs and intra-node
// hops for a group across nodes). Latencies are NCCL's constants (the defaults of
// intra_step_latency_s / inter_step_latency_s are its ring/Simple steps; the other
// protocols' and the tree's keep NCCL's ratios to them); a link's latency_us prices
// only the alpha-beta forms (all-to-all, p2p, measured figures). Intra-node links
// are taken as NVLink (NCCL's NVLINK row, LL128 enabled): a PCIe box should carry
// measured collective figures, as the A100-PCIe preset does, which take precedence
// (time/collectives.cpp).
#pragma once

#include <cstdint>

#include "trainsim/spec.h"

namespace trainsim {

enum class NcclAlgorithm : uint8_t { kRing, kTree };
enum class NcclProtocol : uint8_t { kLl, kLl128, kSimple };

struct NcclCollective {
  CollectiveKind kind = CollectiveKind::kAllReduce;  ///< all-reduce, all-gather or reduce-scatter
  double bytes = 0.0;                  ///< full logical tensor (nccl-tests' size)
  int64_t ranks = 1;
  int64_t nodes = 1;                   ///< nodes the group spans (ranks / nodes per node)
  double bus_bandwidth_bytes_per_s = 0.0;  ///< Simple-protocol ring bus bandwidth of the group
  double intra_step_latency_s = 3.4e-6;  ///< ring / Simple step inside a node (NCCL's NVLink)
  double inter_step_latency_s = 14e-6;   ///< ring / Simple step across nodes (NCCL's network)
  double compute_capability = 9.0;     ///< sets the single-node LL bandwidth cap
  int64_t channels = 16;               ///< NCCL channels (the multi-node ring plateau test)
};

struct NcclChoice {
  NcclAlgorithm algorithm = NcclAlgorithm::kRing;
  NcclProtocol protocol = NcclProtocol::kSimple;
  double latency_s = 0.0;                  ///< fixed part of the call
  double bus_bandwidth_bytes_per_s = 0.0;  ///< NCCL's bus bandwidth of the pair
  double time_s = 0.0;
};

// The time of one (algorithm, protocol) pair; time_s < 0 when NCCL does not
// offer it for this collective.
NcclChoice nccl_time(const NcclCollective& call, NcclAlgorithm algorithm, NcclProtocol protocol);

// The fastest pair, as NCCL's tuner picks it.
NcclChoice nccl_fastest(const NcclCollective& call);

// NCCL's fixed latency per call (baseLatencies) and per-step hardware latencies
// (hwLatencies, NVLINK and NET rows), in seconds: exposed for the closed-form tests.
double nccl_base_latency_s(NcclAlgorithm algorithm, NcclProtocol protocol);
double nccl_nvlink_step_latency_s(NcclAlgorithm algorithm, NcclProtocol protocol);
double nccl_net_step_latency_s(NcclAlgorithm algorithm, NcclProtocol protocol);

}  // namespace trainsim
