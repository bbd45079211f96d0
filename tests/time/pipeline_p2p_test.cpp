// Stage-boundary transfers (time/step_time.h pipeline_boundary_p2p_s): the whole
// activation from every tensor-parallel rank under Megatron-Core, its 1/tp slice
// under sequence parallelism, and Megatron-LM's 2021-2023 scatter/gather (Narayanan
// et al. 2021, section 4.1): each rank sends 1/tp and the receiver all-gathers the
// slices over the TP group before it can start.
#include <gtest/gtest.h>

#include "interop/interop_test_util.h"
#include "test_util.h"
#include "time/collectives.h"
#include "time/step_time.h"

namespace trainsim {
namespace {

using nlohmann::json;
using testing::estimate_ok;
using testing::parse_ok;

// Llama-3 8B (hidden 4096) at tp 8 x pp 2 on two 8-GPU nodes: the boundary between the
// stages crosses the network. One micro-batch of 4096 tokens: 4096 x 4096 x 2 bytes.
json two_node_pipeline(const char* preset) {
  return {{"model", "llama3-8b"},
          {"training",
           {{"seq_len", 4096}, {"micro_batch_size", 1}, {"num_micro_batches", 8}, {"tp", 8}, {"pp", 2}}},
          {"system", {{"preset", preset}, {"num_gpus", 16}}}};
}

constexpr double kActivationBytes = 4096.0 * 4096.0 * 2.0;

TEST(PipelineP2pTest, ScatterGatherSendsASliceAndGathersItInsideTheNode) {
  for (const char* preset : {"a100-sxm-80gb", "h100-sxm-80gb"}) {
    json plain = two_node_pipeline(preset);
    json split = plain;
    split["training"]["scatter_gather_tensors_in_pipeline"] = true;
    json sp = split;
    sp["training"]["sequence_parallel"] = true;
    const Config whole_config = parse_ok(plain);
    const Config split_config = parse_ok(split);
    const Config sp_config = parse_ok(sp);
    const SystemSpec& system = whole_config.system;

    const double whole = pipeline_boundary_p2p_s(whole_config)[0];
    const double sliced = pipeline_boundary_p2p_s(split_config)[0];
    const double sequence_parallel = pipeline_boundary_p2p_s(sp_config)[0];
    const double send_whole = p2p_time_s(kActivationBytes, true, system);
    const double send_slice = p2p_time_s(kActivationBytes / 8.0, true, system);
    const double gather = collective_time_s(CollectiveKind::kAllGather, kActivationBytes, Group::kTp,
                                            split_config.training.parallel, system, false);

    EXPECT_DOUBLE_EQ(whole, send_whole) << preset;
    EXPECT_DOUBLE_EQ(sliced, send_slice + gather) << preset;
    // Under SP the tensor already is the slice: nothing to gather (Megatron skips it).
    EXPECT_DOUBLE_EQ(sequence_parallel, send_slice) << preset;
    // The gather rides NVLink, an order of magnitude above the NIC: the split at least
    // halves the transfer (3.5x on H100, where NVLink is 9x one NIC).
    EXPECT_GT(gather, 0.0) << preset;
    EXPECT_LT(sliced, whole / 2.0) << preset;
  }
}

TEST(PipelineP2pTest, ScatterGatherLowersTheExposedPipelineCommunication) {
  json plain = two_node_pipeline("a100-sxm-80gb");
  plain["training"]["dtype"] = "fp16";
  json split = plain;
  split["training"]["scatter_gather_tensors_in_pipeline"] = true;
  const json whole = estimate_ok(plain);
  const json sliced = estimate_ok(split);
  const auto part = [](const json& r, const char* key) { return r["time"]["breakdown"][key].get<double>(); };
  EXPECT_GT(part(whole, "pp_comm_exposed_s"), 0.0);
  EXPECT_LT(part(sliced, "pp_comm_exposed_s"), part(whole, "pp_comm_exposed_s"));
  EXPECT_LT(sliced["time"]["iteration_s"].get<double>(), whole["time"]["iteration_s"].get<double>());
  // Compute is untouched: the switch moves only pipeline communication.
  EXPECT_DOUBLE_EQ(part(sliced, "forward_s"), part(whole, "forward_s"));
  EXPECT_DOUBLE_EQ(part(sliced, "backward_s"), part(whole, "backward_s"));
}

TEST(PipelineP2pTest, InsideOneNodeTheSplitChangesLittle) {
  // tp 4 x pp 2 on 8 GPUs: the boundary stays on NVLink, where sending the slice and
  // gathering it costs about what sending the whole tensor does.
  json plain = two_node_pipeline("h100-sxm-80gb");
  plain["training"]["tp"] = 4;
  plain["system"]["num_gpus"] = 8;
  json split = plain;
  split["training"]["scatter_gather_tensors_in_pipeline"] = true;
  const double whole = pipeline_boundary_p2p_s(parse_ok(plain))[0];
  const double sliced = pipeline_boundary_p2p_s(parse_ok(split))[0];
  EXPECT_GT(sliced, whole / 4.0);
  EXPECT_LT(sliced, whole * 2.0);
}

// Megatron-LM's overlap_p2p_comm (the default since 2023-10): the interleaved schedule's
// steady phase sends and receives beside compute. Llama-3 8B, tp 8 x pp 4 x vpp 2 on four
// nodes, every stage boundary on the network.
TEST(PipelineP2pTest, OverlappedInterleavedTransfersHideBehindCompute) {
  json config = two_node_pipeline("h100-sxm-80gb");
  config["training"]["pp"] = 4;
  config["training"]["vpp"] = 2;
  config["training"]["num_micro_batches"] = 16;
  config["system"]["num_gpus"] = 32;
  json blocking = config;
  blocking["training"]["overlap_p2p_comm"] = false;
  const json on = estimate_ok(config);
  const json off = estimate_ok(blocking);
  const auto part = [](const json& r, const char* key) { return r["time"]["breakdown"][key].get<double>(); };
  EXPECT_GT(part(off, "pp_comm_exposed_s"), 0.0);
  EXPECT_LT(part(on, "pp_comm_exposed_s"), part(off, "pp_comm_exposed_s") / 2.0);
  EXPECT_LT(on["time"]["iteration_s"].get<double>(), off["time"]["iteration_s"].get<double>());
  EXPECT_DOUBLE_EQ(part(on, "forward_s"), part(off, "forward_s"));
  // The same transfers, hidden or not: every stage reports them whole, above what it exposed.
  for (size_t s = 0; s < 4; ++s) {
    const json& stage_on = on["time"]["stages"][s];
    EXPECT_DOUBLE_EQ(stage_on["pp_comm_s"].get<double>(), off["time"]["stages"][s]["pp_comm_s"].get<double>());
    EXPECT_GT(stage_on["pp_comm_s"].get<double>(), stage_on["breakdown"]["pp_comm_exposed_s"].get<double>());
  }
  // Without virtual stages Megatron-LM turns the overlap off: the switch changes nothing.
  config["training"]["vpp"] = 1;
  blocking["training"]["vpp"] = 1;
  EXPECT_DOUBLE_EQ(estimate_ok(config)["time"]["iteration_s"].get<double>(),
                   estimate_ok(blocking)["time"]["iteration_s"].get<double>());
}

TEST(PipelineP2pTest, BlockingInterleavedTransfersNeedMoreThanTwoStages) {
  // Megatron-LM arguments.py: without p2p overlap the interleaved schedule needs pp > 2.
  json config = two_node_pipeline("h100-sxm-80gb");
  config["training"]["vpp"] = 2;
  config["training"]["overlap_p2p_comm"] = false;
  const json out = testing::run_estimate(config);
  ASSERT_FALSE(out["ok"].get<bool>());
  EXPECT_EQ(out["errors"][0]["path"], "/training/overlap_p2p_comm") << out.dump();
  config["training"]["overlap_p2p_comm"] = true;
  estimate_ok(config);
}

}  // namespace
}  // namespace trainsim
