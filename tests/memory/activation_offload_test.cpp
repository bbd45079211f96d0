// Activation CPU offload (Megatron-LM --cpu-offloading-num-layers; Transformer Engine
// transformer_engine/pytorch/cpu_offload.py get_cpu_offload_context): the first N layers'
// saved activations leave HBM for pinned host memory, and the GPU waits for the part of
// their D2H copies (forward) and H2D reloads (backward) that the layers' compute does not hide.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include "interop/interop_test_util.h"
#include "test_util.h"
#include "time/activation_offload_time.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

using nlohmann::json;

json offload_config(int64_t layers) {
  json config = testing::base_config();
  config["training"]["pp"] = 1;
  config["training"]["activation_offload_layers"] = layers;
  return config;
}

const json& stage0(const json& result) { return result["memory"]["stages"][0]; }
double number(const json& j, const char* key) { return j[key].get<double>(); }

TEST(ActivationOffloadTest, OffloadedLayersSavedBytesMoveFromHbmToHost) {
  const json none = testing::estimate_ok(offload_config(0));
  const json four = testing::estimate_ok(offload_config(4));
  const json eight = testing::estimate_ok(offload_config(8));
  EXPECT_EQ(number(stage0(none), "host_bytes"), 0.0);
  const double moved = number(stage0(four), "host_bytes");
  ASSERT_GT(moved, 0.0);
  // Identical layers: twice the layers, twice the bytes.
  EXPECT_NEAR(number(stage0(eight), "host_bytes"), 2.0 * moved, 1e-9 * moved);
  // What reaches the host is what one micro-batch no longer saves on the GPU ...
  EXPECT_NEAR(number(stage0(none), "activations_per_micro_batch_bytes") -
                  number(stage0(four), "activations_per_micro_batch_bytes"),
              moved, 1e-9 * moved);
  // ... and the allocated peak (pp 1: one micro-batch in flight) falls by that much.
  EXPECT_NEAR(number(stage0(none), "peak_bytes") - number(stage0(four), "peak_bytes"), moved, 1e-6 * moved);
  // The allocation trace's replay sees the same saving (up to the allocator's rounding).
  const double replay_none = stage0(none)["allocator"]["peak_allocated_bytes"].get<double>();
  const double replay_four = stage0(four)["allocator"]["peak_allocated_bytes"].get<double>();
  EXPECT_NEAR(replay_none - replay_four, moved, 0.01 * moved);
}

TEST(ActivationOffloadTest, ScheduleOfCopiesInClosedForm) {
  // 4 layers, the first 2 offloaded: forward 1 s, backward 2 s per layer.
  std::vector<OffloadLayer> layers(4, OffloadLayer{1.0, 2.0, 0.0});
  layers[0].offloaded_bytes = layers[1].offloaded_bytes = 3.0;
  // A fast link (0.5 s a copy): layer 0's copy runs beside layer 1, layer 1's beside layer 2.
  const OffloadTime fast = activation_offload_time(layers, 6.0);
  EXPECT_EQ(fast.forward_exposed_s, 0.0);
  EXPECT_EQ(fast.backward_exposed_s, 0.0);
  EXPECT_DOUBLE_EQ(fast.d2h_s, 1.0);
  EXPECT_DOUBLE_EQ(fast.h2d_s, 1.0);
  // A slow link (3 s a copy). Forward: copy 0 runs 1-4, layer 2 (which frees layer 0) waits
  // 2-4; copy 1 runs 4-7, layer 3 waits 5-7: 4 s exposed. Backward: reload 1 starts with
  // layer 2's backward (0 + 2 = 2, ends 5), reload 0 then 5-8; layer 1's backward waits 4-5,
  // layer 0's 7-8: 2 s exposed.
  const OffloadTime slow = activation_offload_time(layers, 1.0);
  EXPECT_DOUBLE_EQ(slow.forward_exposed_s, 4.0);
  EXPECT_DOUBLE_EQ(slow.backward_exposed_s, 2.0);
  EXPECT_DOUBLE_EQ(slow.d2h_s, 6.0);
  // Nothing offloaded, nothing exposed.
  EXPECT_EQ(activation_offload_time(std::vector<OffloadLayer>(4, OffloadLayer{1.0, 2.0, 0.0}), 1.0).d2h_s, 0.0);
}

json with_link(json config, double gb_per_s) {
  config["system"]["host"] = {{"memory_gib_per_gpu", 1000}, {"memory_bandwidth_gb_per_s_per_gpu", 200},
                              {"link_gb_per_s", gb_per_s}, {"link_efficiency", 1.0}};
  return config;
}

