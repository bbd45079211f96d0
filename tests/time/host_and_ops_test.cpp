// Host time beside the GPU stream (time/host_time.h), the per-op table of the
// critical stage (time.ops), the fp8 recipes' quantisation kernels and the
// figures an estimate reports it used (result.calibration).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "test_util.h"

namespace trainsim {
namespace {

// A small MoE (DeepSeek-V2-Lite, 64 experts of 1408) at micro-batch 1: little GPU
// work per kernel, one dropless host sync per MoE layer forward.
nlohmann::json small_moe() {
  return nlohmann::json::parse(R"({"model": "deepseek-v2-lite",
    "training": {"seq_len": 2048, "micro_batch_size": 1, "global_batch_size": 64, "tp": 1,
                 "pp": 1, "ep": 8, "zero_stage": 1},
    "system": {"preset": "h100-sxm-80gb", "num_gpus": 8}})");
}

double host_s(const nlohmann::json& result) {
  return result["time"]["breakdown"]["host_overhead_s"].get<double>();
}

TEST(HostTimeTest, DroplessMoeWaitsForTheHostAndCudaGraphsDoNotRemoveTheSyncs) {
  const nlohmann::json eager = testing::estimate_ok(small_moe());
  // 26 MoE layers x 8 micro-batches (global 64 / dp 8) x one 40 us sync at least.
  EXPECT_GE(host_s(eager), 26 * 8 * 40e-6 * 0.999) << eager["time"]["breakdown"];
  nlohmann::json graphed = small_moe();
  graphed["training"]["cuda_graph"] = {{"impl", "full_iteration"}};
  const nlohmann::json g = testing::estimate_ok(graphed);
  EXPECT_LE(host_s(g), host_s(eager));
  EXPECT_GT(host_s(g), 0.0) << "the MoE token-count syncs cannot be captured";
}

TEST(HostTimeTest, AfterEachMoeSyncTheGpuWaitsForTheLaunchesThatFollow) {
  // Raising the launch cost adds idle after every dropless sync even where the whole
  // layer's launches stay below its GPU time (the host has no lead after a sync).
  nlohmann::json config = small_moe();
  config["system"]["efficiency"] = {{"host", {{"launch_us", 0}}}};
  const double no_launch = host_s(testing::estimate_ok(config));
  config["system"]["efficiency"]["host"]["launch_us"] = 8;
  const double eager = host_s(testing::estimate_ok(config));
  // At least the first launch after each sync: 26 MoE layers x 8 micro-batches.
  EXPECT_GE(eager - no_launch, 26 * 8 * 8e-6 * 0.999);
}

TEST(HostTimeTest, ALaunchBoundStepGetsSlowerWithTheHostCostAndGraphsTakeItAway) {
  // A tiny dense model: each kernel's GPU time is below a 100 us launch.
  nlohmann::json config = nlohmann::json::parse(R"({"model": {"preset": "llama3-8b", "num_layers": 2,
      "hidden_size": 512, "ffn_hidden_size": 1024, "num_attention_heads": 8, "num_kv_heads": 8},
    "training": {"seq_len": 512, "micro_batch_size": 1, "global_batch_size": 8, "zero_stage": 1},
    "system": {"preset": "h100-sxm-80gb", "num_gpus": 1, "efficiency": {"host": {"launch_us": 100}}}})");
  const nlohmann::json slow = testing::estimate_ok(config);
  EXPECT_GT(host_s(slow), 0.0);
  config["system"]["efficiency"]["host"]["launch_us"] = 0;
  const nlohmann::json free = testing::estimate_ok(config);
  EXPECT_EQ(host_s(free), 0.0);
  EXPECT_GT(slow["time"]["iteration_s"].get<double>(), free["time"]["iteration_s"].get<double>());
  config["system"]["efficiency"]["host"]["launch_us"] = 100;
  config["training"]["cuda_graph"] = {{"impl", "full_iteration"}};
  const nlohmann::json graphed = testing::estimate_ok(config);
  EXPECT_LT(host_s(graphed), host_s(slow));
}

