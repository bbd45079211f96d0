// Per-stage peak memory against SimuMax v1.2's predictions (177 configurations
// on its A100-PCIe system; SimuMax is within ~1% of real Megatron-LM memory).
// Data: tests/validation/data/simumax_a100_oracle.json (transcribed, see
// transcribe_simumax_oracle.py). Targets (issue "Core engine v1"): peak within
// 1% on >= 95% of cases and within 2% on all; parts within 2%.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "test_util.h"
#include "validation/oracle_cases.h"

namespace trainsim {
namespace {

// Cases where trainsim deliberately follows Megatron-LM / Transformer Engine
// instead of SimuMax. Each is reported, not asserted against the oracle.
struct KnownDeviation {
  int64_t id;
  const char* reason;
};
const KnownDeviation kDeviations[] = {
    {97, "1 micro-batch with pp=2: Megatron keeps min(pp - rank, micro-batches) = 1 in flight on "
         "stage 0 (schedules.py); SimuMax counts 2"},
    {124, "interleaved pipeline with async p2p: Megatron still runs the interleaved schedule; "
          "SimuMax falls back to the non-interleaved in-flight count"},
    {209, "3 dense layers over 2-layer stages: Megatron places dense layers by global index "
          "(layer 2 on stage 1); SimuMax drops the surplus and makes stage 1 all-MoE"},
    // Megatron-LM transformer_layer.py (_forward_mlp): the MLP checkpoint saves its
    // input, the pre-MLP norm output, whose storage the layernorm checkpoint then frees
    // (CheckpointWithoutOutput.discard_output_and_register_recompute) and restores in
    // backward before the MLP is recomputed, so the layer keeps only the norm's input.
    {121, "layernorm + mlp recompute: the MLP checkpoint's input is the discarded norm output "
          "(transformer_layer.py), so only the norm input is kept; SimuMax keeps more"},
    {149, "layernorm + mlp recompute: the MLP checkpoint's input is the discarded norm output "
          "(transformer_layer.py), so only the norm input is kept; SimuMax keeps more"},
};
// Peak within 2%, but the activation part differs by design: a recomputed
// segment of a single op stores its input as the checkpoint (Megatron's
// checkpoint saves its inputs); SimuMax marks such a segment "last" and
// stores nothing until the recompute.
const KnownDeviation kActivationDeviations[] = {
    {116, "core_attn recompute: the core attention's q/k/v input is the checkpoint"},
    {191, "mla_up_proj with q_lora_rank 0: linear_q_proj's input is the checkpoint"},
};

// Configurations SimuMax accepts that Transformer Engine cannot run.
const KnownDeviation kRejected[] = {
    {147, "context-parallel all-to-all needs kv heads per tp rank (8/8 = 1) divisible by cp (2)"},
};

bool is_deviation(int64_t id) {
  for (const auto& d : kDeviations) {
    if (d.id == id) return true;
  }
  return false;
}

bool is_activation_deviation(int64_t id) {
  for (const auto& d : kActivationDeviations) {
    if (d.id == id) return true;
  }
  return false;
}

bool is_rejected(int64_t id) {
  for (const auto& d : kRejected) {
    if (d.id == id) return true;
  }
  return false;
}

struct StageComparison {
  int64_t case_id = 0;
  std::string stage;
  double expected = 0.0;
  double actual = 0.0;
  double error() const { return (actual - expected) / expected; }
};

const std::vector<StageComparison>& comparisons() {
  static const std::vector<StageComparison> rows = [] {
    std::vector<StageComparison> out;
    for (const testing::OracleCase& c : testing::oracle_cases()) {
      if (!c.result.contains("memory") || is_deviation(c.id)) continue;
      for (const auto& [name, expected] : c.expected["memory"].items()) {
        const nlohmann::json& stage = testing::oracle_stage(c, name);
        out.push_back({c.id, name, expected["peak_bytes"].get<double>(),
                       stage["peak_bytes"].get<double>()});
      }
    }
    return out;
  }();
  return rows;
}

double fraction_within(const std::vector<double>& errors, double bound) {
  const auto n = std::count_if(errors.begin(), errors.end(),
                               [&](double e) { return std::fabs(e) <= bound; });
  return static_cast<double>(n) / static_cast<double>(errors.size());
}

TEST(SimumaxOracleMemoryTest, EveryCaseImportsAndEstimates) {
  for (const testing::OracleCase& c : testing::oracle_cases()) {
    if (is_rejected(c.id)) {
      EXPECT_FALSE(c.result.contains("memory")) << "case " << c.id << " should be rejected";
      EXPECT_NE(c.error.find("cp_comm_type"), std::string::npos) << c.error;
      continue;
    }
    EXPECT_TRUE(c.result.contains("memory")) << "case " << c.id << ": " << c.error;
  }
}

TEST(SimumaxOracleMemoryTest, KnownDeviationsAreReported) {
  for (const auto& d : kDeviations) {
    bool found = false;
    for (const testing::OracleCase& c : testing::oracle_cases()) {
      if (c.id != d.id || !c.result.contains("memory")) continue;
      found = true;
      for (const auto& [name, expected] : c.expected["memory"].items()) {
        const double ours = testing::oracle_stage(c, name)["peak_bytes"].get<double>();
        std::printf("[oracle memory] deviation case %lld %s: %+.1f%% (%s)\n",
                    static_cast<long long>(d.id), name.c_str(),
                    100 * (ours / expected["peak_bytes"].get<double>() - 1), d.reason);
      }
    }
    EXPECT_TRUE(found) << "deviation case " << d.id << " is missing";
  }
}

TEST(SimumaxOracleMemoryTest, PeakWithinOnePercentOnNinetyFivePercentOfCases) {
  // Case level: the max over stages, as torch.cuda.max_memory_allocated over ranks.
  std::vector<double> errors;
  for (const testing::OracleCase& c : testing::oracle_cases()) {
    if (!c.result.contains("memory") || is_deviation(c.id)) continue;
    double expected = 0.0;
    for (const auto& [name, stage] : c.expected["memory"].items()) {
      expected = std::max(expected, stage["peak_bytes"].get<double>());
    }
    const double actual = c.result["memory"]["peak_bytes"].get<double>();
    errors.push_back((actual - expected) / expected);
  }
  ASSERT_GE(errors.size(), 170u);
  const double within_1 = fraction_within(errors, 0.01);
  const double within_2 = fraction_within(errors, 0.02);
  std::printf("[oracle memory] cases %zu: within 0.1%% %.1f%%, within 1%% %.1f%%, within 2%% %.1f%%\n",
              errors.size(), 100 * fraction_within(errors, 0.001), 100 * within_1, 100 * within_2);
  EXPECT_GE(within_1, 0.95);
  EXPECT_EQ(within_2, 1.0);
}

TEST(SimumaxOracleMemoryTest, EveryStageWithinTwoPercent) {
  std::vector<double> errors;
  for (const StageComparison& row : comparisons()) {
    errors.push_back(row.error());
    EXPECT_LE(std::fabs(row.error()), 0.02)
        << "case " << row.case_id << " " << row.stage << ": expected " << row.expected
        << " got " << row.actual;
  }
  std::printf("[oracle memory] stages %zu: within 0.1%% %.1f%%, within 1%% %.1f%%\n", errors.size(),
              100 * fraction_within(errors, 0.001), 100 * fraction_within(errors, 0.01));
}

TEST(SimumaxOracleMemoryTest, PartsWithinTwoPercent) {
  for (const testing::OracleCase& c : testing::oracle_cases()) {
    if (!c.result.contains("memory") || is_deviation(c.id)) continue;
    for (const auto& item : c.expected["memory"].items()) {
      // Not a structured binding: Clang 14 cannot capture one in the lambda below.
      const std::string& name = item.key();
      const nlohmann::json& expected = item.value();
      const nlohmann::json& stage = testing::oracle_stage(c, name);
      auto part = [&](const char* dense, const char* moe) {
        return expected[dense].get<double>() + expected[moe].get<double>();
      };
      const double weights = part("dense_weight_bytes", "moe_weight_bytes");
      const double grads = part("dense_grad_bytes", "moe_grad_bytes");
      const double optimizer = part("dense_optimizer_bytes", "moe_optimizer_bytes");
      const double activations = expected["peak_bytes"].get<double>() - weights - grads -
                                 optimizer - expected["te_dummy_wgrad_bytes"].get<double>();
      const double our_activations =
          stage["activations_bytes"].get<double>() + stage["transient_bytes"].get<double>();
      const std::string where = "case " + std::to_string(c.id) + " " + name;
      EXPECT_NEAR(stage["parameters_bytes"].get<double>(), weights, 0.02 * weights) << where;
      EXPECT_NEAR(stage["gradients_bytes"].get<double>(), grads, 0.02 * grads) << where;
      EXPECT_NEAR(stage["optimizer_bytes"].get<double>(), optimizer, 0.02 * optimizer) << where;
      if (is_activation_deviation(c.id)) {
        // The extra bytes are the single-op segments' inputs: ours is higher.
        EXPECT_GT(our_activations, activations) << where;
        continue;
      }
      EXPECT_NEAR(our_activations, activations, 0.02 * activations) << where;
    }
  }
}

}  // namespace
}  // namespace trainsim