TEST(ActivationOffloadTest, ExposedCopyTimeIsZeroBehindLongComputeAndPositiveOnASlowLink) {
  const auto exposed = [](const json& r) { return r["time"]["breakdown"]["activation_offload_exposed_s"].get<double>(); };
  const json none = testing::estimate_ok(with_link(offload_config(0), 1e5));
  const json fast = testing::estimate_ok(with_link(offload_config(8), 1e5));
  const json slow = testing::estimate_ok(with_link(offload_config(8), 0.5));
  EXPECT_EQ(exposed(none), 0.0);
  EXPECT_EQ(exposed(fast), 0.0);
  EXPECT_NEAR(fast["time"]["iteration_s"].get<double>(), none["time"]["iteration_s"].get<double>(),
              1e-9 * none["time"]["iteration_s"].get<double>());
  ASSERT_GT(exposed(slow), 0.0);
  const double longer = slow["time"]["iteration_s"].get<double>() - fast["time"]["iteration_s"].get<double>();
  EXPECT_GT(longer, 0.0);
  EXPECT_LE(longer, exposed(slow) * (1.0 + 1e-9));
  // Half a GB/s is far slower than a layer's compute: nearly all of the copies are exposed,
  // the forward's D2H and the backward's H2D of 8 layers' saved bytes per micro-batch.
  const double bytes = number(stage0(slow), "host_bytes");
  const double micro_batches = 64.0 / 8.0;  // global 64 over dp 8
  EXPECT_GT(exposed(slow), 0.8 * micro_batches * 2.0 * bytes / 0.5e9);
  EXPECT_LE(exposed(slow), micro_batches * 2.0 * bytes / 0.5e9);
}

std::string first_error(const json& config) {
  const json envelope = testing::run_estimate(config);
  if (envelope.value("ok", false)) return "";
  return envelope["errors"][0]["path"].get<std::string>() + ": " + envelope["errors"][0]["message"].get<std::string>();
}

TEST(ActivationOffloadTest, MegatronsLimitsAreErrorsAtTheKey) {
  const std::string path = "/training/activation_offload_layers";
  json pipelined = offload_config(4);
  pipelined["training"]["pp"] = 2;
  EXPECT_EQ(first_error(pipelined).rfind(path + ": Megatron-LM has no activation CPU offload with pipeline", 0), 0u)
      << first_error(pipelined);
  json recompute = offload_config(4);
  recompute["training"]["recompute"] = {{"granularity", "full"}, {"method", "uniform"}, {"num_layers", 1}};
  EXPECT_EQ(first_error(recompute).rfind(path + ": Megatron-LM refuses", 0), 0u) << first_error(recompute);
  EXPECT_EQ(first_error(offload_config(32)).rfind(path + ": must be below the model's 32 layers", 0), 0u)
      << first_error(offload_config(32));
  EXPECT_EQ(first_error(offload_config(31)), "");
  json no_host = offload_config(4);
  no_host["system"]["preset"] = "mi300x-192gb";
  EXPECT_EQ(first_error(no_host).rfind(path + ": needs the system's host figures", 0), 0u) << first_error(no_host);
  EXPECT_EQ(first_error(offload_config(-1)).rfind(path, 0), 0u) << first_error(offload_config(-1));
}

TEST(ActivationOffloadTest, MegatronFlagRoundTrips) {
  const json exported = json::parse(export_megatron_json(offload_config(6).dump()));
  ASSERT_TRUE(exported["ok"].get<bool>()) << exported;
  const std::string command = exported["result"]["command"];
  EXPECT_NE(command.find("--cpu-offloading-num-layers 6"), std::string::npos) << command;
  const json back = json::parse(import_megatron_json(command, "h100-sxm-80gb"));
  ASSERT_TRUE(back["ok"].get<bool>()) << back;
  EXPECT_EQ(back["result"]["config"]["training"]["activation_offload_layers"], 6);
  for (const auto& note : back["result"]["notes"]) {
    EXPECT_EQ(note.get<std::string>().find("offloading"), std::string::npos) << note;
  }
  // Without offload nothing is written, and 0 reads as none.
  const json plain = json::parse(export_megatron_json(offload_config(0).dump()));
  EXPECT_EQ(plain["result"]["command"].get<std::string>().find("--cpu-offloading"), std::string::npos);
  // Megatron-LM's own limits come back at the flag.
  std::string with_recompute = command;
  while (!with_recompute.empty() && std::isspace(static_cast<unsigned char>(with_recompute.back()))) {
    with_recompute.pop_back();
  }
  with_recompute += " --recompute-granularity full --recompute-method uniform --recompute-num-layers 1";
  const json refused = json::parse(import_megatron_json(with_recompute, "h100-sxm-80gb"));
  ASSERT_FALSE(refused["ok"].get<bool>()) << refused;
  EXPECT_EQ(refused["errors"][0]["path"], "/args/--cpu-offloading-num-layers") << refused;
}

}  // namespace
}  // namespace trainsim