// A grouped linear's expert GEMMs after the first come from Transformer Engine's C++
// loop (general_grouped_gemm): they pay expert_gemm_launch_us, not launch_us (8 local
// experts here: 7 of each grouped GEMM's 8 kernels).
TEST(HostTimeTest, ExpertGemmsPayTheirOwnLaunchCostNotTheEagerOne) {
  nlohmann::json config = small_moe();
  auto host_with = [&](double launch_us, double expert_us) {
    config["system"]["efficiency"] = {
        {"host", {{"launch_us", launch_us}, {"native_launch_us", 0}, {"expert_gemm_launch_us", expert_us}}}};
    return host_s(testing::estimate_ok(config));
  };
  const double syncs_only = host_with(0, 0);
  EXPECT_GT(host_with(0, 200), syncs_only) << "expert GEMM launches cost host time of their own";
  EXPECT_GT(host_with(200, 200), host_with(200, 0)) << "expert GEMMs are not priced at launch_us";
  EXPECT_GT(host_with(200, 0), syncs_only);
}

// Userbuffers' chunked GEMMs and copies are launched by Transformer Engine's C++
// (comm_gemm_overlap.cpp): a costly eager launch does not make --tp-comm-overlap slower.
TEST(HostTimeTest, UserbuffersChunksAreNativeLaunches) {
  nlohmann::json plain = testing::base_config();
  plain["training"]["tp"] = 8;
  plain["training"]["pp"] = 1;
  plain["system"]["efficiency"] = {{"host", {{"launch_us", 60}, {"native_launch_us", 5}}}};
  nlohmann::json overlapped = plain;
  overlapped["training"]["tp_comm_overlap"] = true;
  const nlohmann::json a = testing::estimate_ok(plain);
  const nlohmann::json b = testing::estimate_ok(overlapped);
  EXPECT_LE(b["time"]["iteration_s"].get<double>(), a["time"]["iteration_s"].get<double>());
  // Priced at the eager cost, the chunks would keep the host further behind.
  overlapped["system"]["efficiency"]["host"]["native_launch_us"] = 60;
  EXPECT_GT(host_s(testing::estimate_ok(overlapped)), host_s(b)) << b["time"]["breakdown"];
}

// A drop-and-pad MoE fills its token counts with the capacity: Megatron-LM's
// all-to-all dispatcher never copies them to the host (token_dispatcher.py
// preprocess: cuda_sync_point stays "no_sync"), so no host sync is priced.
TEST(HostTimeTest, DropAndPadMoeHasNoTokenCountSync) {
  nlohmann::json config = small_moe();
  config["system"]["efficiency"] = {
      {"host", {{"launch_us", 0}, {"native_launch_us", 0}, {"expert_gemm_launch_us", 0}}}};
  EXPECT_GT(host_s(testing::estimate_ok(config)), 0.0) << "dropless: one sync per MoE layer";
  config["training"]["moe_capacity_factor"] = 1.0;
  config["training"]["moe_pad_to_capacity"] = true;
  EXPECT_EQ(host_s(testing::estimate_ok(config)), 0.0);
}

// Dropless all-to-all dispatch gathers the tokens-per-expert counts over the expert
// group before its sync (Megatron-LM token_dispatcher.py preprocess); drop-and-pad
// fills them with the capacity and gathers nothing. The gather is latency-bound.
TEST(MoeDispatchTest, DroplessDispatchGathersTheTokenCountsOverTheExpertGroup) {
  nlohmann::json config = small_moe();
  auto ep_s = [](const nlohmann::json& r) { return r["time"]["breakdown"]["ep_comm_exposed_s"].get<double>(); };
  const double dropless = ep_s(testing::estimate_ok(config));
  config["training"]["moe_capacity_factor"] = 1.0;
  config["training"]["moe_pad_to_capacity"] = true;
  const double padded = ep_s(testing::estimate_ok(config));
  EXPECT_GT(dropless, padded);
  // 26 MoE layers x 8 micro-batches: well under a millisecond each.
  EXPECT_LT(dropless - padded, 26 * 8 * 1e-3);
}

