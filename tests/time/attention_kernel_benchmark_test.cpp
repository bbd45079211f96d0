// Each GPU preset's attention model against the published kernel benchmarks its
// provenance cites (tests/validation/data/attention_kernel_benchmarks.json):
// at every benchmarked shape, the preset's efficiency (table x thread-block
// occupancy, core/src/time/efficiency.cpp, without the end-to-end sustained
// fraction) times the bf16 peak must give the published TFLOP/s within the
// file's tolerance. A preset whose table or tiles_half is changed without
// re-deriving the other fails here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "test_util.h"
#include "time/efficiency.h"

namespace trainsim {
namespace {

SystemSpec preset_system(const std::string& gpu) {
  nlohmann::json config = testing::base_config();
  config["system"]["preset"] = gpu;
  Config parsed;
  Issues issues;
  EXPECT_TRUE(parse_config(config.dump(), parsed, issues)) << gpu;
  return parsed.system;
}

// A causal flash attention op of one benchmark shape (self-attention, MHA).
Op attention_op(int64_t batch, int64_t seq_len, int64_t heads, int64_t head_dim) {
  Op op;
  op.attention.batch = batch;
  op.attention.seq_len = seq_len;
  op.attention.heads = heads;
  op.attention.kv_heads = heads;
  op.attention.qk_head_dim = head_dim;
  op.attention.v_head_dim = head_dim;
  op.attention.rank_heads = static_cast<double>(heads);
  op.attention.causal = true;
  op.cost[static_cast<int>(Pass::kForward)].compute = ComputeClass::kAttentionForward;
  op.cost[static_cast<int>(Pass::kBackwardData)].compute = ComputeClass::kAttentionBackward;
  return op;
}

TEST(AttentionKernelBenchmarkTest, PresetsReproduceThePublishedKernelFigures) {
  const nlohmann::json data = nlohmann::json::parse(
      testing::read_text_file(testing::test_data_path("validation/data/attention_kernel_benchmarks.json")));
  ASSERT_FALSE(data["benchmarks"].empty());
  size_t points = 0;
  for (const nlohmann::json& bench : data["benchmarks"]) {
    const std::string gpu = bench["gpu"];
    const SystemSpec system = preset_system(gpu);
    const double peak = bench["peak_tflops_per_s"].get<double>();
    ASSERT_NEAR(system.gpu.peak_bf16_flops_per_s / 1e12, peak, 1e-6 * peak) << gpu;
    const double tolerance = bench["tolerance"];
    TrainingSpec training;
    training.dtype = Dtype::kBf16;
    for (const nlohmann::json& series : bench["series"]) {
      const bool forward = series["pass"] == "forward";
      const int64_t head_dim = series["head_dim"];
      for (const nlohmann::json& shape : series["shapes"]) {
        const Op op = attention_op(shape["batch"], shape["seq_len"], shape["heads"], head_dim);
        const EfficiencyLookup e = compute_efficiency(
            op, forward ? Pass::kForward : Pass::kBackwardData, system, training);
        // The table's efficiency is the burst-clock kernel's: take out the
        // end-to-end sustained fraction compute_efficiency applies.
        const double predicted = e.efficiency / system.efficiency.sustained_fraction * peak;
        const double measured = shape["tflops_per_s"];
        const double error = predicted / measured - 1.0;
        std::printf("[attention-bench] %-14s fig %-3s %-8s d%-4lld s%-6lld predicted %6.1f measured %6.1f (%+.1f%%)\n",
                    gpu.c_str(), series["figure"].get<std::string>().c_str(), forward ? "forward" : "backward",
                    static_cast<long long>(head_dim), static_cast<long long>(shape["seq_len"].get<int64_t>()),
                    predicted, measured, 100 * error);
        EXPECT_LE(std::fabs(error), tolerance)
            << gpu << " fig " << series["figure"] << " seq " << shape["seq_len"] << ": predicted " << predicted
            << " TFLOP/s, published " << measured;
        ++points;
      }
    }
  }
  EXPECT_GE(points, 30u);
}

// The occupancy term: with t thread blocks (batch x heads x 128-query tiles) a
// pass reaches t/(t + tiles_half) of the table (a 16-head, 4096-token causal
// pass on H100: 16 x 32 = 512 blocks, against 64 sequences' 32768).
TEST(AttentionKernelBenchmarkTest, FewThreadBlocksReachTheirShareOfTheTable) {
  const SystemSpec h100 = preset_system("h100-sxm-80gb");
  const double half = h100.efficiency.attention.forward_tiles_half;
  ASSERT_GT(half, 0.0);
  TrainingSpec training;
  training.dtype = Dtype::kBf16;
  const double few = compute_efficiency(attention_op(1, 4096, 16, 128), Pass::kForward, h100, training).efficiency;
  const double many = compute_efficiency(attention_op(64, 4096, 16, 128), Pass::kForward, h100, training).efficiency;
  const double expected = (512.0 / (512.0 + half)) / (32768.0 / (32768.0 + half));
  EXPECT_NEAR(few / many, expected, 1e-9);
  EXPECT_LT(few, many);
}

}  // namespace
}  // namespace trainsim
