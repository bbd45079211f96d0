// What-if: scaling a system figure moves the step time the way it must, and
// scale_system reaches every place a figure lives.
#include "whatif/sensitivity.h"

#include <gtest/gtest.h>

#include "schema/enums.h"
#include "whatif/system_scaling.h"
#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

Json whatif(const Json& extra) {
  Json document = testing::base_config();
  document["whatif"] = extra;
  const Json envelope = Json::parse(whatif_json(document.dump()));
  EXPECT_TRUE(envelope["ok"].get<bool>()) << envelope;
  return envelope["result"];
}

TEST(WhatIfTest, FactorOneIsTheBaselineForEveryFigure) {
  const Json result = whatif({{"factors", {1.0}}});
  const double baseline = result["baseline"]["iteration_s"].get<double>();
  EXPECT_EQ(baseline,
            testing::estimate_ok(testing::base_config())["time"]["iteration_s"].get<double>());
  ASSERT_EQ(result["figures"].size(), kAllSystemFigures.size());
  for (const Json& figure : result["figures"]) {
    EXPECT_EQ(figure["points"][0]["iteration_s"].get<double>(), baseline) << figure["figure"];
    EXPECT_EQ(figure["points"][0]["speedup"].get<double>(), 1.0);
  }
}

TEST(WhatIfTest, BetterHardwareIsNeverSlower) {
  const Json result = whatif(Json::object());  // default factors 0.5 .. 4
  EXPECT_EQ(result["factors"], (Json{0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0}));
  for (const Json& figure : result["figures"]) {
    const bool smaller_better = figure["smaller_is_better"].get<bool>();
    const Json& points = figure["points"];
    for (size_t i = 1; i < points.size(); ++i) {
      const double before = points[i - 1]["iteration_s"].get<double>();
      const double after = points[i]["iteration_s"].get<double>();
      if (smaller_better) {
        EXPECT_GE(after, before) << figure["figure"];
      } else {
        EXPECT_LE(after, before) << figure["figure"];
      }
    }
    EXPECT_GE(figure["speedup_when_twice_as_good"].get<double>(), 1.0) << figure["figure"];
  }
}

TEST(WhatIfTest, ComputeBoundPlanIsMostSensitiveToPeakFlops) {
  const Json result = whatif(Json::object());
  EXPECT_EQ(result["most_sensitive"], "peak_flops");
  for (const Json& figure : result["figures"]) {
    if (figure["figure"] == "peak_flops") {
      EXPECT_GT(figure["speedup_when_twice_as_good"].get<double>(), 1.3);
    }
    if (figure["figure"] == "hbm_capacity") {
      // Capacity changes what fits, never the step time.
      EXPECT_EQ(figure["speedup_when_twice_as_good"].get<double>(), 1.0);
      EXPECT_FALSE(figure["points"][0]["fits"].get<bool>() &&
                   result["baseline"]["peak_bytes"].get<double>() >
                       0.5 * 80.0 * 1024 * 1024 * 1024);
    }
  }
}

TEST(WhatIfTest, ScaleSystemReachesTiersOverridesAndTables) {
  SystemSpec system;
  system.gpu.peak_bf16_flops_per_s = 1.0;
  system.gpu.peak_fp16_flops_per_s = 2.0;
  system.gpu.peak_fp8_flops_per_s = 4.0;
  system.intra_node.bandwidth_bytes_per_s = 10.0;
  system.intra_node.latency_s = 1.0;
  system.intra_node.collectives[0].latency_s = 3.0;  // override
  system.intra_node.dp_all_gather_bytes_per_s[4] = 8.0;
  system.intra_node_tiers.push_back(system.intra_node);
  system.inter_node.bandwidth_bytes_per_s = 5.0;
  system.efficiency.memory.latency_s = 1.0;
  const SystemSpec flops = scale_system(system, SystemFigure::kPeakFlops, 2.0);
  EXPECT_EQ(flops.gpu.peak_fp8_flops_per_s, 8.0);
  EXPECT_EQ(flops.gpu.peak_fp16_flops_per_s, 4.0);
  const SystemSpec intra = scale_system(system, SystemFigure::kIntraNodeBandwidth, 2.0);
  EXPECT_EQ(intra.intra_node.bandwidth_bytes_per_s, 20.0);
  EXPECT_EQ(intra.intra_node_tiers[0].bandwidth_bytes_per_s, 20.0);
  EXPECT_EQ(intra.intra_node.dp_all_gather_bytes_per_s.at(4), 16.0);
  EXPECT_EQ(intra.inter_node.bandwidth_bytes_per_s, 5.0);
  const SystemSpec latency = scale_system(system, SystemFigure::kIntraNodeLatency, 0.5);
  EXPECT_EQ(latency.intra_node.latency_s, 0.5);
  EXPECT_EQ(latency.intra_node.collectives[0].latency_s, 1.5);
  EXPECT_LT(latency.intra_node.collectives[1].latency_s, 0.0);  // "the link's" stays unset
  EXPECT_EQ(latency.intra_node_tiers[0].latency_s, 0.5);
  EXPECT_EQ(scale_system(system, SystemFigure::kKernelLatency, 3.0).efficiency.memory.latency_s,
            3.0);
  const schema::EnumNames& names = schema::whatif_figure_names();
  ASSERT_EQ(names.names.size(), kAllSystemFigures.size());
  for (const SystemFigure figure : kAllSystemFigures) {
    EXPECT_EQ(names.find(names.of(figure)), static_cast<size_t>(figure));
  }
}

}  // namespace
}  // namespace trainsim
