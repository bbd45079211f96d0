// One regression test per reliability finding (issue 7): inputs the fuzzers,
// the sanitizer build or the limit tests showed to crash, hang, overflow or
// leak a non-finite number. Each now gives a clear error naming a path.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "api/envelope.h"
#include "report/result_json.h"
#include "test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;

// The single error of an envelope that must be a clear (non-internal) error.
json only_error(const std::string& text) {
  const json envelope = json::parse(text);
  EXPECT_FALSE(envelope.value("ok", true)) << text;
  EXPECT_FALSE(envelope.contains("internal")) << text;
  EXPECT_EQ(envelope.value("errors", json::array()).size(), 1u) << text;
  return envelope.value("errors", json::array()).empty() ? json::object() : envelope["errors"][0];
}

json patched(const char* patch) {
  json config = testing::base_config();
  config.merge_patch(json::parse(patch));
  return config;
}

// Finding 1: tp*pp*cp(*dp) was multiplied in int64 before any bound on the
// product: four inputs at their limits overflowed (UBSan: signed integer overflow
// in config_json.cpp), and the wrapped world size produced nonsense messages.
TEST(ReliabilityRegressionTest, ParallelDegreesAtTheirLimitsDoNotOverflowTheWorldSize) {
  for (const char* patch :
       {R"({"training": {"tp": 16777216, "cp": 16777216, "pp": 100000, "dp": 16777216}, "system": {"num_gpus": null}})",
        R"({"training": {"tp": 16777216, "cp": 16777216, "pp": 100000}, "system": {"num_gpus": 16777216}})"}) {
    const json error = only_error(testing::run_estimate(patched(patch)).dump());
    EXPECT_EQ(error["path"], "/training/cp");
    EXPECT_EQ(error["message"],
              "tp*cp must be at most 16777216 (the largest number of GPUs), got 281474976710656");
  }
  const json error = only_error(
      testing::run_estimate(patched(R"({"training": {"tp": 4096, "pp": 4096, "dp": 4}, "system": {"num_gpus": null}})"))
          .dump());
  EXPECT_EQ(error["path"], "/training/dp");
  EXPECT_EQ(error["message"], "tp*cp*pp*dp must be at most 16777216 (the largest number of GPUs), got 67108864");
}

// Finding 2: the pipeline schedule is simulated pass by pass; 10^8 micro-batches
// ran for minutes and took gigabytes (a hang for the page), and interleaved
// schedules beyond 2^30 transfers hit an internal check.
TEST(ReliabilityRegressionTest, TooManyMicroBatchesIsAnErrorNotAHang) {
  const json error = only_error(testing::run_estimate(patched(
      R"({"training": {"vpp": 2, "global_batch_size": null, "num_micro_batches": 268435456}})")).dump());
  EXPECT_EQ(error["path"], "/training/num_micro_batches");
  EXPECT_EQ(error["message"],
            "too many micro-batches to simulate: num_micro_batches*pp*vpp must be at most 4194304, got "
            "268435456*2*2");
  // The limit itself is fine: 4 Mi micro-batches on one GPU.
  const json ok = testing::run_estimate(patched(
      R"({"training": {"tp": 1, "pp": 1, "sequence_parallel": false, "global_batch_size": null,
          "num_micro_batches": 4194304}, "system": {"num_gpus": 1}})"));
  EXPECT_TRUE(ok.value("ok", false)) << ok.dump().substr(0, 500);
}

// Finding 3: nlohmann reports a number beyond double range ("1e400") as
// out_of_range, not parse_error; it escaped the config reader and the SimuMax
// and Hugging Face importers as an internal error.
TEST(ReliabilityRegressionTest, NumbersBeyondDoubleRangeAreInputErrors) {
  const char* kMessage =
      "invalid JSON: number overflow parsing '1e400' (numbers must be within the range of a double)";
  json error = only_error(estimate_json(R"({"model": "llama3-8b", "training": {"seq_len": 1e400}})"));
  EXPECT_EQ(error["path"], "");
  EXPECT_EQ(error["message"], kMessage);
  error = only_error(import_hf_json(R"({"model_type": "llama", "hidden_size": 1e400})"));
  EXPECT_EQ(error["path"], "/hf");
  EXPECT_EQ(error["message"], kMessage);
  const json envelope = json::parse(import_simumax_json(R"({"hidden_size": -1e400})", "{}", ""));
  ASSERT_FALSE(envelope.contains("internal")) << envelope.dump();
  EXPECT_EQ(envelope["errors"][0]["path"], "/simumax_model");
  EXPECT_EQ(envelope["errors"][0]["message"],
            "invalid JSON: number overflow parsing '-1e400' (numbers must be within the range of a double)");
}

std::string import_with_system_text(const std::string& system_text);

// A SimuMax system file as the importer reads it; values are A100-like.
json simumax_system() {
  return json::parse(R"({
    "num_per_node": 8,
    "accelerator": {"mem_gbs": 80, "op": {"default": {"tflops": 312, "efficient_factor": 0.75}},
                    "bandwidth": {"default": {"gbps": 1900, "efficient_factor": 0.9, "latency_us": 5}}},
    "networks": {"high_intra_node": {"bandwidth": {"gbps": 300, "latency_us": 3}},
                 "inter_node": {"bandwidth": {"gbps": 100, "latency_us": 5}}}})");
}

