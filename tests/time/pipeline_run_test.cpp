// training.pipeline_schedule end to end: every schedule estimates through the
// config, its memory comes from its own order, its timeline shows the B/W
// split, DualPipe doubles the weights and hides expert all-to-all, the search's
// lower bound stays below every schedule's simulated step, and the breakdown
// keeps stage imbalance apart from the schedule's bubble.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "estimate_options.h"
#include "test_util.h"
#include "time/pipeline_run.h"
#include "time/pipeline_schedule.h"

namespace trainsim {
namespace {

using nlohmann::json;

json plan(const std::string& schedule, int64_t vpp, const std::string& model = "llama3-8b",
          int64_t micro_batches = 16) {
  json config = {{"model", model},
                 {"training",
                  {{"seq_len", 4096}, {"micro_batch_size", 1}, {"num_micro_batches", micro_batches},
                   {"tp", 1}, {"pp", 4}, {"vpp", vpp}, {"pipeline_schedule", schedule}}},
                 {"system", {{"preset", "h100-sxm-80gb"}, {"num_gpus", 8}}}};
  if (model != "llama3-8b") {
    config["training"]["ep"] = 2;
    config["model"] = {{"preset", model}, {"num_layers", 8}};
  }
  return config;
}

double part(const json& r, const char* key) { return r["time"]["breakdown"][key].get<double>(); }

TEST(PipelineRunTest, OneFOneBIsMegatronsReplay) {
  // run_pipeline's 1f1b path is simulate_pipeline on the phase times, bit for bit.
  PipelineRunInput in;
  in.num_micro_batches = 8;
  in.boundary_p2p_s = {1e-3, 2e-3, 1e-3, 5e-4};
  ScheduleInput old;
  old.num_micro_batches = 8;
  old.interleaved_p2p_s = 2e-3;
  for (int r = 0; r < 4; ++r) {
    in.chunks.emplace_back();
    old.phases.emplace_back();
    for (int c = 0; c < 2; ++c) {
      ChunkTime t;
      t.forward_s = 0.01 * (r + 1) + 0.003 * c;
      t.backward_s = 0.02 + 0.001 * r;
      t.weight_s = 0.007;
      in.chunks.back().push_back(t);
      old.phases.back().push_back({t.forward_phase_s(), t.backward_phase_s()});
    }
  }
  EXPECT_EQ(run_pipeline(in).makespan_s, simulate_pipeline(old).makespan_s);
}

TEST(PipelineRunTest, EverySchedulePlansAndShowsItsPasses) {
  const std::map<std::string, std::set<std::string>> kinds = {
      {"1f1b", {"forward", "backward", "send", "recv"}},
      {"zero_bubble_h1", {"forward", "backward", "weight"}},
      {"zero_bubble_h2", {"forward", "backward", "weight"}},
      {"zero_bubble_v", {"forward", "backward", "weight"}},
      {"dualpipe", {"forward", "backward", "weight", "forward_backward"}},
      {"dualpipe_v", {"forward", "backward", "weight", "forward_backward"}}};
  for (const auto& [schedule, expected] : kinds) {
    const int64_t vpp = schedule == "zero_bubble_v" || schedule == "dualpipe_v" ? 2 : 1;
    const json r = testing::estimate_ok(plan(schedule, vpp));
    std::set<std::string> seen;
    int64_t forwards = 0;
    for (const json& e : r["timeline"]["stages"][1]["events"]) {
      if (e[0] == "dp_comm" || e[0] == "optimizer") continue;
      seen.insert(e[0].get<std::string>());
      forwards += e[0] == "forward" || e[0] == "forward_backward" ? 1 : 0;
    }
    EXPECT_EQ(seen, expected) << schedule;
    // Each micro-batch crosses every chunk of a rank once (DualPipe: one direction each).
    EXPECT_EQ(forwards, schedule == "dualpipe" ? 16 : 16 * vpp) << schedule;
    const json& b = r["time"]["breakdown"];
    double sum = 0.0;
    for (const auto& [key, value] : b.items()) sum += value.get<double>();
    EXPECT_NEAR(sum, r["time"]["iteration_s"].get<double>(), 1e-9 * sum) << schedule;
  }
}

TEST(PipelineRunTest, ZeroBubbleSchedulesShrinkTheBubble) {
  const json one = testing::estimate_ok(plan("1f1b", 1));
  const json h1 = testing::estimate_ok(plan("zero_bubble_h1", 1));
  const json h2 = testing::estimate_ok(plan("zero_bubble_h2", 1));
  // Qi et al. Table 1: 1F1B (p-1)(F+B+W) > ZB-H1 (p-1)(F+B-W) > ZB-H2 (p-1)(F+B-2W).
  EXPECT_LT(part(h1, "bubble_s"), 0.6 * part(one, "bubble_s"));
  // (equal here up to rounding: the summation order of the two schedules' events differs)
  EXPECT_LE(part(h2, "bubble_s"), part(h1, "bubble_s") * (1.0 + 1e-12));
  EXPECT_LT(h1["time"]["iteration_s"].get<double>(), one["time"]["iteration_s"].get<double>());
  // Same work, only reordered (per stage: which stage is critical may differ, as a stage
  // that finishes early hides its gradient reduction).
  for (size_t s = 0; s < 4; ++s) {
    const json& a = h1["time"]["stages"][s]["breakdown"];
    const json& b = one["time"]["stages"][s]["breakdown"];
    EXPECT_DOUBLE_EQ(a["forward_s"].get<double>(), b["forward_s"].get<double>()) << s;
    EXPECT_DOUBLE_EQ(a["backward_s"].get<double>(), b["backward_s"].get<double>()) << s;
  }
}

TEST(PipelineRunTest, ActivationsInFlightFollowEachPaper) {
  auto in_flight = [](const json& r, size_t stage) {
    return r["memory"]["stages"][stage]["in_flight_micro_batches"].get<int64_t>();
  };
  // 1F1B and ZB-H1: p on stage 0 (Qi et al. Table 1, p M_B); ZB-H2: 2p - 1.
  EXPECT_EQ(in_flight(testing::estimate_ok(plan("zero_bubble_h1", 1)), 0), 4);
  EXPECT_EQ(in_flight(testing::estimate_ok(plan("zero_bubble_h2", 1)), 0), 7);
  // DualPipe: PP + 1 micro-batch activations per device (DualPipe README table).
  const json dual = testing::estimate_ok(plan("dualpipe", 1));
  for (size_t s = 0; s < 4; ++s) EXPECT_EQ(in_flight(dual, s), 5) << s;
  // ZB-V caps activations at 2p half-stage chunks, the memory of 1F1B's stage 0.
  EXPECT_LE(in_flight(testing::estimate_ok(plan("zero_bubble_v", 2)), 0), 8);
}

TEST(PipelineRunTest, DualPipeHoldsTwoStagesOfWeights) {
  // Rank r keeps stage r and stage pp - 1 - r (DeepSeek-V3 Table 2: parameters 2x).
  const json one = testing::estimate_ok(plan("1f1b", 1));
  const json dual = testing::estimate_ok(plan("dualpipe", 1));
  for (size_t r = 0; r < 4; ++r) {
    const double expected = one["memory"]["stages"][r]["parameters_bytes"].get<double>() +
                            one["memory"]["stages"][3 - r]["parameters_bytes"].get<double>();
    EXPECT_NEAR(dual["memory"]["stages"][r]["parameters_bytes"].get<double>(), expected, 1e-9 * expected);
    const double optimizer = one["memory"]["stages"][r]["optimizer_bytes"].get<double>() +
                             one["memory"]["stages"][3 - r]["optimizer_bytes"].get<double>();
    EXPECT_NEAR(dual["memory"]["stages"][r]["optimizer_bytes"].get<double>(), optimizer, 1e-9 * optimizer);
  }
}

TEST(PipelineRunTest, DualPipeHidesExpertAllToAll) {
  // The overlapped F&B pairs hide the all-to-all of one pass behind the other's compute
  // (DeepSeek-V3 section 3.2.1); DualPipeV has the same pairs without doubled weights.
  const json one = testing::estimate_ok(plan("1f1b", 1, "mixtral-8x7b"));
  const json dual = testing::estimate_ok(plan("dualpipe", 1, "mixtral-8x7b"));
  const json v = testing::estimate_ok(plan("dualpipe_v", 2, "mixtral-8x7b"));
  ASSERT_GT(part(one, "ep_comm_exposed_s"), 0.0);
  EXPECT_LT(part(dual, "ep_comm_exposed_s"), 0.5 * part(one, "ep_comm_exposed_s"));
  EXPECT_LT(part(v, "ep_comm_exposed_s"), 0.5 * part(one, "ep_comm_exposed_s"));
  // Without expert parallelism nothing is hidden.
  json dense = plan("dualpipe", 1, "mixtral-8x7b");
  dense["training"]["ep"] = 1;
  const json no_ep = testing::estimate_ok(dense);
  EXPECT_EQ(part(no_ep, "ep_comm_exposed_s"), 0.0);
}

TEST(PipelineRunTest, LowerBoundHoldsForEverySchedule) {
  // The search prices plans by pipeline_run_lower_bound() first; it must never exceed the
  // simulated step (DualPipe's F&B pairs take less than F + B + W: the bound leaves out the
  // expert all-to-all they can hide).
  std::mt19937 rng(7);
  const char* schedules[] = {"1f1b", "zero_bubble_h1", "zero_bubble_h2", "zero_bubble_v", "dualpipe", "dualpipe_v"};
  int checked = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const std::string schedule = schedules[trial % 6];
    const int64_t vpp = schedule == "zero_bubble_v" || schedule == "dualpipe_v" ? 2 : (trial % 4 == 0 ? 2 : 1);
    const int64_t m = 8 * (1 + static_cast<int64_t>(rng() % 4));
    json config = plan(schedule, vpp, trial % 2 == 0 ? "mixtral-8x7b" : "llama3-8b", m);
    config["training"]["micro_batch_size"] = 1 + static_cast<int64_t>(rng() % 2);
    Config parsed;
    Issues issues;
    if (!parse_config(config.dump(), parsed, issues)) continue;
    EstimateOptions bound_options;
    bound_options.time_lower_bound = true;
    const double bound = estimate_with(parsed, bound_options, nullptr).time.iteration_s;
    const double exact = estimate_with(parsed, EstimateOptions{}, nullptr).time.iteration_s;
    EXPECT_LE(bound, exact * (1.0 + 1e-12)) << config.dump();
    ++checked;
  }
  EXPECT_GE(checked, 50);
}

TEST(PipelineRunTest, ImbalanceIsNotBubble) {
  // DeepSeek-V3 with a light first stage (3 dense layers) that ends the step last (no
  // distributed optimizer: its embedding's optimizer step is the longest). Before
  // stage_imbalance_s, its ~17 s of waiting on the MoE stages read as a 73% "bubble".
  const json r = testing::estimate_ok(json::parse(R"({
    "model": {"preset": "deepseek-v3", "mtp_num_layers": 0},
    "training": {"seq_len": 4096, "micro_batch_size": 1, "global_batch_size": 8192, "tp": 1, "pp": 16,
                 "ep": 64, "zero_stage": 0, "pipeline_layout": "Et*3|(t*4|)*14t*2L",
                 "recompute": {"granularity": "full", "method": "uniform", "num_layers": 1}},
    "system": {"preset": "h100-sxm-80gb", "num_gpus": 2048}})"));
  const json& t = r["time"];
  ASSERT_EQ(t["critical_stage"], 0);
  const auto bottleneck = t["bottleneck_stage"].get<size_t>();
  ASSERT_NE(bottleneck, 0u);
  const double step = t["iteration_s"].get<double>();
  const json& b = t["breakdown"];
  EXPECT_EQ(b["ep_comm_exposed_s"].get<double>(), 0.0);  // its own parts: dense layers only
  EXPECT_GT(b["stage_imbalance_s"].get<double>(), 0.4 * step);
  EXPECT_LT(b["bubble_s"].get<double>(), 0.25 * step);
  // The bubble is the bottleneck's own idle time (up to their different p2p).
  const json& own = t["stages"][bottleneck]["breakdown"];
  EXPECT_EQ(own["stage_imbalance_s"].get<double>(), 0.0);
  EXPECT_GT(own["ep_comm_exposed_s"].get<double>(), 1.0);
  EXPECT_NEAR(b["bubble_s"].get<double>(), own["bubble_s"].get<double>(),
              std::abs(b["pp_comm_exposed_s"].get<double>() - own["pp_comm_exposed_s"].get<double>()) + 1e-9);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// A host-bound step (a small MoE model on two H200 stages, 2 x 1024 tokens per
// micro-batch): with W run apart from B, W's kernel launches are issued when W runs, so
// doubling the GPU's FLOP/s leaves B no longer and the step no slower (the host time of
// the whole backward once went to B, and a faster W lengthened the critical path).
TEST(PipelineRunTest, AFasterGpuNeverSlowsASplitWeightGradientSchedule) {
  const nlohmann::json base_config = nlohmann::json::parse(R"({"model": {"activation": "swiglu",
      "ffn_hidden_size": 3072, "hidden_size": 1024, "linear_bias": true, "norm": "rmsnorm",
      "moe": {"expert_ffn_hidden_size": 1024, "num_dense_layers": 1, "num_experts": 16,
              "top_k": 8},
      "num_attention_heads": 16, "num_kv_heads": 4, "num_layers": 6, "vocab_size": 32000},
    "system": {"num_gpus": 8, "preset": "h200-sxm-141gb"},
    "training": {"cp": 2, "cp_comm_type": "a2a", "dp": 2, "micro_batch_size": 2,
      "num_micro_batches": 4, "pp": 2, "seq_len": 1024, "zero_stage": 3}})");
  const nlohmann::json preset =
      nlohmann::json::parse(preset_json("h200-sxm-141gb"))["result"]["system"];
  int host_bound = 0;
  for (const char* schedule : {"1f1b", "zero_bubble_h1", "zero_bubble_h2", "dualpipe"}) {
    nlohmann::json config = base_config;
    config["training"]["pipeline_schedule"] = schedule;
    const nlohmann::json base = testing::estimate_ok(config);
    nlohmann::json faster = preset;
    for (auto& [dtype, tflops] : faster["gpu"]["peak_tflops"].items()) {
      tflops = tflops.get<double>() * 2;
    }
    faster["num_gpus"] = 8;
    config["system"] = faster;
    const nlohmann::json fast = testing::estimate_ok(config);
    EXPECT_LE(fast["time"]["iteration_s"].get<double>(),
              base["time"]["iteration_s"].get<double>() * (1 + 1e-12))
        << schedule;
    host_bound += fast["time"]["breakdown"]["host_overhead_s"].get<double>() > 0.0 ? 1 : 0;
  }
  EXPECT_EQ(host_bound, 4);  // the case is the one it tests: the host holds the GPU back
}

}  // namespace
}  // namespace trainsim
