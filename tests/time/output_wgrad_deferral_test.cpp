// Megatron-LM --defer-embedding-wgrad-compute / --wgrad-deferral-limit
// (model/output_wgrad_deferral.h): the output layer's weight-gradient GEMMs of the first
// `limit` micro-batches leave the last stage's backward passes and run after its last
// pass (schedules.py finish_embedding_wgrad_compute); until then the stage keeps each
// deferred micro-batch's output-layer input and logits gradient.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;
using testing::estimate_ok;

// Llama-3 8B (vocabulary 128256: the output layer is the largest GEMM of the last stage)
// on 8 pipeline stages of 4 layers, 16 micro-batches of 4096 tokens.
json deep_pipeline(int64_t vpp = 1) {
  return {{"model", "llama3-8b"},
          {"training",
           {{"seq_len", 4096}, {"micro_batch_size", 1}, {"num_micro_batches", 16}, {"pp", 8}, {"vpp", vpp}}},
          {"system", {{"preset", "h100-sxm-80gb"}, {"num_gpus", 8}}}};
}

json with_deferral(json config, int64_t limit) {
  config["training"]["defer_embedding_wgrad_compute"] = true;
  config["training"]["wgrad_deferral_limit"] = limit;
  return config;
}

double iteration_s(const json& r) { return r["time"]["iteration_s"].get<double>(); }

const json& last_stage_time(const json& r) { return r["time"]["stages"].back(); }

// The drain on the last stage's timeline: [kind, micro-batch, chunk, start, end].
const json* drain_event(const json& r) {
  const json* drain = nullptr;
  for (const json& e : r["timeline"]["stages"].back()["events"]) {
    if (e[0] != "weight") continue;
    EXPECT_EQ(drain, nullptr) << "one drain only";
    drain = &e;
  }
  return drain;
}

double span_s(const json& e) { return e[4].get<double>() - e[3].get<double>(); }

TEST(OutputWgradDeferralTest, TheDeferredGemmsRunAfterTheLastStagesLastPass) {
  for (const int64_t vpp : {1, 2}) {
    const json plain = estimate_ok(deep_pipeline(vpp));
    const json deferred = estimate_ok(with_deferral(deep_pipeline(vpp), 0));
    // The stage does the same work: its compute parts are the plain plan's.
    const json& a = last_stage_time(plain)["breakdown"];
    const json& b = last_stage_time(deferred)["breakdown"];
    EXPECT_DOUBLE_EQ(a["backward_s"].get<double>(), b["backward_s"].get<double>()) << vpp;
    EXPECT_DOUBLE_EQ(a["forward_s"].get<double>(), b["forward_s"].get<double>()) << vpp;
    // The last stage's timeline ends with one weight-gradient span after its last pass,
    // as long as all 16 micro-batches' output-layer weight gradients.
    const json* drain = drain_event(deferred);
    ASSERT_NE(drain, nullptr) << vpp;
    double last_pass_end = 0.0;
    for (const json& e : deferred["timeline"]["stages"].back()["events"]) {
      if (e[0] == "forward" || e[0] == "backward") last_pass_end = std::max(last_pass_end, e[4].get<double>());
    }
    EXPECT_EQ((*drain)[1], -1);
    EXPECT_EQ((*drain)[2], vpp - 1) << "the output layer sits on the last chunk";
    EXPECT_GE((*drain)[3].get<double>(), last_pass_end - 1e-12);
    // 16 weight-gradient GEMMs of 2 x 4096 x 4096 x 128256 FLOPs, at or below the bf16 peak
    // (989 TFLOP/s, H100 SXM datasheet) and above a third of it.
    const double gemm_at_peak_s = 2.0 * 4096.0 * 4096.0 * 128256.0 / 989e12;
    EXPECT_GE(span_s(*drain), 16.0 * gemm_at_peak_s) << vpp;
    EXPECT_LE(span_s(*drain), 3.0 * 16.0 * gemm_at_peak_s) << vpp;
    // No other stage draws a drain.
    for (size_t s = 0; s + 1 < deferred["timeline"]["stages"].size(); ++s) {
      for (const json& e : deferred["timeline"]["stages"][s]["events"]) EXPECT_NE(e[0], "weight") << s;
    }
  }
}

