// The estimator's invariants under every pipeline schedule: the random configs of
// random_configs.h with pp > 1, each given a schedule its rules allow (drawn from a
// stream of its own), then the laws that hold whatever the order of the passes:
// parts sum to the step, MFU <= 1, faster hardware never slows a step, more
// recompute never raises the activation memory at the peak (stored and transient
// together: the peak may move to another pass) nor shortens the step, and a higher
// ZeRO stage never raises the static memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "properties/random_configs.h"
#include "test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;
using testing::random_config;

constexpr int kNumSeeds = 160;

// The schedules a config's sizes allow (time/schedule_orders.cpp schedule_supported).
std::vector<std::string> allowed_schedules(const json& t) {
  const int64_t pp = t["pp"], vpp = t["vpp"], m = t["num_micro_batches"];
  if (vpp > 1) {
    std::vector<std::string> out = {"1f1b", "zero_bubble_v"};
    if (m >= 2 * pp) out.push_back("dualpipe_v");
    return out;
  }
  std::vector<std::string> out = {"1f1b", "zero_bubble_h1"};
  if (m >= 2 * pp) out.push_back("zero_bubble_h2");
  if (m >= 2 * pp && pp % 2 == 0 && m % 2 == 0) out.push_back("dualpipe");
  return out;
}

// Every config with pipeline stages, under one schedule it allows (seeded).
template <typename Check>
void for_each_scheduled(Check&& check) {
  for (int i = 0; i < kNumSeeds; ++i) {
    const uint64_t seed = 1000 + static_cast<uint64_t>(i);
    json config = random_config(seed);
    if (config["training"]["pp"].get<int64_t>() < 2) continue;
    const std::vector<std::string> schedules = allowed_schedules(config["training"]);
    testing::Rng draw(seed * 7919);
    std::vector<int64_t> index(schedules.size());
    for (size_t k = 0; k < index.size(); ++k) index[k] = static_cast<int64_t>(k);
    const std::string schedule = schedules[static_cast<size_t>(draw.pick(index))];
    config["training"]["pipeline_schedule"] = schedule;
    SCOPED_TRACE("seed " + std::to_string(seed) + " " + schedule);
    check(config, schedule);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

json estimate_of(const json& config) { return testing::estimate_ok(config); }

double parts_sum(const json& breakdown) {
  double sum = 0.0;
  for (const auto& [key, value] : breakdown.items()) {
    if (value.is_number()) sum += value.get<double>();
  }
  return sum;
}

bool near(double a, double b, double rel) {
  return std::fabs(a - b) <= rel * std::max({std::fabs(a), std::fabs(b), 1e-300});
}

TEST(ScheduleInvariantsTest, EveryScheduleIsDrawn) {
  std::set<std::string> seen;
  int configs = 0;
  for_each_scheduled([&](const json&, const std::string& schedule) {
    seen.insert(schedule);
    ++configs;
  });
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_GE(configs, 60);
}

TEST(ScheduleInvariantsTest, PartsSumToTheStepAndMfuStaysBelowOne) {
  for_each_scheduled([](const json& config, const std::string&) {
    const json r = estimate_of(config);
    const double step = r["time"]["iteration_s"].get<double>();
    EXPECT_TRUE(near(parts_sum(r["time"]["breakdown"]), step, 1e-9));
    for (const json& s : r["time"]["stages"]) {
      EXPECT_TRUE(near(parts_sum(s["breakdown"]), s["total_s"].get<double>(), 1e-9));
      for (const auto& [key, value] : s["breakdown"].items()) {
        EXPECT_GE(value.get<double>(), 0.0) << key;
      }
    }
    EXPECT_LE(r["throughput"]["mfu"].get<double>(), 1.0);
  });
}

TEST(ScheduleInvariantsTest, FasterHardwareNeverSlowsAStep) {
  for_each_scheduled([](const json& config, const std::string&) {
    const double t0 = estimate_of(config)["time"]["iteration_s"].get<double>();
    json system = json::parse(preset_json(config["system"]["preset"].get<std::string>()))["result"]["system"];
    system["num_gpus"] = config["system"]["num_gpus"];
    for (auto& [dtype, tflops] : system["gpu"]["peak_tflops"].items()) tflops = tflops.get<double>() * 2;
    system["gpu"]["hbm_bandwidth_gb_per_s"] = system["gpu"]["hbm_bandwidth_gb_per_s"].get<double>() * 2;
    json faster = config;
    faster["system"] = system;
    EXPECT_LE(estimate_of(faster)["time"]["iteration_s"].get<double>(), t0 * (1 + 1e-12)) << config.dump();
  });
}

TEST(ScheduleInvariantsTest, FullRecomputeNeverRaisesThePeakActivationsNorShortensTheStep) {
  for_each_scheduled([](const json& config, const std::string&) {
    json none = config;
    none["training"].erase("recompute");
    json full = none;
    const int64_t chunk_layers = config["model"]["num_layers"].get<int64_t>() /
                                 config["training"]["pp"].get<int64_t>() /
                                 config["training"]["vpp"].get<int64_t>();
    full["training"]["recompute"] = {{"granularity", "full"}, {"method", "block"}, {"num_layers", chunk_layers}};
    const json a = estimate_of(none);
    const json b = estimate_of(full);
    for (size_t s = 0; s < a["memory"]["stages"].size(); ++s) {
      const json& x = a["memory"]["stages"][s];
      const json& y = b["memory"]["stages"][s];
      EXPECT_LE(y["activations_bytes"].get<double>() + y["transient_bytes"].get<double>(),
                (x["activations_bytes"].get<double>() + x["transient_bytes"].get<double>()) * (1 + 1e-12))
          << "stage " << s;
    }
    EXPECT_GE(b["time"]["iteration_s"].get<double>(), a["time"]["iteration_s"].get<double>() * (1 - 1e-12));
  });
}

TEST(ScheduleInvariantsTest, HigherZeroStageNeverRaisesStaticMemory) {
  for_each_scheduled([](const json& config, const std::string&) {
    double previous = -1.0;
    for (const int zero : {0, 1, 2, 3}) {
      json c = config;
      c["training"]["zero_stage"] = zero;
      const json r = estimate_of(c);
      double static_bytes = 0.0;
      for (const json& s : r["memory"]["stages"]) {
        static_bytes = std::max(static_bytes, s["parameters_bytes"].get<double>() +
                                                  s["gradients_bytes"].get<double>() +
                                                  s["optimizer_bytes"].get<double>());
      }
      if (previous >= 0.0) {
        EXPECT_LE(static_bytes, previous * (1 + 1e-12)) << "zero " << zero;
      }
      previous = static_bytes;
    }
  });
}

}  // namespace
}  // namespace trainsim