// Current scaling quantises in one C++ call (Transformer Engine quantizer.cpp,
// Float8CurrentScalingQuantizer::quantize_impl): the amax and scale kernels before
// the cast are native launches, not eager ones.
TEST(HostTimeTest, CurrentScalingAmaxAndScaleKernelsAreNativeLaunches) {
  nlohmann::json config = nlohmann::json::parse(R"({"model": {"preset": "llama3-8b", "num_layers": 2,
      "hidden_size": 512, "ffn_hidden_size": 1024, "num_attention_heads": 8, "num_kv_heads": 8},
    "training": {"seq_len": 512, "micro_batch_size": 1, "global_batch_size": 8, "zero_stage": 1,
                 "dtype": "fp8", "fp8_recipe": "tensorwise"},
    "system": {"preset": "h100-sxm-80gb", "num_gpus": 1}})");
  auto host_with = [&](double launch_us, double native_us) {
    config["system"]["efficiency"] = {{"host", {{"launch_us", launch_us}, {"native_launch_us", native_us}}}};
    return host_s(testing::estimate_ok(config));
  };
  EXPECT_GT(host_with(100, 100), host_with(100, 0)) << "amax and scale kernels are native";
  EXPECT_GT(host_with(100, 0), host_with(0, 0)) << "each cast's first kernel is an eager launch";
}

TEST(OpTableTest, TheCriticalStageOpsAddUpToItsComputeAndStayWithinPeak) {
  const nlohmann::json result = testing::estimate_ok(small_moe());
  const nlohmann::json& ops = result["time"]["ops"];
  ASSERT_FALSE(ops.empty());
  std::set<std::string> kinds;
  double sum_s = 0.0;
  for (const auto& op : ops) {
    kinds.insert(op["kind"].get<std::string>());
    sum_s += op["time_s"].get<double>();
    EXPECT_GT(op["efficiency"].get<double>(), 0.0) << op;
    EXPECT_LE(op["efficiency"].get<double>(), 1.0) << op;
    EXPECT_FALSE(op["efficiency_source"].get<std::string>().empty()) << op;
    EXPECT_GE(op["kernels"].get<double>(), op["count"].get<double>()) << op;
  }
  for (const char* kind : {"gemm", "grouped_gemm", "attention", "norm", "elementwise", "router",
                           "permute", "unpermute", "cross_entropy"}) {
    EXPECT_TRUE(kinds.count(kind)) << kind;
  }
  // pp = 1: the table covers the whole step's compute, per micro-batch.
  const nlohmann::json& b = result["time"]["breakdown"];
  const double micro_batches = 64.0 / 8.0;  // global batch / (micro-batch 1 x dp 8)
  const double compute_s = (b["forward_s"].get<double>() + b["backward_s"].get<double>() +
                            b["recompute_s"].get<double>()) / micro_batches;
  EXPECT_NEAR(sum_s, compute_s, 1e-9 + 1e-6 * compute_s);
}

double quantize_bytes(const nlohmann::json& result) {
  double bytes = 0.0;
  for (const auto& op : result["time"]["ops"]) {
    if (op["kind"] == "quantize") bytes += op["bytes"].get<double>();
  }
  return bytes;
}