TEST(OutputWgradDeferralTest, ADrainShorterThanTheFlushHidesInIt) {
  // Two deferred micro-batches: their GEMMs fit in the flush, where the last stage waits
  // for the first stages' cool-down; the last stage's passes got shorter, so the step does.
  const json plain = estimate_ok(deep_pipeline());
  const json deferred = estimate_ok(with_deferral(deep_pipeline(), 2));
  EXPECT_LT(iteration_s(deferred), iteration_s(plain));
  // Parts still sum to the makespan on every stage (the drain is backward compute).
  for (const json& st : deferred["time"]["stages"]) {
    const json& b = st["breakdown"];
    double sum = 0.0;
    for (const char* k : {"forward_s", "backward_s", "recompute_s", "host_overhead_s", "tp_comm_exposed_s",
                          "cp_comm_exposed_s", "ep_comm_exposed_s", "activation_offload_exposed_s", "pp_comm_exposed_s",
                          "bubble_s", "stage_imbalance_s", "straggler_s", "dp_comm_exposed_s", "optimizer_s"}) {
      sum += b[k].get<double>();
    }
    EXPECT_NEAR(sum, st["total_s"].get<double>(), 1e-9 * sum) << st["stage"];
  }
}

TEST(OutputWgradDeferralTest, ALimitAtOrAboveTheMicroBatchesDefersThemAll) {
  const json all = estimate_ok(with_deferral(deep_pipeline(), 0));
  const json sixteen = estimate_ok(with_deferral(deep_pipeline(), 16));
  const json more = estimate_ok(with_deferral(deep_pipeline(), 1000));
  EXPECT_EQ(iteration_s(all), iteration_s(sixteen));
  EXPECT_EQ(iteration_s(all), iteration_s(more));
  // The drain holds exactly the deferred micro-batches' GEMMs.
  const json eight = estimate_ok(with_deferral(deep_pipeline(), 8));
  const json two = estimate_ok(with_deferral(deep_pipeline(), 2));
  ASSERT_NE(drain_event(all), nullptr);
  ASSERT_NE(drain_event(eight), nullptr);
  ASSERT_NE(drain_event(two), nullptr);
  // (The timeline's times are rounded to 10 ns.)
  EXPECT_NEAR(span_s(*drain_event(all)), 8.0 * span_s(*drain_event(two)), 2e-7);
  EXPECT_NEAR(span_s(*drain_event(eight)), 4.0 * span_s(*drain_event(two)), 2e-7);
}

TEST(OutputWgradDeferralTest, TheLastStageKeepsEachDeferredInputAndLogitsGradient) {
  // Per deferred micro-batch: the input [4096, 4096] and the logits gradient
  // [4096, 128256] in bf16 (no tensor parallelism: nothing is gathered or split).
  const double per_micro_batch = (4096.0 * 4096.0 + 4096.0 * 128256.0) * 2.0;
  const json plain = estimate_ok(deep_pipeline());
  for (const int64_t limit : {1, 5, 0}) {
    const json deferred = estimate_ok(with_deferral(deep_pipeline(), limit));
    const double n = limit == 0 ? 16.0 : static_cast<double>(limit);
    const json& before = plain["memory"]["stages"];
    const json& after = deferred["memory"]["stages"];
    ASSERT_EQ(before.size(), after.size());
    for (size_t s = 0; s < before.size(); ++s) {
      const double grown = after[s]["buffers_bytes"].get<double>() - before[s]["buffers_bytes"].get<double>();
      EXPECT_DOUBLE_EQ(grown, s + 1 == before.size() ? n * per_micro_batch : 0.0) << s;
    }
    EXPECT_GT(after.back()["peak_bytes"].get<double>(), before.back()["peak_bytes"].get<double>());
  }
}

TEST(OutputWgradDeferralTest, SequenceParallelKeepsTheLocalInputAndTheGatheredGradient) {
  json config = deep_pipeline();
  config["training"]["tp"] = 4;
  config["training"]["sequence_parallel"] = true;
  config["system"]["num_gpus"] = 32;
  const json plain = estimate_ok(config);
  const json deferred = estimate_ok(with_deferral(config, 3));
  // Input: the local 1024 rows of 4096; gradient: all 4096 rows of the padded vocabulary's
  // quarter (128256 padded to a multiple of 128 x tp: 128512, Megatron-LM
  // _vocab_size_with_padding), 32128 columns.
  const double per_micro_batch = (1024.0 * 4096.0 + 4096.0 * 32128.0) * 2.0;
  const double grown = deferred["memory"]["stages"].back()["buffers_bytes"].get<double>() -
                       plain["memory"]["stages"].back()["buffers_bytes"].get<double>();
  EXPECT_DOUBLE_EQ(grown, 3.0 * per_micro_batch);
}

}  // namespace
}  // namespace trainsim
