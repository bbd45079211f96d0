#include "time/collectives.h"

#include <algorithm>
#include <cmath>

#include "time/nccl_tuning.h"

namespace trainsim {
namespace {

const LinkSpec& select_link(const SystemSpec& system, int64_t span) {
  if (span > system.gpus_per_node) return system.inter_node;
  for (const LinkSpec& tier : system.intra_node_tiers) {
    if (span <= tier.max_group_size) return tier;
  }
  return system.intra_node;
}

struct RingCost {
  double data_factor = 0.0;  ///< fraction of the tensor each rank sends
  double steps = 0.0;        ///< latency-bound steps
};

RingCost ring_cost(CollectiveKind kind, double n) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return {2.0 * (n - 1.0) / n, 2.0 * (n - 1.0)};
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return {(n - 1.0) / n, n - 1.0};
    case CollectiveKind::kP2p:
      return {1.0, 1.0};
  }
  return {};
}

double link_time_s(CollectiveKind kind, double sent, double steps, const LinkSpec& link,
                   double bandwidth) {
  const CollectiveSpec& measured = link.collectives[static_cast<size_t>(kind)];
  const double efficiency = measured.efficiency > 0.0 ? measured.efficiency : link.efficiency;
  const double latency = measured.latency_s >= 0.0 ? measured.latency_s : link.latency_s;
  return sent / (bandwidth * efficiency) + latency * steps;
}

// A measured figure for this collective on this link (a fit of latency + bytes /
// bandwidth to its own microbenchmarks) prices it as measured, not by NCCL's tuner.
bool measured(CollectiveKind kind, const LinkSpec& link) {
  const CollectiveSpec& m = link.collectives[static_cast<size_t>(kind)];
  return m.efficiency > 0.0 || m.latency_s >= 0.0;
}

double bus_bandwidth(CollectiveKind kind, const LinkSpec& link) {
  const CollectiveSpec& m = link.collectives[static_cast<size_t>(kind)];
  return link.bandwidth_bytes_per_s * (m.efficiency > 0.0 ? m.efficiency : link.efficiency);
}

// Members of a group that share one node: a group with stride s has per_node / s of its
// n members in each node it spans (one when s fills a node or more).
double members_per_node(const GroupGeometry& geometry, double n, double per_node) {
  const auto stride = static_cast<double>(geometry.stride);
  return stride >= per_node ? 1.0 : std::min(n, per_node / stride);
}

// A link's measured bandwidth per rank for a data-parallel all-gather / reduce-scatter
// of `size` ranks run beside every other DP group of the node (SimuMax's dp_fixed_bw on
// PCIe boxes; the bytes each rank sends / time), or 0 where none is measured.
double dp_table_bytes_per_s(CollectiveKind kind, const LinkSpec& link, int64_t size) {
  if (kind != CollectiveKind::kAllGather && kind != CollectiveKind::kReduceScatter) return 0.0;
  const auto& table = kind == CollectiveKind::kAllGather ? link.dp_all_gather_bytes_per_s
                                                         : link.dp_reduce_scatter_bytes_per_s;
  const auto it = table.find(size);
  return it == table.end() ? 0.0 : it->second;
}

// A group across nodes: the hops between a data-parallel group's `members` ranks inside
// one node run beside every other DP group's (all DP groups reduce at once), so the
// node link's measured DP figure for that many ranks bounds them (the PCIe host
// bridge); 0 where none is measured or the group is not data-parallel.
double dp_hops_bytes_per_s(CollectiveKind kind, Group group, const LinkSpec& inside, double members) {
  if (group != Group::kDp || members <= 1.0) return 0.0;
  return dp_table_bytes_per_s(kind, inside, static_cast<int64_t>(std::llround(members)));
}

// All-reduce, all-gather and reduce-scatter are priced as NCCL's tuner picks them
// (time/nccl_tuning.h); all-to-all (grouped send/recv, outside the tuner) and p2p
// keep the alpha-beta form.
bool tuned(CollectiveKind kind) {
  return kind == CollectiveKind::kAllReduce || kind == CollectiveKind::kAllGather ||
         kind == CollectiveKind::kReduceScatter;
}

