// Data-parallel communication by ZeRO stage against closed forms (collective
// counts and volumes per step), the exposure bounds of ZeRO-3's prefetched unit
// gathers, and ring attention across nodes (time/dp_optimizer_time.h,
// time/op_time.cpp).
#include <gtest/gtest.h>

#include "interop/interop_test_util.h"
#include "time/collectives.h"
#include "time/dp_optimizer_time.h"

namespace trainsim {
namespace {

// 8 GPUs of one H100 node, all data-parallel.
Config dp8(int zero) {
  nlohmann::json document = testing::base_config();
  document["training"]["tp"] = 1;
  document["training"]["pp"] = 1;
  document["training"]["sequence_parallel"] = false;
  document["training"]["zero_stage"] = zero;
  document["system"]["num_gpus"] = 8;
  return testing::parse_ok(document);
}

// L units of 40M parameters each: a unit's fp32 gradient is exactly one Megatron
// bucket (max(40M, 1M * 8) elements * 4 bytes), its bf16 parameters half of one.
constexpr double kUnitParams = 40e6;
constexpr double kBucketBytes = 160e6;

DpStage stage_of(double units, double passes, double forward_s, double backward_s) {
  DpStage s;
  s.dense = units * kUnitParams;
  s.passes = passes;
  DpChunk chunk;
  chunk.units.push_back({kUnitParams, 0.0, units});
  chunk.forward_s = forward_s;
  chunk.backward_s = backward_s;
  s.chunks.push_back(chunk);
  return s;
}

double one_bucket_s(const Config& c, CollectiveKind kind) {
  return collective_time_s(kind, kBucketBytes, Group::kDp, c.training.parallel, c.system,
                           c.training.nccl_nvls);
}

TEST(DpShardingTest, CollectiveCountsAndVolumesPerZeroStage) {
  const double units = 6.0, passes = 4.0;  // 6 layers, 4 micro-batches
  const double grads = units * kUnitParams * 4.0, params = units * kUnitParams * 2.0;
  const DpTime z1 = dp_comm_time(dp8(1), stage_of(units, passes, 1.0, 2.0));
  EXPECT_DOUBLE_EQ(z1.reduce_calls, 6.0);  // one reduce-scatter of the gradient per step
  EXPECT_DOUBLE_EQ(z1.gather_calls, 3.0);  // one all-gather of the parameters per step
  EXPECT_DOUBLE_EQ(z1.reduce_bytes, grads);
  EXPECT_DOUBLE_EQ(z1.gather_bytes, params);
  const DpTime z2 = dp_comm_time(dp8(2), stage_of(units, passes, 1.0, 2.0));
  EXPECT_DOUBLE_EQ(z2.reduce_calls, passes * 6.0);  // every micro-batch
  EXPECT_DOUBLE_EQ(z2.reduce_bytes, passes * grads);
  EXPECT_DOUBLE_EQ(z2.gather_calls, 3.0);
  EXPECT_DOUBLE_EQ(z2.gather_bytes, params);
  const Config c3 = dp8(3);
  const DpTime z3 = dp_comm_time(c3, stage_of(units, passes, 1.0, 2.0));
  // Every unit, every micro-batch: gathered before forward and before backward,
  // reduce-scattered after backward.
  EXPECT_DOUBLE_EQ(z3.gather_calls, 2.0 * passes * units);
  EXPECT_DOUBLE_EQ(z3.gather_bytes, 2.0 * passes * params);
  EXPECT_DOUBLE_EQ(z3.reduce_calls, passes * units);
  EXPECT_DOUBLE_EQ(z3.reduce_bytes, passes * grads);
  EXPECT_DOUBLE_EQ(z3.all_gather_s, 2.0 * passes * units * one_bucket_s(c3, CollectiveKind::kAllGather));
  EXPECT_DOUBLE_EQ(z3.reduce_scatter_s, passes * units * one_bucket_s(c3, CollectiveKind::kReduceScatter));
  EXPECT_GE(z3.total(), z2.total());
  EXPECT_GE(z2.total(), z1.total());
  EXPECT_GT(z3.gather_bytes + z3.reduce_bytes, z2.gather_bytes + z2.reduce_bytes);
  EXPECT_GT(z2.gather_bytes + z2.reduce_bytes, z1.gather_bytes + z1.reduce_bytes);
}

TEST(DpShardingTest, ZeroThreeExposesTheFirstGathersWhenComputeIsLongAndAllWhenItIsNone) {
  const double units = 6.0, passes = 4.0;
  Config c = dp8(3);
  c.training.overlap.grad_reduce = true;
  c.training.overlap.param_gather = true;
  const double gather = one_bucket_s(c, CollectiveKind::kAllGather);
  const double reduce = one_bucket_s(c, CollectiveKind::kReduceScatter);
  // Long compute: per pass the forward's first gather, the backward's first
  // gather and its last reduce-scatter stay exposed.
  const DpTime hidden = dp_comm_time(c, stage_of(units, passes, 100.0, 200.0));
  EXPECT_DOUBLE_EQ(hidden.exposed_s, passes * (2.0 * gather + reduce));
  // No compute: nothing hides.
  const DpTime bare = dp_comm_time(c, stage_of(units, passes, 0.0, 0.0));
  EXPECT_NEAR(bare.exposed_s, bare.total(), 1e-12 * bare.total());
  // Without overlap everything is exposed, whatever the compute.
  c.training.overlap.grad_reduce = false;
  c.training.overlap.param_gather = false;
  const DpTime serial = dp_comm_time(c, stage_of(units, passes, 100.0, 200.0));
  EXPECT_DOUBLE_EQ(serial.exposed_s, serial.total());
}

// Full recompute under ZeRO 3: the recomputed forward runs inside the unit's
// backward, on the parameters the backward's gather brought (Megatron-FSDP
// megatron_fsdp.py: "gather parameters once for both the recomputation and
// backward computation", lazy release in _post_forward during the recompute; torch
// FSDP2 _pre_forward returns early in the PRE_BACKWARD state). So the step moves
// the same gathers (two per unit and micro-batch), and the backward's gathers hide
// behind the recompute as well as the backward: exposure never grows.
TEST(DpShardingTest, FullRecomputeReusesTheBackwardGather) {
  nlohmann::json document = testing::base_config();
  document["training"]["zero_stage"] = 3;
  document["training"]["overlap_grad_reduce"] = true;
  document["training"]["overlap_param_gather"] = true;
  const auto plain = testing::estimate_ok(document);
  document["training"]["recompute"] = {{"granularity", "full"}, {"method", "uniform"}, {"num_layers", 1}};
  const auto recomputed = testing::estimate_ok(document);
  for (size_t s = 0; s < plain["time"]["stages"].size(); ++s) {
    const auto& a = plain["time"]["stages"][s];
    const auto& b = recomputed["time"]["stages"][s];
    ASSERT_GT(b["breakdown"]["recompute_s"].get<double>(), 0.0) << "stage " << s;
    EXPECT_DOUBLE_EQ(b["dp_comm_s"].get<double>(), a["dp_comm_s"].get<double>()) << "stage " << s;
    EXPECT_LE(b["dp_comm_exposed_s"].get<double>(), a["dp_comm_exposed_s"].get<double>()) << "stage " << s;
  }
}

TEST(DpShardingTest, NoTrafficWithoutADataParallelGroup) {
  nlohmann::json document = testing::base_config();
  document["training"]["zero_stage"] = 3;
  document["training"]["tp"] = 4;
  document["training"]["pp"] = 2;
  document["system"]["num_gpus"] = 8;  // dp 1
  const DpTime t = dp_comm_time(testing::parse_ok(document), stage_of(6.0, 4.0, 1.0, 2.0));
  EXPECT_EQ(t.total(), 0.0);
  EXPECT_EQ(t.exposed_s, 0.0);
}

// The same plan at ZeRO 1, 2, 3 (llama3-8b, tp 2 pp 2 dp 4 on 16 H100s): every
// stage's data-parallel traffic grows with the stage. Stage 0 holds the embedding
// (128256 x 4096 / tp) and 16 layers (attention 4096 x (4096 + 2 x 1024) + 4096 x 4096,
// MLP 3 x 4096 x 14336; / tp: 109M elements). Megatron-FSDP's queue of unsharded fp32
// gradients holds up to 1e9 elements (9 layers) besides the unit just completed and the
// one being produced: at most 10 layers and the embedding (memory/stage_statics.cpp
// add_fsdp_buffers). ZeRO 3 also prefetches 5e8 elements of bf16 weights: from the
// embedding, 5 layers ahead.
TEST(DpShardingTest, EstimatedDpCommGrowsWithTheZeroStage) {
  std::vector<nlohmann::json> results;
  for (int zero = 1; zero <= 3; ++zero) {
    nlohmann::json document = testing::base_config();
    document["training"]["zero_stage"] = zero;
    document["training"]["grad_reduce_in_bf16"] = false;
    results.push_back(testing::estimate_ok(document));
  }
  for (size_t s = 0; s < results[0]["time"]["stages"].size(); ++s) {
    const double z1 = results[0]["time"]["stages"][s]["dp_comm_s"];
    const double z2 = results[1]["time"]["stages"][s]["dp_comm_s"];
    const double z3 = results[2]["time"]["stages"][s]["dp_comm_s"];
    EXPECT_GT(z2, z1) << "stage " << s;
    EXPECT_GT(z3, z2) << "stage " << s;
  }
  const double embedding = 128256.0 * 4096.0 / 2.0;
  const double layer = (4096.0 * (4096.0 + 2.0 * 1024.0) + 4096.0 * 4096.0 + 3.0 * 4096.0 * 14336.0) / 2.0;
  const auto buffers = [&](int zero) {
    return results[static_cast<size_t>(zero - 1)]["memory"]["stages"][0]["buffers_bytes"].get<double>();
  };
  const double queued = 10.0 * layer + embedding;
  const double gathered = 5.0 * layer + embedding;
  EXPECT_NEAR(buffers(2) - buffers(1), 4.0 * queued, 1e-3 * 4.0 * queued);
  EXPECT_NEAR(buffers(3) - buffers(2), 2.0 * gathered, 1e-3 * 2.0 * gathered);
}

// A data-parallel ring that leaves an 8-GPU A100 PCIe box (tp 2, dp 8 on two
// boxes: four members per box) moves its bytes through four NICs (4 x 25 GB/s)
// and through the PCIe hops between those members (32 GB/s): the slower of the
// two bounds it, so it is never faster than the same bytes over PCIe alone
// (seed 50009 of the doubling-cp invariant: it was priced at 100 GB/s).
TEST(DpShardingTest, ARingAcrossNodesIsNoFasterThanItsHopsInsideANode) {
  nlohmann::json document = testing::base_config();
  document["system"] = {{"preset", "a100-pcie-80gb"}, {"num_gpus", 16}};
  document["training"]["tp"] = 2;
  document["training"]["pp"] = 1;
  document["training"]["zero_stage"] = 1;
  const Config c = testing::parse_ok(document);
  const LinkSpec& pcie = c.system.intra_node;
  const LinkSpec& nic = c.system.inter_node;
  ASSERT_LT(pcie.bandwidth_bytes_per_s * pcie.efficiency, 4.0 * nic.bandwidth_bytes_per_s * nic.efficiency);
  const double sent = 2.0 * 7.0 / 8.0 * kBucketBytes;  // ring all-reduce over 8 ranks
  const double ring_s = one_bucket_s(c, CollectiveKind::kAllReduce);
  EXPECT_GE(ring_s, sent / (pcie.bandwidth_bytes_per_s * pcie.efficiency));
  // On H100 nodes NVLink (450 GB/s) outruns four 400 Gb/s NICs: the NICs bound it.
  document["system"]["preset"] = "h100-sxm-80gb";
  const Config h = testing::parse_ok(document);
  const LinkSpec& ib = h.system.inter_node;
  const double nic_s = sent / (4.0 * ib.bandwidth_bytes_per_s * ib.efficiency);
  EXPECT_GE(one_bucket_s(h, CollectiveKind::kAllReduce), nic_s);
  EXPECT_LT(one_bucket_s(h, CollectiveKind::kAllReduce), 1.2 * nic_s);
}

}  // namespace
}  // namespace trainsim