std::string import_with_system_text(const std::string& system_text) {
  const char* model = R"({"hidden_size": 4096, "head_num": 32, "kv_head_num": 8, "intermediate_size": 14336,
                          "layer_num": 4, "vocab_size": 32000, "use_swiglu": true})";
  const char* strategy = R"({"seq_len": 4096, "micro_batch_size": 1, "micro_batch_num": 4, "world_size": 8,
                             "tp_size": 2})";
  return import_simumax_json(model, strategy, system_text);
}

std::string import_with_system(const json& system) { return import_with_system_text(system.dump()); }

TEST(ReliabilityRegressionTest, SimumaxSystemNumbersBeyondDoubleRangeAreInputErrors) {
  // Finding 3 in the third document, which is parsed like the other two.
  const json error = only_error(import_with_system_text(R"({"num_per_node": 1e400})"));
  EXPECT_EQ(error["path"], "/simumax_system");
  EXPECT_EQ(error["message"],
            "invalid JSON: number overflow parsing '1e400' (numbers must be within the range of a double)");
}

TEST(ReliabilityRegressionTest, SimumaxSystemBaselineImportsAndEstimates) {
  const json envelope = json::parse(import_with_system(simumax_system()));
  ASSERT_TRUE(envelope.value("ok", false)) << envelope.dump();
  const json estimate = testing::run_estimate(envelope["result"]["config"]);
  EXPECT_TRUE(estimate.value("ok", false)) << estimate.dump().substr(0, 500);
}

// Finding 4: num_per_node was cast from double to int64 unchecked (UBSan:
// 1e+300 is outside the range of long) and divided the inter-node bandwidth,
// so 0 gave an infinite bandwidth that the config carried as null.
TEST(ReliabilityRegressionTest, SimumaxNodeSizeMustBeAPositiveInteger) {
  for (const json& bad : {json(1e300), json(0), json(-5), json(2.5), json("8")}) {
    json system = simumax_system();
    system["num_per_node"] = bad;
    const json error = only_error(import_with_system(system));
    EXPECT_EQ(error["path"], "/simumax_system/num_per_node") << bad;
    EXPECT_EQ(error["message"], "expected an integer from 1 to 1048576, got " +
                                    std::string(bad.is_string() ? "string \"8\"" : "number " + bad.dump()));
  }
}

// Finding 5: the default HBM bandwidth divides every memory-kernel efficiency;
// 0 (or a missing value) made them NaN/Inf, and 1.7e308 GiB/s overflowed to Inf
// when converted to GB/s.
TEST(ReliabilityRegressionTest, SimumaxHbmBandwidthMustBePositiveAndFinite) {
  json system = simumax_system();
  system["accelerator"]["bandwidth"]["default"]["gbps"] = 0;
  json error = only_error(import_with_system(system));
  EXPECT_EQ(error["path"], "/simumax_system/accelerator/bandwidth/default/gbps");
  EXPECT_EQ(error["message"], "expected a number greater than 0, got number 0");
  system["accelerator"]["bandwidth"]["default"].erase("gbps");
  error = only_error(import_with_system(system));
  EXPECT_EQ(error["message"], "missing required key");
  system["accelerator"]["bandwidth"]["default"]["gbps"] = 1.7e308;
  error = only_error(import_with_system(system));
  EXPECT_EQ(error["path"], "/simumax_system");
  EXPECT_EQ(error["message"],
            "gives a non-finite value at /system/gpu/hbm_bandwidth_gb_per_s (a number is out of range)");
}

// Finding (CI fuzz run, estimate_fuzz): DeepSeek-V3 with 16-token sequences routes
// 128 tokens over 256 experts; the average rows per expert rounded down to 0, the
// grouped-GEMM shape efficiency became 0 and the time 0/0. An expert that gets a
// token still runs a full row tile, so the step time stays finite and positive.
TEST(ReliabilityRegressionTest, FewerRoutedTokensThanExpertsGivesAFiniteStepTime) {
  for (const int seq_len : {8, 16, 32}) {
    const json config = {{"model", "deepseek-v3"},
                         {"system", {{"num_gpus", 1}, {"preset", "b200-sxm-180gb"}}},
                         {"training", {{"global_batch_size", 8}, {"micro_batch_size", 1}, {"seq_len", seq_len}}}};
    const json result = testing::estimate_ok(config);
    const double step_s = result["time"]["iteration_s"].get<double>();
    EXPECT_TRUE(std::isfinite(step_s) && step_s > 0.0) << seq_len;
    EXPECT_GT(result["throughput"]["hardware_tflops_per_gpu"].get<double>(), 0.0) << seq_len;
  }
}

// The serialization boundary: a NaN or Inf in a result is a bug and becomes an
// internal error instead of a null (nlohmann) or "nan" (printf) in the output.
TEST(ReliabilityRegressionTest, NonFiniteNumbersNeverReachTheOutput) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THROW(api::ok_envelope({{"a", {{"b", nan}}}}), InternalError);
  EXPECT_THROW(api::ok_envelope({{"a", json::array({1.0, inf})}}), InternalError);
  try {
    api::ok_envelope({{"a", json::array({1.0, -inf})}});
  } catch (const InternalError& error) {
    EXPECT_STREQ(error.what(), "non-finite number in the result at /result/a/1");
  }
  Estimate estimate;
  estimate.memory.stages.push_back({});
  estimate.memory.stages[0].peak_bytes = nan;
  EXPECT_THROW(report::estimate_result_text(estimate), InternalError);
  estimate.memory.stages[0].peak_bytes = 1.0;
  estimate.timeline.included = true;
  estimate.timeline.stages = {{{"forward", 0, 0, 0.0, inf}}};
  EXPECT_THROW(report::estimate_result_text(estimate), InternalError);
}

}  // namespace
}  // namespace trainsim
