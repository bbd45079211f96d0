#include "time/nccl_tuning.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace trainsim {
namespace {

constexpr double kUs = 1e-6;
constexpr double kGBps = 1e9;

// NVIDIA/nccl@5067397c src/graph/tuning.cc ncclTunerConstantsDefaults, in us,
// indexed [algorithm][protocol] with protocols LL, LL128, Simple.
// baseLatencies: Tree {6.8, 14.0, 8.4}, Ring {6.6, 14.0, 8.4}.
constexpr std::array<std::array<double, 3>, 2> kBaseUs = {{{6.6, 14.0, 8.4}, {6.8, 14.0, 8.4}}};
// hwLatencies NVLINK row: Tree {0.6, 1.25, 4.0}, Ring {0.6, 1.9, 3.4}.
constexpr std::array<std::array<double, 3>, 2> kNvlinkUs = {{{0.6, 1.9, 3.4}, {0.6, 1.25, 4.0}}};
// hwLatencies NET row: Tree {5.0, 8.5, 14}, Ring {2.7, 4.0, 14.0}.
constexpr std::array<std::array<double, 3>, 2> kNetUs = {{{2.7, 4.0, 14.0}, {5.0, 8.5, 14.0}}};
// The per-step latency a link's latency_us stands for (ring / Simple).
constexpr double kNvlinkRingSimpleUs = 3.4;
constexpr double kNetRingSimpleUs = 14.0;
// getNetOverhead: 1 us per network post on x86 Intel hosts (2 on AMD; Intel or
// Arm assumed), x3 for Simple; an inter-node ring's intra-node steps pay at least it.
constexpr double kNetOverheadUs = 1.0;

// treeCorrectionFactor[protocol][log2(bytes / 64)], 64 B to 256 MiB: the tree's
// bandwidth for medium sizes (ncclTopoGetAlgoTime).
constexpr std::array<std::array<double, 23>, 3> kTreeCorrection = {{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9},
}};

size_t index_of(NcclAlgorithm a) { return static_cast<size_t>(a); }
size_t index_of(NcclProtocol p) { return static_cast<size_t>(p); }

// log2i: floor(log2(x)) for x >= 1 (NCCL's integer log).
int log2_floor(double x) { return x < 1.0 ? -1 : static_cast<int>(std::floor(std::log2(x))); }

// llMaxBws (GB/s): one node by GPU generation (Volta 39.0, Ampere 87.7, Hopper
// 141.0, Blackwell 282.0); across nodes by host CPU (Intel: 2 nodes 39.0, more
// 20.4; AMD 22.5 / 19.0): Intel assumed.
double ll_max_bytes_per_s(int64_t nodes, double compute_capability) {
  if (nodes == 2) return 39.0 * kGBps;
  if (nodes > 2) return 20.4 * kGBps;
  if (compute_capability >= 10.0) return 282.0 * kGBps;
  if (compute_capability >= 9.0) return 141.0 * kGBps;
  if (compute_capability >= 8.0) return 87.7 * kGBps;
  return 39.0 * kGBps;
}

}  // namespace

double nccl_base_latency_s(NcclAlgorithm a, NcclProtocol p) {
  return kBaseUs[index_of(a)][index_of(p)] * kUs;
}
double nccl_nvlink_step_latency_s(NcclAlgorithm a, NcclProtocol p) {
  return kNvlinkUs[index_of(a)][index_of(p)] * kUs;
}
double nccl_net_step_latency_s(NcclAlgorithm a, NcclProtocol p) {
  return kNetUs[index_of(a)][index_of(p)] * kUs;
}

