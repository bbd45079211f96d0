// Collectives below the link's datasheet bandwidth (time/collectives.h): the
// achieved bus bandwidth against its closed form (nccl-tests PERFORMANCE.md bus
// bandwidth, NCCL ring step counts), its dependence on message size and group
// size, the measured per-group-size figures of the A100-PCIe preset, and the
// calibration entry an estimate gives for the links it used.
#include <gtest/gtest.h>

#include <string>

#include "interop/interop_test_util.h"
#include "test_util.h"
#include "time/collectives.h"

namespace trainsim {
namespace {

LinkSpec link(double bandwidth, double latency, double efficiency) {
  LinkSpec out;
  out.bandwidth_bytes_per_s = bandwidth;
  out.latency_s = latency;
  out.efficiency = efficiency;  // no per-collective figure: every collective uses the link's
  return out;
}

// One H100 node's figures for the tuner (compute capability 9.0, 16 channels).
SystemSpec node_system() {
  SystemSpec system;
  system.gpu.compute_capability = 9.0;
  system.inter_node.latency_s = 14e-6;
  return system;
}

// With no measured figure on the link, an all-reduce / all-gather takes the time of
// NCCL's fastest pair (time/nccl_tuning.h); large messages run the Simple ring:
// base 8.4 us + steps x NCCL's NVLink step (3.4 us) + bytes x busbw factor /
// (bandwidth x efficiency) (NVIDIA/nccl src/graph/tuning.cc).
TEST(LinkBandwidthTest, BusBandwidthMatchesTheRingClosedForm) {
  const LinkSpec l = link(400e9, 3.4e-6, 0.8);
  const SystemSpec system = node_system();
  for (const int64_t n : {2, 4, 8, 64}) {
    const double bytes = 1e9;
    const double dn = static_cast<double>(n);
    // all-reduce: 2(n-1)/n of the data in 2(n-1) steps; all-gather: (n-1)/n in n-1.
    const double ar_sent = bytes * 2 * (dn - 1) / dn;
    const double ar = ar_sent / (8.4e-6 + 2 * (dn - 1) * 3.4e-6 + ar_sent / (400e9 * 0.8));
    EXPECT_NEAR(achieved_bus_bandwidth_bytes_per_s(CollectiveKind::kAllReduce, bytes, n, l, system, true), ar,
                ar * 1e-9);
    const double ag_sent = bytes * (dn - 1) / dn;
    const double ag = ag_sent / (8.4e-6 + (dn - 1) * 3.4e-6 + ag_sent / (400e9 * 0.8));
    EXPECT_NEAR(achieved_bus_bandwidth_bytes_per_s(CollectiveKind::kAllGather, bytes, n, l, system, true), ag,
                ag * 1e-9);
  }
}

TEST(LinkBandwidthTest, FractionGrowsWithMessageSizeAndFallsWithGroupSize) {
  const LinkSpec l = link(400e9, 3.4e-6, 0.8);
  const SystemSpec system = node_system();
  const auto bus = [&](double bytes, int64_t n) {
    return achieved_bus_bandwidth_bytes_per_s(CollectiveKind::kAllReduce, bytes, n, l, system, true);
  };
  EXPECT_LT(bus(1e6, 8), bus(1e8, 8));
  EXPECT_LT(bus(1e8, 8), bus(1e10, 8));
  EXPECT_NEAR(bus(1e12, 8), 400e9 * 0.8, 400e9 * 0.8 * 1e-3);  // the measured fraction, not 100%
  EXPECT_GT(bus(1e7, 2), bus(1e7, 8));
  EXPECT_GT(bus(1e7, 8), bus(1e7, 64));
  EXPECT_EQ(achieved_bus_bandwidth_bytes_per_s(CollectiveKind::kAllReduce, 1e9, 1, l, system, true), 0.0);
}

// The nvls flag means the same here as in collective_time_s: with NVLS measured on
// the link (H100: algbw 275 GB/s of 450, nccl-tests#212) a 1 GB all-reduce over 8
// GPUs reaches NVLS's bus bandwidth (algbw x 2(n-1)/n, 25 us per call) only when
// allowed; without it, the ring's closed form of the first test.
TEST(LinkBandwidthTest, NvlsFlagSelectsNvlsOnlyWhenAllowed) {
  LinkSpec l = link(450e9, 3.4e-6, 0.822);
  l.nvls_all_reduce_efficiency = 275.0 / 450.0;
  const SystemSpec system = node_system();
  const double bytes = 1e9, sent = bytes * 2 * 7 / 8.0;
  const double nvls = sent / (25e-6 + bytes / 275e9);
  const double ring = sent / (8.4e-6 + 14 * 3.4e-6 + sent / (450e9 * 0.822));
  EXPECT_NEAR(achieved_bus_bandwidth_bytes_per_s(CollectiveKind::kAllReduce, bytes, 8, l, system, true), nvls,
              nvls * 1e-9);
  EXPECT_NEAR(achieved_bus_bandwidth_bytes_per_s(CollectiveKind::kAllReduce, bytes, 8, l, system, false), ring,
              ring * 1e-9);
  EXPECT_GT(nvls, ring);
}

// The preset's per-group-size fits (SimuMax's collective microbenchmarks on the
// A100 PCIe box): 8 GPUs cross the host bridge and reach ~42% of PCIe Gen4 x16,
// 2 and 4 GPUs behind one switch ~70%.
TEST(LinkBandwidthTest, PcieAllReduceBusBandwidthDependsOnTheGroupSize) {
  nlohmann::json document = testing::base_config();
  document["system"] = {{"preset", "a100-pcie-80gb"}, {"num_gpus", 8}};
  document["training"]["pp"] = 1;
  const auto bus_of = [&](int64_t tp) {
    nlohmann::json d = document;
    d["training"]["tp"] = tp;
    const Config config = testing::parse_ok(d);
    const double bytes = 1e9, sent = bytes * 2.0 * static_cast<double>(tp - 1) / static_cast<double>(tp);
    return sent / collective_time_s(CollectiveKind::kAllReduce, bytes, Group::kTp, config.training.parallel,
                                    config.system, config.training.nccl_nvls);
  };
  const double bus2 = bus_of(2), bus4 = bus_of(4), bus8 = bus_of(8);
  EXPECT_GT(bus2, 0.68 * 32e9);
  EXPECT_LT(bus2, 0.71 * 32e9);
  EXPECT_GT(bus4, 0.68 * 32e9);
  EXPECT_LT(bus8, 0.43 * 32e9);
  EXPECT_GT(bus8, 0.40 * 32e9);
}

// The A100-PCIe preset's measured data-parallel bandwidths (SimuMax dp_fixed_bw) price
// a DP group that spans the host bridge with every other DP group of the box at once:
// tp 4 x dp 2 (pairs {0,4}..{3,7}) reduce-scatters at 4.19 GB/s per rank, tp 2 x dp 4
// at 7.52; a dp 4 group inside one half (tp 1, pp 2: {0,1,2,3}) keeps the 4-GPU tier,
// and a group across nodes is no faster inside each node.
TEST(LinkBandwidthTest, PcieDataParallelGroupsAcrossTheHostBridgeShareIt) {
  nlohmann::json document = testing::base_config();
  document["system"] = {{"preset", "a100-pcie-80gb"}, {"num_gpus", 8}};
  const auto per_rank_of = [&](int64_t tp, int64_t pp, int64_t gpus = 8) {
    nlohmann::json d = document;
    d["system"]["num_gpus"] = gpus;
    d["training"]["tp"] = tp;
    d["training"]["pp"] = pp;
    const Config config = testing::parse_ok(d);
    const ParallelSpec& p = config.training.parallel;
    const double bytes = 1e9, n = static_cast<double>(p.dp);
    return bytes * (n - 1.0) / n /
           collective_time_s(CollectiveKind::kReduceScatter, bytes, Group::kDp, p, config.system,
                             config.training.nccl_nvls);
  };
  EXPECT_NEAR(per_rank_of(4, 1), 4.1876e9, 1e6);
  EXPECT_NEAR(per_rank_of(2, 1), 7.5162e9, 1e6);
  const double inside = per_rank_of(1, 2);  // 4-GPU tier: ~0.69 of 32 GB/s
  EXPECT_GT(inside, 0.6 * 32e9);
  EXPECT_LT(inside, 0.7 * 32e9);
  // Two nodes, tp 4 x dp 4: each group ({0,4,8,12}) has two members per node whose hop
  // crosses the bridge beside the other three groups' (no faster than the pair figure),
  // however fast the NICs.
  EXPECT_LE(per_rank_of(4, 1, 16), 4.1876e9 * (1 + 1e-9));
}

// The same bound where the network's collective is measured (priced alpha-beta, not
// by NCCL's tuner): the DP group's hops inside each node stay at the node's DP figure.
TEST(LinkBandwidthTest, MeasuredNetworkCollectiveKeepsTheNodesDataParallelBound) {
  SystemSpec system;
  system.gpus_per_node = 8;
  system.intra_node = link(32e9, 0.0, 1.0);
  system.intra_node.dp_reduce_scatter_bytes_per_s[2] = 4e9;
  system.inter_node = link(25e9, 0.0, 1.0);
  system.inter_node.collectives[static_cast<size_t>(CollectiveKind::kReduceScatter)].efficiency = 0.9;
  ParallelSpec p;
  p.tp = 4;
  p.dp = 4;  // 16 GPUs: DP groups {0,4,8,12}.., two members per node
  const double bytes = 1e9, sent = bytes * 3.0 / 4.0;
  const double t = collective_time_s(CollectiveKind::kReduceScatter, bytes, Group::kDp, p, system, true);
  EXPECT_NEAR(t, sent / 4e9, 1e-12);  // the NICs (2 x 22.5 GB/s) and PCIe (32) are faster
}

std::string kind_of_figure(const nlohmann::json& result, const std::string& figure) {
  for (const auto& f : result["calibration"]["figures"]) {
    if (f["figure"] == figure) return f["kind"];
  }
  return "";
}

TEST(LinkBandwidthTest, AnEstimateSaysWhetherItsLinksAreCalibrated) {
  // 16 H100s: both links used, each with its nccl-tests figure (ring busbw over NVLink,
  // NDR per NIC) and the NVLS all-reduce figure.
  const nlohmann::json h100 = testing::estimate_ok(testing::base_config());
  EXPECT_EQ(kind_of_figure(h100, "/intra_node/efficiency"), "microbenchmark") << h100["calibration"];
  EXPECT_EQ(kind_of_figure(h100, "/intra_node/nvls_all_reduce_efficiency"), "microbenchmark")
      << h100["calibration"];
  EXPECT_EQ(kind_of_figure(h100, "/inter_node/efficiency"), "microbenchmark") << h100["calibration"];
  // NCCL_NVLS_ENABLE=0: the NVLS figure is not used.
  nlohmann::json no_nvls = testing::base_config();
  no_nvls["training"]["nccl_nvls"] = false;
  EXPECT_EQ(kind_of_figure(testing::estimate_ok(no_nvls), "/intra_node/nvls_all_reduce_efficiency"), "");
  // 16 B200s: the NVLink ring figure was measured on HGX B300 (assumed for B200).
  nlohmann::json b200 = testing::base_config();
  b200["system"]["preset"] = "b200-sxm-180gb";
  const nlohmann::json b = testing::estimate_ok(b200);
  EXPECT_EQ(kind_of_figure(b, "/intra_node/efficiency"), "assumed") << b["calibration"];
  EXPECT_FALSE(b["calibration"]["calibrated"].get<bool>());
  // 8 A100 PCIe GPUs in one node: the measured per-group-size tiers, no inter-node figure.
  nlohmann::json pcie = testing::base_config();
  pcie["system"] = {{"preset", "a100-pcie-80gb"}, {"num_gpus", 8}};
  const nlohmann::json result = testing::estimate_ok(pcie);
  EXPECT_EQ(kind_of_figure(result, "/intra_node_tiers"), "microbenchmark") << result["calibration"];
  EXPECT_EQ(kind_of_figure(result, "/inter_node/efficiency"), "");
  // One GPU: no link figure at all.
  nlohmann::json one = testing::base_config();
  one["training"]["tp"] = 1;
  one["training"]["pp"] = 1;
  one["training"]["sequence_parallel"] = false;
  one["system"]["num_gpus"] = 1;
  const nlohmann::json single = testing::estimate_ok(one);
  EXPECT_EQ(kind_of_figure(single, "/intra_node/efficiency"), "");
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// An all-to-all across nodes: a rank sends 1/n of the tensor to each of the n members
// (its own share stays local) and the share addressed to members on other nodes
// crosses its NIC, (n - members per node) / n of the tensor, in n - 1 alpha-beta steps
// (time/collectives.cpp). Expert groups have stride etp (etp-ep-edp order), so an ep 8
// group over etp 2 has 4 members per 8-GPU node.
TEST(LinkBandwidthTest, AllToAllAcrossNodesSendsTheShareForOtherNodesOverTheNic) {
  SystemSpec system = node_system();
  system.gpus_per_node = 8;
  system.intra_node = link(450e9, 3e-6, 0.8);
  system.inter_node = link(50e9, 5e-6, 0.9);
  const double bytes = 1e9;
  const auto a2a = [&](int64_t ep, int64_t etp) {
    ParallelSpec p;
    p.ep = ep;
    p.etp = etp;
    p.dp = ep * etp;  // world = dp: one expert group of ep x etp ranks
    return collective_time_s(CollectiveKind::kAllToAll, bytes, Group::kEp, p, system, true);
  };
  const auto closed_form = [&](double n, double members) {
    return bytes * (n - members) / n / (50e9 * 0.9) + (n - 1.0) * 5e-6;
  };
  EXPECT_NEAR(a2a(16, 1), closed_form(16, 8), 1e-12);  // 2 nodes: half leaves
  EXPECT_NEAR(a2a(32, 1), closed_form(32, 8), 1e-12);  // 4 nodes: 3/4 leaves
  EXPECT_NEAR(a2a(8, 2), closed_form(8, 4), 1e-12);    // stride 2: 4 members per node (was free)
  EXPECT_NEAR(a2a(4, 8), closed_form(4, 1), 1e-12);    // stride 8: one member per node
  // Inside one node the all-to-all stays on NVLink: (n-1)/n of the tensor.
  EXPECT_NEAR(a2a(8, 1), bytes * 7.0 / 8.0 / (450e9 * 0.8) + 7.0 * 3e-6, 1e-12);
}

}  // namespace
}  // namespace trainsim