TEST(Fp8RecipeTest, EachRecipeHasItsQuantisationKernelsAndItsGemmPlateau) {
  nlohmann::json config = testing::base_config();
  config["system"] = {{"preset", "b200-sxm-180gb"}, {"num_gpus", 16}};
  config["training"]["dtype"] = "bf16";
  const nlohmann::json bf16 = testing::estimate_ok(config);
  EXPECT_EQ(quantize_bytes(bf16), 0.0);
  config["training"]["dtype"] = "fp8";
  std::map<std::string, nlohmann::json> by_recipe;
  for (const char* recipe : {"delayed", "tensorwise", "blockwise", "mxfp8"}) {
    config["training"]["fp8_recipe"] = recipe;
    by_recipe[recipe] = testing::estimate_ok(config);
    EXPECT_GT(quantize_bytes(by_recipe[recipe]), 0.0) << recipe;
    EXPECT_LT(by_recipe[recipe]["time"]["iteration_s"].get<double>(), bf16["time"]["iteration_s"].get<double>())
        << recipe << " is not faster than bf16";
  }
  // Current (tensorwise) scaling reads each input twice (amax, then cast): more bytes
  // than delayed scaling's single fused cast (Transformer Engine quantizer.cpp).
  EXPECT_GT(quantize_bytes(by_recipe["tensorwise"]), quantize_bytes(by_recipe["delayed"]));
  // MXFP8 GEMMs run on their own (lower) plateau on this preset: more GPU time (the
  // step itself may be host-bound, with the same launches for both recipes).
  auto gpu_s = [](const nlohmann::json& r) {
    const nlohmann::json& b = r["time"]["breakdown"];
    return b["forward_s"].get<double>() + b["backward_s"].get<double>();
  };
  EXPECT_GT(gpu_s(by_recipe["mxfp8"]), gpu_s(by_recipe["delayed"]));
}

TEST(CalibrationTest, ADenseGpuBoundRunOnMicrobenchmarkedFiguresIsCalibrated) {
  // One GPU: no collective, so no link figure (the H100 preset's links are not calibrated).
  nlohmann::json config = testing::base_config();
  config["training"]["tp"] = 1;
  config["training"]["pp"] = 1;
  config["training"]["sequence_parallel"] = false;
  config["system"]["num_gpus"] = 1;
  const nlohmann::json result = testing::estimate_ok(config);
  EXPECT_TRUE(result["calibration"]["calibrated"].get<bool>()) << result["calibration"];
  for (const auto& f : result["calibration"]["figures"]) {
    EXPECT_NE(f["kind"], "config") << f;
    EXPECT_NE(f["figure"], "/efficiency/host/sync_us") << "a dense run has no MoE sync";
  }
}

TEST(CalibrationTest, AHostBoundMoeRunRestsOnTheAssumedHostSync) {
  const nlohmann::json result = testing::estimate_ok(small_moe());
  EXPECT_FALSE(result["calibration"]["calibrated"].get<bool>());
  bool sync = false;
  for (const auto& f : result["calibration"]["figures"]) {
    if (f["figure"] == "/efficiency/host/sync_us") sync = f["kind"] == "assumed";
  }
  EXPECT_TRUE(sync) << result["calibration"];
}

// Whether an estimate's result.calibration lists the figure at `pointer`.
bool names_figure(const nlohmann::json& result, const std::string& pointer) {
  for (const auto& f : result["calibration"]["figures"]) {
    if (f["figure"] == pointer) return true;
  }
  return false;
}

TEST(CalibrationTest, AHostBoundMoeRunNamesTheExpertGemmLaunchFigure) {
  nlohmann::json config = small_moe();
  config["system"]["efficiency"] = {{"host", {{"expert_gemm_launch_us", 500}}}};
  const nlohmann::json result = testing::estimate_ok(config);
  EXPECT_TRUE(names_figure(result, "/efficiency/host/expert_gemm_launch_us")) << result["calibration"];
}

TEST(CalibrationTest, TpCommOverlapNamesTheNativeLaunchFigure) {
  nlohmann::json config = testing::base_config();
  config["training"]["tp"] = 8;
  config["training"]["pp"] = 1;
  config["training"]["tp_comm_overlap"] = true;
  config["system"]["efficiency"] = {{"host", {{"native_launch_us", 2000}}}};
  const nlohmann::json result = testing::estimate_ok(config);
  EXPECT_TRUE(names_figure(result, "/efficiency/host/native_launch_us")) << result["calibration"];
}

}  // namespace
}  // namespace trainsim
