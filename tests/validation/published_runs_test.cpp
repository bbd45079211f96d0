// Step time against real measured runs (tests/validation/data/published_runs.json:
// Narayanan et al. 2021, Korthikanti et al. 2022, the Megatron-LM README, NeMo 24.07,
// Megatron-Bridge 25.09/25.11/26.02 and Megatron-LM examples/llama), predicted with trainsim's own
// GPU presets only. Each case is compared in the quantity its source measured: step time,
// tokens/s/GPU, per-layer time, or model TFLOP/s/GPU under the source's own FLOP convention.
// Targets (issue "Time model"): median |error| <= 10% over all cases, no case worse than 25%.
// The presets' efficiency parameters were fitted on the cases marked "fit" only
// (tests/validation/fit_presets.py); the per-GPU lines print fit and held-out errors apart.
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

namespace trainsim {
namespace {

constexpr double kMedianBound = 0.10;
constexpr double kCaseBound = 0.25;

struct PublishedCase {
  std::string id;
  std::string source;
  std::string gpu;
  std::string role;
  nlohmann::json measured;
  nlohmann::json config;
};

struct Outcome {
  double predicted = 0.0;
  double measured = 0.0;
  std::string error;  ///< why the estimate failed (empty when it ran)
  double relative_error() const { return predicted / measured - 1.0; }
};

const nlohmann::json& data() {
  static const nlohmann::json doc = nlohmann::json::parse(
      testing::read_text_file(testing::test_data_path("validation/data/published_runs.json")));
  return doc;
}

std::vector<PublishedCase> load_cases() {
  std::vector<PublishedCase> out;
  for (const auto& c : data()["cases"]) {
    out.push_back({c["id"], c["source"], c["gpu"], c["role"], c["measured"], c["config"]});
  }
  return out;
}

const std::vector<PublishedCase>& cases() {
  static const std::vector<PublishedCase> all = load_cases();
  return all;
}

FlopConvention convention_of(const std::string& name) {
  if (name == "narayanan2021") return FlopConvention::kNarayanan2021;
  if (name == "korthikanti2022") return FlopConvention::kKorthikanti2022;
  if (name == "megatron_legacy") return FlopConvention::kMegatronLegacy;
  if (name == "megatron") return FlopConvention::kMegatron;
  throw std::runtime_error("unknown flop_convention " + name);
}

nlohmann::json with_layers(nlohmann::json config, int64_t layers) {
  if (config["model"].is_string()) {
    config["model"] = {{"preset", config["model"]}, {"num_layers", layers}};
  } else {
    config["model"]["num_layers"] = layers;
  }
  return config;
}

// Forward + backward (+ recompute) of one micro-batch on the first stage.
double stage_micro_batch_s(const nlohmann::json& config) {
  const nlohmann::json stage = testing::estimate_ok(config)["time"]["stages"][0];
  return stage["forward_per_micro_batch_s"].get<double>() +
         stage["backward_per_micro_batch_s"].get<double>();
}

Outcome evaluate(const PublishedCase& c) {
  Outcome o;
  o.measured = c.measured["value"].get<double>();
  const std::string quantity = c.measured["quantity"];
  try {
    if (quantity == "layer_time_s") {
      // One transformer layer: the difference between a 2-layer and a 1-layer model.
      o.predicted = stage_micro_batch_s(with_layers(c.config, 2)) -
                    stage_micro_batch_s(with_layers(c.config, 1));
      return o;
    }
    const nlohmann::json result = testing::estimate_ok(c.config);
    const double step_s = result["time"]["iteration_s"];
    const double gpus = c.config["system"]["num_gpus"];
    if (quantity == "iteration_s") {
      o.predicted = step_s;
    } else if (quantity == "tokens_per_s_per_gpu") {
      o.predicted = result["throughput"]["tokens_per_s_per_gpu"];
    } else if (quantity == "model_tflops_per_gpu") {
      Config config;
      Issues issues;
      if (!parse_config(c.config.dump(), config, issues)) throw std::runtime_error("bad config");
      const double tokens = result["throughput"]["tokens_per_step"];
      const double sequences = tokens / static_cast<double>(config.training.seq_len);
      const double flops =
          model_flops_per_step(config.model, config.training.seq_len, sequences,
                               convention_of(c.measured["flop_convention"]));
      o.predicted = flops / step_s / gpus / 1e12;
    } else {
      o.error = "unknown quantity " + quantity;
    }
  } catch (const std::exception& e) {
    o.error = e.what();
  }
  return o;
}

// Each case is estimated once per process (ctest runs every case in its own process).
const Outcome& outcome(const PublishedCase& c) {
  static std::map<std::string, Outcome> cache;
  auto it = cache.find(c.id);
  if (it == cache.end()) it = cache.emplace(c.id, evaluate(c)).first;
  return it->second;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
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

void PrintTo(const PublishedCase& c, std::ostream* os) { *os << c.id; }

class PublishedRunTest : public ::testing::TestWithParam<PublishedCase> {};

TEST_P(PublishedRunTest, WithinTwentyFivePercentOfTheMeasurement) {
  const PublishedCase& c = GetParam();
  const Outcome& o = outcome(c);
  ASSERT_TRUE(o.error.empty()) << c.id << ": " << o.error;
  EXPECT_LE(std::fabs(o.relative_error()), kCaseBound)
      << c.id << " (" << c.source << ", " << c.measured["quantity"].get<std::string>()
      << "): predicted " << o.predicted << ", measured " << o.measured;
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
  Group all;
  for (const PublishedCase& c : cases()) {
    const Outcome& o = outcome(c);
    ASSERT_TRUE(o.error.empty()) << c.id << ": " << o.error;
    const double e = o.relative_error();
    by_source[c.source].add(c.id, e);
    by_gpu_role[c.gpu + " " + c.role].add(c.id, e);
    all.add(c.id, e);
  }
  for (const auto& [name, g] : by_source) print_group("source", name, g);
  for (const auto& [name, g] : by_gpu_role) print_group("gpu", name, g);
  print_group("all", "all", all);
  for (const PublishedCase& c : cases()) {
    const Outcome& o = outcome(c);
    std::printf("[published]   %-58s %-8s predicted %10.4g measured %10.4g  %+6.1f%%\n",
                c.id.c_str(), c.role.c_str(), o.predicted, o.measured, 100 * o.relative_error());
  }
  EXPECT_LE(median(all.errors), kMedianBound);
  EXPECT_LE(all.worst, kCaseBound) << "worst case " << all.worst_id;
}

TEST(PublishedRunsTest, AnUncalibratedPresetFailsTheBounds) {
  // The bounds are tight enough to catch a preset with near-ideal efficiencies (the kind of
  // guess the presets carried before calibration): the H100 cases then run far too fast.
  std::vector<double> errors;
  for (PublishedCase c : cases()) {
    if (c.gpu != "h100-sxm-80gb") continue;
    c.config["system"].merge_patch(nlohmann::json::parse(
        R"({"efficiency": {"gemm": 0.9, "fp8_gemm": 0.9, "memory": {"efficiency": 0.9}}})"));
    const Outcome o = evaluate(c);
    ASSERT_TRUE(o.error.empty()) << c.id << ": " << o.error;
    errors.push_back(std::fabs(o.relative_error()));
  }
  ASSERT_GE(errors.size(), 10u);
  EXPECT_GT(median(errors), kMedianBound);
  EXPECT_GT(*std::max_element(errors.begin(), errors.end()), kCaseBound);
}

TEST(PublishedRunsTest, EverySkippedCaseSaysWhy) {
  for (const auto& s : data()["skipped"]) {
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