NcclChoice nccl_time(const NcclCollective& c, NcclAlgorithm a, NcclProtocol p) {
  NcclChoice out{a, p, 0.0, 0.0, -1.0};
  const bool all_reduce = c.kind == CollectiveKind::kAllReduce;
  const bool gather_scatter =
      c.kind == CollectiveKind::kAllGather || c.kind == CollectiveKind::kReduceScatter;
  if (!all_reduce && !gather_scatter) return out;
  if (a == NcclAlgorithm::kTree && !all_reduce) return out;  // tree: all-reduce only
  if (c.ranks <= 1 || c.bytes <= 0.0 || c.bus_bandwidth_bytes_per_s <= 0.0) return out;

  const double n = static_cast<double>(c.ranks);
  const int64_t nodes = std::max<int64_t>(1, c.nodes);
  const double ppn = n / static_cast<double>(nodes);
  const bool simple = p == NcclProtocol::kSimple;
  // Per-step latencies: NCCL's, scaled to the links' ring / Simple figures.
  const double intra_scale = c.intra_step_latency_s / (kNvlinkRingSimpleUs * kUs);
  const double inter_scale = c.inter_step_latency_s / (kNetRingSimpleUs * kUs);
  double intra_lat = nccl_nvlink_step_latency_s(a, p) * intra_scale;
  // With one rank per node NCCL uses the tree's network latency for the ring too.
  const NcclAlgorithm net_row = ppn <= 1.0 ? NcclAlgorithm::kTree : a;
  const double inter_lat = nccl_net_step_latency_s(net_row, p) * inter_scale;

  double latency = nccl_base_latency_s(a, p);
  const double ll_max = ll_max_bytes_per_s(nodes, c.compute_capability);
  const double bus = c.bus_bandwidth_bytes_per_s;
  double bandwidth = bus;
  double data_factor = 0.0;  // bytes x data_factor / bandwidth
  if (a == NcclAlgorithm::kRing) {
    const double steps = all_reduce ? 2.0 * (n - 1.0) : n - 1.0;
    if (nodes > 1) intra_lat = std::max(intra_lat, kNetOverheadUs * kUs * (simple ? 3.0 : 1.0));
    const double nodes_d = static_cast<double>(nodes);
    const double inter_steps = nodes == 1 ? 0.0 : all_reduce ? 2.0 * (nodes_d - 1.0) : nodes_d - 1.0;
    latency += (steps - inter_steps) * intra_lat + inter_steps * inter_lat;
    // The ring's latency plateau across nodes (x1.4 from Ampere on, x1.9 before).
    if (simple && all_reduce && nodes > 1 &&
        c.bytes / (static_cast<double>(c.channels) * n) >= 64.0) {
      latency *= c.compute_capability >= 8.0 ? 1.4 : 1.9;
    }
    if (p == NcclProtocol::kLl) bandwidth = std::min(ll_max, bus * 0.5);
    if (p == NcclProtocol::kLl128) bandwidth = bus * 0.92;  // 120 of 128 bytes carry data
    data_factor = (all_reduce ? 2.0 : 1.0) * (n - 1.0) / n;  // algorithm bw = bus x n / steps
  } else {
    latency += 2.0 * ((ppn - 1.0) * intra_lat + log2_floor(static_cast<double>(nodes)) * inter_lat);
    bandwidth = bus * 0.92;
    if (p == NcclProtocol::kLl) bandwidth = std::min(bandwidth / 3.8, ll_max);
    if (p == NcclProtocol::kLl128) bandwidth *= nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
    const int bucket = log2_floor(c.bytes / 64.0);
    if (bucket >= 0 && bucket < static_cast<int>(kTreeCorrection[0].size())) {
      bandwidth *= kTreeCorrection[index_of(p)][static_cast<size_t>(bucket)];
    }
    data_factor = 2.0;  // algorithm bandwidth = bus bandwidth / 2
  }
  out.latency_s = latency;
  out.bus_bandwidth_bytes_per_s = bandwidth;
  out.time_s = latency + c.bytes * data_factor / bandwidth;
  return out;
}

NcclChoice nccl_fastest(const NcclCollective& c) {
  NcclChoice best;
  best.time_s = -1.0;
  for (const NcclAlgorithm a : {NcclAlgorithm::kRing, NcclAlgorithm::kTree}) {
    for (const NcclProtocol p : {NcclProtocol::kLl, NcclProtocol::kLl128, NcclProtocol::kSimple}) {
      const NcclChoice t = nccl_time(c, a, p);
      if (t.time_s >= 0.0 && (best.time_s < 0.0 || t.time_s < best.time_s)) best = t;
    }
  }
  if (best.time_s < 0.0) best.time_s = 0.0;
  return best;
}

}  // namespace trainsim