// NCCL's own per-step latencies (NcclCollective's defaults): a link's latency_us
// prices the alpha-beta forms (all-to-all, p2p, measured figures) only.
NcclCollective nccl_call(CollectiveKind kind, double bytes, int64_t ranks, int64_t nodes,
                         double bus_bytes_per_s, const SystemSpec& system) {
  NcclCollective c;
  c.kind = kind;
  c.bytes = bytes;
  c.ranks = ranks;
  c.nodes = nodes;
  c.bus_bandwidth_bytes_per_s = bus_bytes_per_s;
  c.compute_capability = system.gpu.compute_capability > 0.0 ? system.gpu.compute_capability : 9.0;
  c.channels = std::max<int64_t>(1, system.nccl_channels);
  return c;
}

// nccl_call() for a group inside one NVLink domain on `link`: NVLS too, where
// measured and allowed (nvls: training.nccl_nvls, NCCL_NVLS_ENABLE).
NcclCollective nccl_call_inside(CollectiveKind kind, double bytes, int64_t ranks, const LinkSpec& link,
                                const SystemSpec& system, bool nvls) {
  NcclCollective c = nccl_call(kind, bytes, ranks, 1, bus_bandwidth(kind, link), system);
  c.nvls_algorithm_bandwidth_bytes_per_s =
      nvls ? link.bandwidth_bytes_per_s * link.nvls_all_reduce_efficiency : 0.0;
  return c;
}

}  // namespace

double achieved_bus_bandwidth_bytes_per_s(CollectiveKind kind, double bytes, int64_t ranks,
                                          const LinkSpec& link, const SystemSpec& system, bool nvls) {
  if (bytes <= 0.0 || ranks <= 1) return 0.0;
  const RingCost ring = ring_cost(kind, static_cast<double>(ranks));
  const double sent = bytes * ring.data_factor;
  if (tuned(kind) && !measured(kind, link)) {
    return sent / nccl_fastest(nccl_call_inside(kind, bytes, ranks, link, system, nvls)).time_s;
  }
  return sent / link_time_s(kind, sent, ring.steps, link, link.bandwidth_bytes_per_s);
}

double p2p_time_s(double bytes, bool crosses_nodes, const SystemSpec& system) {
  if (bytes <= 0.0) return 0.0;
  const LinkSpec& link = crosses_nodes ? system.inter_node : select_link(system, 2);
  return link_time_s(CollectiveKind::kP2p, bytes, 1.0, link, link.bandwidth_bytes_per_s);
}

double ring_step_time_s(double bytes, Group group, const ParallelSpec& p, const SystemSpec& system) {
  const GroupGeometry geometry = group_geometry(group, p, p.tp * p.pp * p.dp * p.cp);
  if (geometry.size <= 1 || bytes <= 0.0) return 0.0;
  const LinkSpec& link = select_link(system, geometry.span());
  return link_time_s(CollectiveKind::kP2p, bytes, 1.0, link, link.bandwidth_bytes_per_s);
}

bool pipeline_boundary_crosses_nodes(int64_t stage, int64_t pp, int64_t world,
                                     int64_t gpus_per_node) {
  const int64_t per_stage = world / pp;
  const int64_t next = (stage + 1) % pp;  // the interleaved schedule wraps to stage 0
  const int64_t first = std::min(stage, next) * per_stage;
  const int64_t last = (std::max(stage, next) + 1) * per_stage - 1;
  return first / gpus_per_node != last / gpus_per_node;
}

GroupGeometry group_geometry(Group group, const ParallelSpec& p, int64_t world) {
  const int64_t expert_dp = world / (p.ep * p.etp * p.pp);
  switch (group) {
    case Group::kTp:
      return {p.tp, 1};
    case Group::kCp:
      return {p.cp, p.tp};
    case Group::kEp:
      return {p.ep, p.etp};
    case Group::kEtp:
      return {p.etp, 1};
    case Group::kDp:
      return {p.dp * p.cp, p.tp};
    case Group::kEdp:
      return {expert_dp, p.ep * p.etp};
    case Group::kPp:
      return {2, world / p.pp};
  }
  return {};
}

Group comm_group(CommGroup group) {
  switch (group) {
    case CommGroup::kTp:
      return Group::kTp;
    case CommGroup::kCp:
      return Group::kCp;
    case CommGroup::kEp:
      return Group::kEp;
    case CommGroup::kEtp:
      return Group::kEtp;
  }
  return Group::kTp;
}

