// NCCL's algorithm / protocol choice (time/nccl_tuning.h) against closed forms
// from NVIDIA/nccl src/graph/tuning.cc: ring and tree step counts and latencies,
// the protocols' bandwidth shares, and which pair wins for small and large
// messages inside a node and across many nodes.
#include <gtest/gtest.h>

#include "interop/interop_test_util.h"
#include "time/collectives.h"
#include "time/nccl_tuning.h"

namespace trainsim {
namespace {

constexpr double kUs = 1e-6;

NcclCollective call(CollectiveKind kind, double bytes, int64_t ranks, int64_t nodes, double bus) {
  NcclCollective c;
  c.kind = kind;
  c.bytes = bytes;
  c.ranks = ranks;
  c.nodes = nodes;
  c.bus_bandwidth_bytes_per_s = bus;
  c.intra_step_latency_s = 3.4 * kUs;  // NCCL's NVLink ring / Simple step
  c.inter_step_latency_s = 14.0 * kUs;  // NCCL's network ring / Simple step
  c.compute_capability = 9.0;
  c.channels = 16;
  return c;
}

// One node of 8: the ring takes 2(n-1) steps for all-reduce and n-1 for
// all-gather / reduce-scatter, each at the protocol's NVLink step latency, after
// the protocol's base latency; Simple moves bytes x busbw factor at the bus
// bandwidth, LL128 at 120/128 of it, LL at half (below Hopper's 141 GB/s cap).
TEST(NcclTuningTest, RingStepsAndLatenciesInsideANode) {
  const double bus = 400e9;
  const NcclCollective ar = call(CollectiveKind::kAllReduce, 1e8, 8, 1, bus);
  const NcclChoice simple = nccl_time(ar, NcclAlgorithm::kRing, NcclProtocol::kSimple);
  EXPECT_NEAR(simple.latency_s, (8.4 + 14 * 3.4) * kUs, 1e-12);
  EXPECT_NEAR(simple.time_s, simple.latency_s + 1e8 * 2 * 7 / 8 / bus, 1e-12);
  const NcclChoice ll = nccl_time(ar, NcclAlgorithm::kRing, NcclProtocol::kLl);
  EXPECT_NEAR(ll.latency_s, (6.6 + 14 * 0.6) * kUs, 1e-12);
  EXPECT_NEAR(ll.bus_bandwidth_bytes_per_s, 141e9, 1.0);  // min(0.5 x 400, 141) GB/s
  const NcclChoice ll128 = nccl_time(ar, NcclAlgorithm::kRing, NcclProtocol::kLl128);
  EXPECT_NEAR(ll128.latency_s, (14.0 + 14 * 1.9) * kUs, 1e-12);
  EXPECT_NEAR(ll128.bus_bandwidth_bytes_per_s, 0.92 * bus, 1.0);
  const NcclCollective ag = call(CollectiveKind::kAllGather, 1e8, 8, 1, bus);
  const NcclChoice ag_simple = nccl_time(ag, NcclAlgorithm::kRing, NcclProtocol::kSimple);
  EXPECT_NEAR(ag_simple.latency_s, (8.4 + 7 * 3.4) * kUs, 1e-12);
  EXPECT_NEAR(ag_simple.time_s, ag_simple.latency_s + 1e8 * 7 / 8 / bus, 1e-12);
  // NCCL offers the tree for all-reduce only.
  EXPECT_LT(nccl_time(ag, NcclAlgorithm::kTree, NcclProtocol::kSimple).time_s, 0.0);
}

// Two nodes of 8 (16 ranks): 30 steps, 2 of them between nodes at the network's
// latency, the other 28 at max(NVLink step, network post overhead: 1 us, x3 for
// Simple); Simple all-reduce adds the ring plateau (x1.4 from Ampere on).
// A tree over 8 nodes of 8: 2 x ((ppn - 1) intra + log2(nodes) inter) steps.
TEST(NcclTuningTest, RingAndTreeLatenciesAcrossNodes) {
  const NcclCollective ar = call(CollectiveKind::kAllReduce, 1e8, 16, 2, 400e9);
  EXPECT_NEAR(nccl_time(ar, NcclAlgorithm::kRing, NcclProtocol::kSimple).latency_s,
              (8.4 + 28 * 3.4 + 2 * 14.0) * 1.4 * kUs, 1e-12);
  EXPECT_NEAR(nccl_time(ar, NcclAlgorithm::kRing, NcclProtocol::kLl).latency_s,
              (6.6 + 28 * 1.0 + 2 * 2.7) * kUs, 1e-12);
  const NcclCollective tree = call(CollectiveKind::kAllReduce, 1e8, 64, 8, 400e9);
  EXPECT_NEAR(nccl_time(tree, NcclAlgorithm::kTree, NcclProtocol::kSimple).latency_s,
              (8.4 + 2 * (7 * 4.0 + 3 * 14.0)) * kUs, 1e-12);
  EXPECT_NEAR(nccl_time(tree, NcclAlgorithm::kTree, NcclProtocol::kLl).latency_s,
              (6.8 + 2 * (7 * 0.6 + 3 * 5.0)) * kUs, 1e-12);
  // Tree time: latency + 2 x bytes / (0.92 x bus x the size correction: Simple at
  // 1e8 B, log2(1e8 / 64) = 20, is 0.8).
  const NcclChoice t = nccl_time(tree, NcclAlgorithm::kTree, NcclProtocol::kSimple);
  EXPECT_NEAR(t.time_s, t.latency_s + 2 * 1e8 / (0.92 * 400e9 * 0.8), 1e-12);
}

// The tuner's pick: a small tensor-parallel all-reduce inside a node runs LL (its
// 15 us of latency against Simple's 56 us); a large one the Simple ring; across
// 128 nodes a medium all-reduce takes the tree (log2 of the nodes, not 2(n-1)
// ring steps) and a very large one the ring (its 2(n-1)/n bytes, not 2).
TEST(NcclTuningTest, FastestPairFollowsMessageSizeAndScale) {
  const NcclChoice small = nccl_fastest(call(CollectiveKind::kAllReduce, 64e3, 8, 1, 450e9));
  EXPECT_EQ(small.algorithm, NcclAlgorithm::kRing);
  EXPECT_EQ(small.protocol, NcclProtocol::kLl);
  const NcclChoice large = nccl_fastest(call(CollectiveKind::kAllReduce, 1e9, 8, 1, 450e9));
  EXPECT_EQ(large.algorithm, NcclAlgorithm::kRing);
  EXPECT_EQ(large.protocol, NcclProtocol::kSimple);
  const NcclChoice medium = nccl_fastest(call(CollectiveKind::kAllReduce, 4e6, 1024, 128, 400e9));
  EXPECT_EQ(medium.algorithm, NcclAlgorithm::kTree);
  const NcclChoice huge = nccl_fastest(call(CollectiveKind::kAllReduce, 4e10, 1024, 128, 400e9));
  EXPECT_EQ(huge.algorithm, NcclAlgorithm::kRing);
  // The pick is never slower than any pair NCCL offers.
  for (const double bytes : {1e3, 1e5, 1e7, 1e9}) {
    const NcclCollective c = call(CollectiveKind::kAllReduce, bytes, 64, 8, 400e9);
    const double best = nccl_fastest(c).time_s;
    for (const NcclAlgorithm a : {NcclAlgorithm::kRing, NcclAlgorithm::kTree}) {
      for (const NcclProtocol p : {NcclProtocol::kLl, NcclProtocol::kLl128, NcclProtocol::kSimple}) {
        EXPECT_LE(best, nccl_time(c, a, p).time_s);
      }
    }
  }
}

// Through the estimator: a tp 8 all-reduce of a small activation on the H100
// preset costs LL's latency, not 14 Simple ring steps (it cost 14 x 3 us before).
TEST(NcclTuningTest, SmallTensorParallelAllReduceGetsTheLowLatencyProtocol) {
  nlohmann::json document = testing::base_config();
  document["training"]["tp"] = 8;
  document["training"]["pp"] = 1;
  const Config config = testing::parse_ok(document);
  const double bytes = 32e3;
  const double t = collective_time_s(CollectiveKind::kAllReduce, bytes, Group::kTp,
                                     config.training.parallel, config.system);
  const double ll = (6.6 + 14 * 0.6) * kUs + bytes * 2 * 7 / 8 / 141e9;
  EXPECT_NEAR(t, ll, 1e-12);
  EXPECT_LT(t, 14 * config.system.intra_node.latency_s);
}

}  // namespace
}  // namespace trainsim
