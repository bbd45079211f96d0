// Step time against real measured runs (tests/validation/data/published_runs*.json:
// Narayanan et al. 2021, Korthikanti et al. 2022, the Megatron-LM README, NeMo 24.07,
// Megatron-Bridge 25.09/25.11/26.02, Megatron-LM examples/llama, and the A100-PCIe runs behind
// SimuMax's published errors), predicted with trainsim's own GPU presets only. Each case is
// compared in the quantity its source measured: step time, tokens/s/GPU, per-layer time, or
// model TFLOP/s/GPU under the source's own FLOP convention.
// Targets: median |error| <= 10% over all cases, no case worse than 25% but the listed known
// deviations (held to 75%). The presets' kernel efficiencies are microbenchmarks; the one fitted
// figure (efficiency.sustained_fraction) is fitted on every case by transfer_test.cpp, which also
// measures transfer (leave-one-generation-out, leave-one-source-out). The "fit" / "held_out" roles
// are the former per-GPU split, printed apart for comparison.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "model/flops.h"
#include "test_util.h"
#include "validation/published_cases.h"

namespace trainsim {
namespace {

using validation::Outcome;
using validation::PublishedCase;
using validation::evaluate;
using validation::median;

constexpr double kMedianBound = 0.10;
constexpr double kCaseBound = 0.25;
// Known deviations: cases the transfer-calibrated model (one global fitted
// figure, tests/validation/transfer_test.cpp) misses by more than kCaseBound,
// each with the reason. They are held to kKnownDeviationBound as a regression
// guard and printed, so the table in README stays honest.
constexpr double kKnownDeviationBound = 0.75;

const char* known_deviation(const PublishedCase& c) {
  // A case whose data file states its deviation and the reason (published_runs_frontier.json).
  if (!c.known_deviation.empty()) return c.known_deviation.c_str();
  if (c.gpu == "b200-sxm-180gb" && c.id.find("235B") != std::string::npos) {
    return "Qwen3-235B on 8-GPU B200 nodes predicted 16-45% too fast: SimuMax's B200 grouped-GEMM "
           "table calibrates the expert GEMMs in bf16 only, no FP8 / MXFP8 grouped-GEMM measurement "
           "of Blackwell exists, and the GB200 25.09 rows, CUDA-graphed whole, miss as much (GPU "
           "time of the MoE layer, not host); the dropless 25.11 row runs 31% slower than the "
           "token-drop 25.09 rows of its layout, where the host and sync model gives 9%";
  }
  return nullptr;
}

const std::vector<PublishedCase>& cases() { return validation::published_cases(); }

// Each case is estimated once per process (ctest runs every case in its own process).
const Outcome& outcome(const PublishedCase& c) {
  static std::map<std::string, Outcome> cache;
  auto it = cache.find(c.id);
  if (it == cache.end()) it = cache.emplace(c.id, evaluate(c)).first;
  return it->second;
}

struct Group {
  std::vector<double> errors;  ///< |relative error|
  double worst = -1.0;
  std::string worst_id;
  double worst_signed = 0.0;
  void add(const std::string& id, double signed_error) {
    errors.push_back(std::fabs(signed_error));
    if (std::fabs(signed_error) > worst) {
      worst = std::fabs(signed_error);
      worst_id = id;
      worst_signed = signed_error;
    }
  }
};

void print_group(const char* kind, const std::string& name, const Group& g) {
  std::printf("[published] %-8s %-26s n %3zu  median |err| %5.1f%%  max |err| %5.1f%%  worst %s "
              "(%+.1f%%)\n",
              kind, name.c_str(), g.errors.size(), 100 * median(g.errors), 100 * g.worst,
              g.worst_id.c_str(), 100 * g.worst_signed);
}

class PublishedRunTest : public ::testing::TestWithParam<PublishedCase> {};

TEST_P(PublishedRunTest, WithinTwentyFivePercentOfTheMeasurement) {
  const PublishedCase& c = GetParam();
  const Outcome& o = outcome(c);
  ASSERT_TRUE(o.error.empty()) << c.id << ": " << o.error;
  const char* why = known_deviation(c);
  if (why != nullptr) std::printf("[published] known deviation %s: %s\n", c.id.c_str(), why);
  EXPECT_LE(std::fabs(o.relative_error()), why != nullptr ? kKnownDeviationBound : kCaseBound)
      << c.id << " (" << c.source << ", " << c.measured["quantity"].get<std::string>()
      << "): predicted " << o.predicted << ", measured " << o.measured;
}

// A deviation a data file states must still be one: once the model explains the case,
// the note goes (and the case is held to kCaseBound again).
TEST(PublishedRunsTest, EveryStatedKnownDeviationStillDeviates) {
  int stated = 0;
  for (const PublishedCase& c : cases()) {
    if (c.known_deviation.empty()) continue;
    ++stated;
    const Outcome& o = outcome(c);
    ASSERT_TRUE(o.error.empty()) << c.id << ": " << o.error;
    EXPECT_GT(std::fabs(o.relative_error()), kCaseBound)
        << c.id << " is now within " << 100 * kCaseBound << "%: remove its known_deviation";
  }
  EXPECT_GE(stated, 1);
}

std::string case_name(const ::testing::TestParamInfo<PublishedCase>& info) {
  std::string name;
  for (const char ch : info.param.id) {
    name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Published, PublishedRunTest, ::testing::ValuesIn(cases()), case_name);

TEST(PublishedRunsTest, MedianErrorWithinTenPercentAndPerSourceTable) {
  ASSERT_GE(cases().size(), 40u);
  std::map<std::string, Group> by_source, by_gpu_role;
  Group all, expected;  // expected: every case but the known deviations
  for (const PublishedCase& c : cases()) {
    const Outcome& o = outcome(c);
    ASSERT_TRUE(o.error.empty()) << c.id << ": " << o.error;
    const double e = o.relative_error();
    by_source[c.source].add(c.id, e);
    by_gpu_role[c.gpu + " " + c.role].add(c.id, e);
    all.add(c.id, e);
    if (known_deviation(c) == nullptr) expected.add(c.id, e);
  }
  for (const auto& [name, g] : by_source) print_group("source", name, g);
  for (const auto& [name, g] : by_gpu_role) print_group("gpu", name, g);
  print_group("all", "all", all);
  for (const PublishedCase& c : cases()) {
    const Outcome& o = outcome(c);
    std::printf("[published]   %-58s %-8s predicted %10.4g measured %10.4g  %+6.1f%%\n",
                c.id.c_str(), c.role.c_str(), o.predicted, o.measured, 100 * o.relative_error());
  }
  print_group("all", "without known deviations", expected);
  EXPECT_LE(median(all.errors), kMedianBound);
  EXPECT_LE(expected.worst, kCaseBound) << "worst case " << expected.worst_id;
  EXPECT_LE(all.worst, kKnownDeviationBound) << "worst case " << all.worst_id;
}

TEST(PublishedRunsTest, AnUncalibratedPresetFailsTheBounds) {
  // The bounds are tight enough to catch a preset with near-ideal efficiencies (the kind of
  // guess the presets carried before calibration): the H100 cases then run far too fast.
  std::vector<double> errors;
  for (const PublishedCase& c : cases()) {
    if (c.gpu != "h100-sxm-80gb") continue;
    const Outcome o = evaluate(c, nlohmann::json::parse(R"({"efficiency": {
        "gemm": {"bf16": 0.95, "fp8": 0.95, "fp8_blockwise": 0.95}, "sustained_fraction": 1.0,
        "memory": {"efficiency": 0.95, "latency_us": 0}, "host": {"launch_us": 0, "sync_us": 0}}})"));
    ASSERT_TRUE(o.error.empty()) << c.id << ": " << o.error;
    errors.push_back(std::fabs(o.relative_error()));
  }
  ASSERT_GE(errors.size(), 10u);
  EXPECT_GT(median(errors), kMedianBound);
  EXPECT_GT(*std::max_element(errors.begin(), errors.end()), kCaseBound);
}

TEST(PublishedRunsTest, EverySkippedCaseSaysWhy) {
  for (const auto& s : validation::skipped_rows()) {
    EXPECT_FALSE(s.value("reason", std::string()).empty()) << s.dump();
  }
}

TEST(PublishedRunsTest, FlopConventionChangesTheComparedValue) {
  // The same step under Narayanan's convention (recompute forward counted, non-causal) has
  // more FLOPs than under Megatron's current causal convention: comparing TFLOP/s across
  // conventions would bias every case of a source.
  Config config;
  Issues issues;
  ASSERT_TRUE(parse_config(testing::base_config().dump(), config, issues));
  const double megatron = model_flops_per_step(config.model, 2048, 1.0, FlopConvention::kMegatron);
  const double narayanan =
      model_flops_per_step(config.model, 2048, 1.0, FlopConvention::kNarayanan2021);
  EXPECT_GT(narayanan / megatron, 1.2);
}

}  // namespace
}  // namespace trainsim
