// NCCL's choice of algorithm and protocol for one collective, after its tuner
// (NVIDIA/nccl@5067397c src/graph/tuning.cc: ncclTopoTuneModel sets a latency
// and a bus bandwidth per collective, algorithm and protocol; ncclTopoGetAlgoTime
// prices a call as latency + bytes / algorithm bandwidth; the enqueue picks the
// fastest enabled pair). Modelled: ring and tree (tree for all-reduce only, as
// NCCL allows), each with the LL, LL128 and Simple protocols. Not modelled:
// NVLS-tree (NVLink SHARP inside nodes, tree across them), CollNet and PAT (PAT needs one GPU per node),
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
//
// NVLS (NVLink SHARP: the NVSwitch reduces and multicasts) for an all-reduce
// inside one NVSwitch domain, where the link carries a measured
// nvls_all_reduce_efficiency: NCCL offers it with the Simple protocol only, for
// one node unless CollNet is on (tuning.cc ncclTopoTuneModel: base latency 0,
// NVLINK hardware latency 25 us per call, no per-step term). Its bandwidth is not
// derived from the ring's: the NVSwitch's reduction throughput, not the GPUs'
// links, bounds it, so it is priced at the measured algorithm bandwidth
// (nccl-tests' algbw at the domain's size). NCCL's model also lists NVLS for
// all-gather / reduce-scatter, but ranks it below the ring there (no n / (n - 1)
// conversion, times (ppn - 1) / ppn), so they keep the ring and tree.
#pragma once

#include <cstdint>

#include "trainsim/spec.h"

namespace trainsim {

enum class NcclAlgorithm : uint8_t { kRing, kTree, kNvls };
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
  /// NVLS all-reduce algorithm bandwidth inside one NVSwitch domain (0: no NVLS).
  double nvls_algorithm_bandwidth_bytes_per_s = 0.0;
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
