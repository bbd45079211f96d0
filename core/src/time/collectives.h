// Communication groups and collective times.
//
// Rank order is Megatron's default tp-cp-ep-dp-pp (tp innermost;
// megatron/core/parallel_state.py RankGenerator), expert groups etp-ep-edp.
// A group of n ranks with stride s spans n * s consecutive ranks: it stays on
// NVLink/PCIe when the span fits in a node, else it crosses the inter-node
// fabric. Time (ring alpha-beta model; Thakur et al. 2005, NCCL performance
// notes): all-reduce moves 2(n-1)/n of the data in 2(n-1) steps, all-gather,
// reduce-scatter and all-to-all (n-1)/n in n-1 steps, p2p the data in one
// (the step counts of NVIDIA/nccl src/graph/tuning.cc ncclTopoTuneModel).
// All-reduce, all-gather and reduce-scatter without a measured figure are priced
// as NCCL's tuner picks them (ring or tree, LL / LL128 / Simple: time/nccl_tuning.h).
// A collective runs below the link's datasheet bandwidth: its bus bandwidth
// (nccl-tests doc/PERFORMANCE.md: algorithm bandwidth x 2(n-1)/n for
// all-reduce, x (n-1)/n for the others) reaches at most the link's measured
// fraction (LinkSpec.efficiency, or the collective's own measured figure per
// group-size tier), and the per-step latency lowers it further for small
// messages and large groups: see achieved_bus_bandwidth_bytes_per_s.
#pragma once

#include <cstdint>

#include "model/op.h"
#include "trainsim/spec.h"

namespace trainsim {

enum class Group : uint8_t { kTp, kCp, kEp, kEtp, kDp, kEdp, kPp };

struct GroupGeometry {
  int64_t size = 1;    ///< ranks in the group
  int64_t stride = 1;  ///< rank distance between members
  int64_t span() const { return size * stride; }
};

GroupGeometry group_geometry(Group group, const ParallelSpec& parallel, int64_t world);

// Seconds for one collective of `bytes` (full logical tensor) over `group`.
// nvls: NCCL may use NVLink SHARP where the link has a figure for it
// (training.nccl_nvls, NCCL_NVLS_ENABLE).
double collective_time_s(CollectiveKind kind, double bytes, Group group,
                         const ParallelSpec& parallel, const SystemSpec& system, bool nvls);

// The bus bandwidth one collective of `bytes` (full logical tensor) over `ranks`
// members of one node on `link` achieves: bytes x busbw factor / time. All-reduce,
// all-gather and reduce-scatter take the time of the algorithm and protocol NCCL's
// tuner picks (time/nccl_tuning.h: a fixed latency per call plus per-step
// latencies, and the protocol's share of bandwidth x efficiency); a collective with
// a measured figure on the link, all-to-all and p2p take steps x latency + bytes x
// factor / (bandwidth x efficiency). It tends to bandwidth x efficiency for large
// messages and depends on size and group size through the latencies. nvls as in
// collective_time_s.
double achieved_bus_bandwidth_bytes_per_s(CollectiveKind kind, double bytes, int64_t ranks,
                                          const LinkSpec& link, const SystemSpec& system, bool nvls);

// One step of a ring of point-to-point transfers over `group` (ring attention's
// K/V exchange): every member sends `bytes` to its neighbour at once, so the step
// takes as long as its slowest hop. A ring whose span leaves the node has a hop
// through one GPU's NIC (rail-optimised: the sender's own NIC, at the inter-node
// per-GPU bandwidth); inside a node the hops use the link of the group's span.
double ring_step_time_s(double bytes, Group group, const ParallelSpec& parallel,
                        const SystemSpec& system);

// One point-to-point transfer between adjacent pipeline stages.
double p2p_time_s(double bytes, bool crosses_nodes, const SystemSpec& system);

// Whether stage `stage` and stage + 1 sit on different nodes (pp is the
// outermost dimension: stage s owns ranks [s * world/pp, (s + 1) * world/pp)).
bool pipeline_boundary_crosses_nodes(int64_t stage, int64_t pp, int64_t world,
                                     int64_t gpus_per_node);

Group comm_group(CommGroup group);
CollectiveKind collective_kind(Collective collective);

}  // namespace trainsim
