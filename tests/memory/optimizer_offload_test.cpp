// Optimizer CPU offload (Megatron-LM --optimizer-cpu-offload, HybridDeviceOptimizer in
// megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py): the offloaded fraction's fp32
// master copy and Adam moments leave HBM for pinned host memory (with a pinned fp32 gradient
// copy), and the step pays the gradient copies, the host's Adam and the parameter copies.
#include <gtest/gtest.h>

#include <string>

#include "interop/interop_test_util.h"
#include "test_util.h"
#include "time/dp_optimizer_time.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

using nlohmann::json;

json offload_config(double fraction, bool overlap) {
  json config = testing::base_config();
  config["training"]["optimizer_offload_fraction"] = fraction;
  config["training"]["overlap_cpu_optimizer_d2h_h2d"] = overlap;
  return config;
}

const json& stage0(const json& result) { return result["memory"]["stages"][0]; }

TEST(OptimizerOffloadTest, TheOffloadedFractionOfTheStatesMovesToPinnedHostMemory) {
  const json none = testing::estimate_ok(offload_config(0.0, false));
  const double states = stage0(none)["optimizer_bytes"].get<double>();
  ASSERT_GT(states, 0.0);
  EXPECT_EQ(stage0(none)["host_bytes"].get<double>(), 0.0);
  for (const double fraction : {0.25, 0.5, 1.0}) {
    SCOPED_TRACE(fraction);
    const json result = testing::estimate_ok(offload_config(fraction, false));
    // 12 B per shard element on the GPU (master + two moments) ...
    EXPECT_NEAR(stage0(result)["optimizer_bytes"].get<double>(), (1.0 - fraction) * states, 1e-6 * states);
    // ... become 16 B on the host: the same 12 B plus the pinned fp32 gradient copy.
    EXPECT_NEAR(stage0(result)["host_bytes"].get<double>(), fraction * states * 16.0 / 12.0, 1e-6 * states);
    // The allocated peak falls by exactly the states that left (nothing else moves).
    EXPECT_NEAR(stage0(none)["peak_bytes"].get<double>() - stage0(result)["peak_bytes"].get<double>(),
                fraction * states, 1e-6 * states);
  }
}

TEST(OptimizerOffloadTest, OffloadedStepIsTheCopiesAndTheHostAdamInClosedForm) {
  json config = offload_config(1.0, false);
  config["system"]["host"] = {{"memory_gib_per_gpu", 100}, {"memory_bandwidth_gb_per_s_per_gpu", 50},
                              {"memory_efficiency", 0.5}, {"link_gb_per_s", 25}, {"link_efficiency", 0.8}};
  const Config parsed = testing::parse_ok(config);
  const OffloadStepTime t = offloaded_step_time(parsed, 1e9);
  EXPECT_NEAR(t.d2h_s, 4e9 / (25e9 * 0.8), 1e-12);         // fp32 gradients to the host
  EXPECT_NEAR(t.h2d_s, 4e9 / (25e9 * 0.8), 1e-12);         // fp32 master copy back
  EXPECT_NEAR(t.host_step_s, 28e9 / (50e9 * 0.5), 1e-12);  // fused AdamW: 28 B per element
  EXPECT_EQ(offloaded_step_time(parsed, 0.0).host_step_s, 0.0);
}

TEST(OptimizerOffloadTest, OffloadSlowsTheStepAndOverlappingTheCopiesHidesThem) {
  const json none = testing::estimate_ok(offload_config(0.0, false));
  const json serial = testing::estimate_ok(offload_config(1.0, false));
  const json overlapped = testing::estimate_ok(offload_config(1.0, true));
  const auto optimizer_s = [](const json& r) { return r["time"]["breakdown"]["optimizer_s"].get<double>(); };
  EXPECT_GT(optimizer_s(serial), optimizer_s(none));
  EXPECT_GT(serial["time"]["iteration_s"].get<double>(), none["time"]["iteration_s"].get<double>());
  // Without overlap the copies run before and after the host step; with it they pipeline
  // behind the (slower) host step: the difference is the two copies of the critical stage.
  const int64_t critical = serial["time"]["critical_stage"].get<int64_t>();
  const double elements = serial["memory"]["stages"][critical]["host_bytes"].get<double>() / 16.0;
  const OffloadStepTime t = offloaded_step_time(testing::parse_ok(offload_config(1.0, false)), elements);
  ASSERT_GT(t.host_step_s, t.d2h_s);
  EXPECT_NEAR(optimizer_s(serial) - optimizer_s(overlapped), t.d2h_s + t.h2d_s, 1e-6);
}