CollectiveKind collective_kind(Collective collective) {
  switch (collective) {
    case Collective::kAllReduce:
      return CollectiveKind::kAllReduce;
    case Collective::kAllGather:
      return CollectiveKind::kAllGather;
    case Collective::kReduceScatter:
      return CollectiveKind::kReduceScatter;
    case Collective::kAllToAll:
      return CollectiveKind::kAllToAll;
  }
  return CollectiveKind::kAllReduce;
}

double collective_time_s(CollectiveKind kind, double bytes, Group group, const ParallelSpec& p,
                         const SystemSpec& system, bool nvls) {
  const int64_t world = p.tp * p.pp * p.dp * p.cp;
  const GroupGeometry geometry = group_geometry(group, p, world);
  const double n = static_cast<double>(geometry.size);
  if (geometry.size <= 1 || bytes <= 0.0) return 0.0;
  const LinkSpec& link = select_link(system, geometry.span());
  const bool inter = geometry.span() > system.gpus_per_node;
  const RingCost ring = ring_cost(kind, n);
  double sent = bytes * ring.data_factor;
  if (group == Group::kDp && !inter) {
    const double measured_dp = dp_table_bytes_per_s(kind, link, geometry.size);
    if (measured_dp > 0.0) return sent / measured_dp;
  }
  double bandwidth = link.bandwidth_bytes_per_s;
  if (tuned(kind) && !measured(kind, link)) {
    if (!inter) {
      return nccl_fastest(nccl_call_inside(kind, bytes, geometry.size, link, system, nvls)).time_s;
    }
    // Across nodes the ring's (and tree's) bus bandwidth is the slower of its
    // members' NICs in a node and the intra-node hops between them (below).
    const auto per_node = static_cast<double>(system.gpus_per_node);
    const double stride = static_cast<double>(geometry.stride);
    const double members = members_per_node(geometry, n, per_node);
    double bus = bus_bandwidth(kind, link) * members;
    const LinkSpec& inside =
        members <= 1.0 ? system.intra_node : select_link(system, static_cast<int64_t>(members * stride));
    if (members > 1.0) bus = std::min(bus, bus_bandwidth(kind, inside));
    const double measured_dp = dp_hops_bytes_per_s(kind, group, inside, members);
    if (measured_dp > 0.0) bus = std::min(bus, measured_dp);
    const auto nodes = static_cast<int64_t>(std::llround(n / members));
    const NcclCollective c = nccl_call(kind, bytes, geometry.size, nodes, bus, system);
    return nccl_fastest(c).time_s;
  }
  if (inter) {
    const auto per_node = static_cast<double>(system.gpus_per_node);
    if (kind == CollectiveKind::kAllToAll) {
      // Only the share addressed to other nodes crosses the NICs: a rank sends 1/n of
      // the tensor to every member (itself included), and the whole members in its own
      // node stay local (a group with stride s, e.g. ep over etp 2, has fewer members per
      // node and so more of its traffic on the NICs: 24 of 32 for ep 32 over etp 1 on
      // 8-GPU nodes, not 3/4 of 31/32).
      const double members = std::floor(members_per_node(geometry, n, per_node));
      sent = bytes * std::max(0.0, n - members) / n;
    } else if (kind != CollectiveKind::kP2p) {
      // A ring crossing nodes uses the NICs of all its members inside a node
      // (NCCL runs one channel per NIC; each channel's ring enters and leaves
      // every node once: NVIDIA/nccl src/graph/search.cc, rings.cc), and the
      // same bytes still pass the hops between those members inside the node,
      // so the ring is no faster than its intra-node link either (an 8-GPU
      // PCIe box with a NIC per GPU: four members' NICs carry 100 GB/s, the
      // PCIe hops between them 32 GB/s).
      const double stride = static_cast<double>(geometry.stride);
      const double members = members_per_node(geometry, n, per_node);
      const double across_s = link_time_s(kind, sent, ring.steps, link, bandwidth * members);
      if (members <= 1.0) return across_s;
      const LinkSpec& inside = select_link(system, static_cast<int64_t>(members * stride));
      double inside_s = link_time_s(kind, sent, ring.steps, inside, inside.bandwidth_bytes_per_s);
      const double measured_dp = dp_hops_bytes_per_s(kind, group, inside, members);
      if (measured_dp > 0.0) inside_s = std::max(inside_s, sent / measured_dp);
      return std::max(across_s, inside_s);
    }
  }
  return link_time_s(kind, sent, ring.steps, link, bandwidth);
}

}  // namespace trainsim