TEST(OptimizerOffloadTest, TheVerdictChecksTheHostMemoryToo) {
  json config = offload_config(1.0, false);
  config["system"]["host"] = {{"memory_gib_per_gpu", 0.5}, {"memory_bandwidth_gb_per_s_per_gpu", 50},
                              {"link_gb_per_s", 25}};
  const json result = testing::estimate_ok(config);
  EXPECT_EQ(result["memory"]["verdict"]["status"], "out_of_memory");
  bool named = false;
  for (const auto& reason : result["memory"]["verdict"]["reasons"]) {
    named = named || reason.get<std::string>().find("pinned host memory") != std::string::npos;
  }
  EXPECT_TRUE(named) << result["memory"]["verdict"];
  config["system"]["host"]["memory_gib_per_gpu"] = 256;
  EXPECT_NE(testing::estimate_ok(config)["memory"]["verdict"]["status"], "out_of_memory");
}

TEST(OptimizerOffloadTest, AnEstimateNamesTheHostFiguresItRestsOn) {
  const json result = testing::estimate_ok(offload_config(0.5, true));
  bool link = false;
  for (const auto& f : result["calibration"]["figures"]) {
    if (f["figure"] == "/host/link_efficiency") link = f["kind"] == "assumed";
  }
  EXPECT_TRUE(link) << result["calibration"];
  EXPECT_FALSE(result["calibration"]["calibrated"].get<bool>());
}

std::string first_error_path(const json& config) {
  const json envelope = testing::run_estimate(config);
  if (envelope.value("ok", false)) return "";
  return envelope["errors"][0]["path"].get<std::string>() + ": " + envelope["errors"][0]["message"].get<std::string>();
}

TEST(OptimizerOffloadTest, BadOffloadInputsNameTheirPath) {
  json no_host = offload_config(1.0, false);
  no_host["system"]["preset"] = "mi300x-192gb";
  no_host["training"]["tp"] = 1;
  EXPECT_EQ(first_error_path(no_host).rfind("/training/optimizer_offload_fraction: needs the system's host figures", 0), 0u)
      << first_error_path(no_host);
  json partial = offload_config(1.0, false);  // a preset without host figures, so nothing merges in
  partial["system"]["preset"] = "mi300x-192gb";
  partial["training"]["tp"] = 1;
  partial["system"]["host"] = {{"memory_gib_per_gpu", 64}, {"memory_bandwidth_gb_per_s_per_gpu", 50}};
  EXPECT_EQ(first_error_path(partial).rfind("/system/host/link_gb_per_s: missing", 0), 0u) << first_error_path(partial);
  json fraction = offload_config(1.5, false);
  EXPECT_EQ(first_error_path(fraction).rfind("/training/optimizer_offload_fraction", 0), 0u) << first_error_path(fraction);
  json fp8 = offload_config(1.0, false);
  fp8["training"]["dtype"] = "fp8";
  fp8["training"]["fp8_recipe"] = "tensorwise";
  fp8["training"]["fp8_param_gather"] = true;
  EXPECT_EQ(first_error_path(fp8).rfind("/training/fp8_param_gather", 0), 0u) << first_error_path(fp8);
}

std::string without(std::string text, const std::string& piece) {
  const size_t at = text.find(piece);
  if (at != std::string::npos) text.erase(at, piece.size());
  return text;
}

TEST(OptimizerOffloadTest, MegatronFlagsRoundTrip) {
  const json exported = json::parse(export_megatron_json(offload_config(0.5, true).dump()));
  ASSERT_TRUE(exported["ok"].get<bool>()) << exported;
  const std::string command = exported["result"]["command"];
  for (const char* flag : {"--optimizer-cpu-offload", "--use-precision-aware-optimizer", "--overlap-cpu-optimizer-d2h-h2d"}) {
    EXPECT_NE(command.find(flag), std::string::npos) << flag << " in " << command;
  }
  const json back = json::parse(import_megatron_json(command, "h100-sxm-80gb"));
  ASSERT_TRUE(back["ok"].get<bool>()) << back;
  EXPECT_EQ(back["result"]["config"]["training"]["optimizer_offload_fraction"], 0.5);
  EXPECT_EQ(back["result"]["config"]["training"]["overlap_cpu_optimizer_d2h_h2d"], true);
  for (const auto& note : back["result"]["notes"]) {
    EXPECT_EQ(note.get<std::string>().find("offload"), std::string::npos) << note;
  }
  // arguments.py: the fraction defaults to 1.0 ...
  const json whole = json::parse(import_megatron_json(without(command, "--optimizer-offload-fraction 0.5"), "h100-sxm-80gb"));
  ASSERT_TRUE(whole["ok"].get<bool>()) << whole;
  EXPECT_EQ(whole["result"]["config"]["training"]["optimizer_offload_fraction"], 1.0);
  // ... and offload needs the precision-aware optimizer.
  const json refused = json::parse(import_megatron_json(without(command, "--use-precision-aware-optimizer"), "h100-sxm-80gb"));
  ASSERT_FALSE(refused["ok"].get<bool>());
  EXPECT_EQ(refused["errors"][0]["path"], "/args/--optimizer-cpu-offload");
}

}  // namespace
}  // namespace trainsim
