// Expert-parallel overlap (time/ep_overlap.h): the two-stream layer schedule of
// Megatron-LM's combined 1F1B against hand-computed closed forms, its invariants on
// random layers, the pipeline replays with merged steps, and end-to-end estimates.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

#include "properties/random_configs.h"
#include "test_util.h"
#include "time/ep_overlap.h"
#include "time/pipeline_schedule.h"

namespace trainsim {
namespace {

using nlohmann::json;

// A MoE layer with the given node times (seconds).
LayerParts layer(double pre_f, double dispatch_f, double mlp_f, double combine_f, double combine_b, double mlp_d,
                 double mlp_w, double dispatch_b, double pre_d, double pre_w) {
  LayerParts l;
  l.pre_dispatch_fwd_s = pre_f;
  l.dispatch_fwd_s = dispatch_f;
  l.mlp_fwd_s = mlp_f;
  l.combine_fwd_s = combine_f;
  l.combine_bwd_s = combine_b;
  l.mlp_dgrad_s = mlp_d;
  l.mlp_wgrad_s = mlp_w;
  l.dispatch_bwd_s = dispatch_b;
  l.pre_dispatch_dgrad_s = pre_d;
  l.pre_dispatch_wgrad_s = pre_w;
  return l;
}

double compute_s(const LayerParts& l, bool forward) {
  return forward ? l.forward_s() - l.forward_comm_s() : l.backward_s() - l.backward_comm_s();
}

TEST(EpOverlapTest, ComputeBoundPairHidesEveryAllToAll) {
  // Each all-to-all is shorter than the compute it runs beside: the merged step takes the
  // compute of both passes (4 + 6 + 4 + 6 = 20 s) and hides all 4 s of communication.
  const LayerParts l = layer(4, 1, 4, 1, 1, 3, 3, 1, 4, 2);
  const MergedLayers m = merge_layers({l}, {l}, false);
  EXPECT_DOUBLE_EQ(m.serial_s, 10.0 + 14.0);
  EXPECT_DOUBLE_EQ(m.merged_s, 20.0);
  EXPECT_DOUBLE_EQ(m.hidden_s(), l.forward_comm_s() + l.backward_comm_s());
}

TEST(EpOverlapTest, CommBoundPairSavesTheComputeItHides) {
  // All-to-alls of 5 s each, compute of 1 s per node: the communication stream is busy
  // back to back (4 x 5 = 20 s), and the step saves exactly the compute (1 + 2 + 1 + 1).
  const LayerParts l = layer(1, 5, 1, 5, 5, 1, 1, 5, 1, 0);
  const MergedLayers m = merge_layers({l}, {l}, false);
  EXPECT_DOUBLE_EQ(m.serial_s, 12.0 + 13.0);
  EXPECT_DOUBLE_EQ(m.merged_s, 20.0);
  EXPECT_DOUBLE_EQ(m.hidden_s(), compute_s(l, true) + compute_s(l, false));
}

TEST(EpOverlapTest, DelayedWeightGradientsFillTheDispatchGap) {
  // Without --delay-wgrad-compute the dispatch backward waits for the 4 s expert wgrad
  // (C_b 0-1, A_f 0-1, mlp_bwd+dw 1-6, D_f 1-2, D_b 6-10, M_f 6-7, C_f 10-11, A_b 10-11);
  // with it the dispatch backward starts after the dgrad and the wgrad runs beside it
  // (M_b 1-2, D_b 2-6 beside dw 2-6, M_f 6-7, C_f 7-8, A_b 7-8): the compute bound, 8 s.
  const LayerParts f = layer(1, 1, 1, 1, 0, 0, 0, 0, 0, 0);
  const LayerParts b = layer(0, 0, 0, 0, 1, 1, 4, 4, 1, 0);
  EXPECT_DOUBLE_EQ(merge_layers({f}, {b}, false).merged_s, 11.0);
  EXPECT_DOUBLE_EQ(merge_layers({f}, {b}, true).merged_s, 8.0);
  EXPECT_DOUBLE_EQ(merge_layers({f}, {b}, true).merged_s, compute_s(f, true) + compute_s(b, false));
}

TEST(EpOverlapTest, APassAloneRunsSerially) {
  const LayerParts l = layer(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
  for (const bool delay : {false, true}) {
    const MergedLayers f = merge_layers({l, l}, {}, delay);
    EXPECT_DOUBLE_EQ(f.merged_s, 2.0 * l.forward_s());
  }
  EXPECT_DOUBLE_EQ(merge_layers({}, {l, l, l}, false).merged_s, 3.0 * l.backward_s());
  // With delayed wgrad a backward alone already runs its dispatch beside its expert wgrad
  // (TransformerLayerSchedulePlan.run issues backward_dw before the dispatch backward):
  // per layer 45 s less min(7, 8), the first layer's attention wgrad of 10 s beside the
  // next layer's combine of 5 s: 3 x 45 - 3 x 7 - 2 x 5 = 104 s.
  EXPECT_DOUBLE_EQ(merge_layers({}, {l, l, l}, true).merged_s, 104.0);
}

TEST(EpOverlapTest, MergedStepsAreBoundedOnRandomLayers) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> u(0.0, 3.0);
  std::uniform_int_distribution<int> count(0, 6);
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<LayerParts> forward(static_cast<size_t>(count(rng)));
    std::vector<LayerParts> backward(static_cast<size_t>(count(rng)));
    double compute = 0.0, comm = 0.0;
    for (auto* list : {&forward, &backward}) {
      for (LayerParts& l : *list) {
        const bool dense = u(rng) < 0.5;  // a dense layer has no all-to-all
        l = layer(u(rng), dense ? 0.0 : u(rng), u(rng), dense ? 0.0 : u(rng), dense ? 0.0 : u(rng), u(rng), u(rng),
                  dense ? 0.0 : u(rng), u(rng), u(rng));
        l.epilogue_fwd_s = u(rng) * 0.1;
        l.epilogue_bwd_s = u(rng) * 0.1;
      }
    }
    for (const LayerParts& l : forward) compute += compute_s(l, true), comm += l.forward_comm_s();
    for (const LayerParts& l : backward) compute += compute_s(l, false), comm += l.backward_comm_s();
    const MergedLayers plain = merge_layers(forward, backward, false);
    const MergedLayers delayed = merge_layers(forward, backward, true);
    for (const MergedLayers& m : {plain, delayed}) {
      EXPECT_NEAR(m.serial_s, compute + comm, 1e-9);
      EXPECT_LE(m.merged_s, m.serial_s + 1e-12);             // overlap is never slower
      EXPECT_GE(m.merged_s, std::max(compute, comm) - 1e-9);  // each stream runs its own work serially
      EXPECT_LE(m.hidden_s(), comm + 1e-9);                   // what hides is communication
    }
    EXPECT_LE(delayed.merged_s, plain.merged_s + 1e-9);  // delaying wgrad only removes waits
  }
}

TEST(EpOverlapTest, SharedExpertsHideTheShorterOfThemAndTheAllToAll) {
  LayerParts l = layer(1, 2, 1, 3, 4, 1, 1, 5, 1, 1);
  l.shared_fwd_s = 0.5;
  l.shared_bwd_s = 20.0;
  EXPECT_DOUBLE_EQ(shared_expert_hidden_forward_s(l), 0.5);
  EXPECT_DOUBLE_EQ(shared_expert_hidden_backward_s(l), 9.0);
}

TEST(EpOverlapTest, TheAllToAllsSmsSlowTheComputeBesideIt) {
  Config config;
  config.system.efficiency.num_sms = 132;  // H100 SXM
  config.system.nccl_channels = 16;
  EXPECT_DOUBLE_EQ(comm_sm_fraction(config), 16.0 / 132.0);  // NCCL: one SM per channel
  config.training.moe.dispatcher = MoeDispatcher::kFlex;
  EXPECT_DOUBLE_EQ(comm_sm_fraction(config), 20.0 / 132.0);  // DeepEP's 20 SMs by default
  config.training.moe.flex_dispatcher_num_sms = 24;
  EXPECT_DOUBLE_EQ(comm_sm_fraction(config), 24.0 / 132.0);  // the configured budget
  config.system.nccl_channels = 4;                           // NCCL's channels leave flex alone
  EXPECT_DOUBLE_EQ(comm_sm_fraction(config), 24.0 / 132.0);
  config.system.efficiency.num_sms = 0;                      // not stated: no slowdown
  EXPECT_DOUBLE_EQ(comm_sm_fraction(config), 0.0);
  EXPECT_DOUBLE_EQ(net_overlap_saving_s(2.0, 0.25), 1.5);
  EXPECT_DOUBLE_EQ(net_overlap_saving_s(2.0, 0.0), 2.0);
}

TEST(EpOverlapTest, ASmallerFlexSmBudgetSlowsTheComputeBesideItLess) {
  Config config;
  config.system.efficiency.num_sms = 132;
  config.training.moe.dispatcher = MoeDispatcher::kFlex;
  double last_fraction = 0.0, last_saving_s = 2.0;
  for (const int64_t sms : {8, 20, 64, 132}) {
    config.training.moe.flex_dispatcher_num_sms = sms;
    const double fraction = comm_sm_fraction(config);
    const double saving_s = net_overlap_saving_s(2.0, fraction);
    EXPECT_DOUBLE_EQ(fraction, static_cast<double>(sms) / 132.0) << sms;
    EXPECT_GT(fraction, last_fraction) << sms;
    EXPECT_LT(saving_s, last_saving_s) << sms;
    last_fraction = fraction;
    last_saving_s = saving_s;
  }
  EXPECT_DOUBLE_EQ(last_saving_s, 0.0);  // every SM held: the hidden time is all lost again
  // The budget is flex's own: the NCCL all-to-all holds its channels whatever the key says.
  config.training.moe.dispatcher = MoeDispatcher::kAllToAll;
  config.system.nccl_channels = 16;
  EXPECT_DOUBLE_EQ(comm_sm_fraction(config), 16.0 / 132.0);
}

// The pipeline replays with merged steps: pp 1 runs F, (m - 1) merged steps, B.
TEST(EpOverlapTest, SequentialScheduleMergesAllButTheFirstForwardAndLastBackward) {
  ScheduleInput in;
  in.num_micro_batches = 5;
  in.phases = {{{2.0, 3.0}}};
  in.merged_saving_s = {{1.5}};
  const ScheduleResult r = simulate_pipeline(in);
  EXPECT_DOUBLE_EQ(r.makespan_s, 5 * 5.0 - 4 * 1.5);
  EXPECT_DOUBLE_EQ(r.stage_saved_s[0], 4 * 1.5);
}

TEST(EpOverlapTest, InterleavedScheduleRunsAnExtraWarmUpForwardAndMergesTheSteadyState) {
  for (const int64_t pp : {2, 4}) {
    for (const int64_t vpp : {2, 3}) {
      for (const int64_t m : {pp, 2 * pp, 4 * pp}) {
        ScheduleInput in;
        in.num_micro_batches = m;
        in.interleaved_p2p_s = 0.01;
        in.record_timeline = true;
        for (int64_t s = 0; s < pp; ++s) {
          in.phases.emplace_back();
          for (int64_t c = 0; c < vpp; ++c) in.phases.back().push_back({1.0 + 0.1 * static_cast<double>(c), 2.0});
        }
        const ScheduleResult plain = simulate_pipeline(in);
        in.merged_saving_s.assign(static_cast<size_t>(pp), std::vector<double>(static_cast<size_t>(vpp * vpp), 0.0));
        const ScheduleResult zero = simulate_pipeline(in);  // merged steps that save nothing
        in.merged_saving_s.assign(static_cast<size_t>(pp), std::vector<double>(static_cast<size_t>(vpp * vpp), 0.5));
        const ScheduleResult merged = simulate_pipeline(in);
        const std::string where = "pp " + std::to_string(pp) + " vpp " + std::to_string(vpp) + " m " + std::to_string(m);
        for (int64_t s = 0; s < pp; ++s) {
          // Steady steps: every forward after the warm-up of 2 (pp - s - 1) + (vpp - 1) pp + 1.
          const int64_t warmup = std::min(2 * (pp - s - 1) + (vpp - 1) * pp + 1, m * vpp);
          EXPECT_DOUBLE_EQ(merged.stage_saved_s[static_cast<size_t>(s)], 0.5 * static_cast<double>(m * vpp - warmup))
              << where << " stage " << s;
          EXPECT_DOUBLE_EQ(zero.stage_saved_s[static_cast<size_t>(s)], 0.0);
          // Every pass still appears once in the timeline.
          int64_t passes = 0;
          for (const TimelineEvent& e : merged.timeline[static_cast<size_t>(s)]) {
            passes += e.kind == EventKind::kForward || e.kind == EventKind::kBackward ? 1 : 0;
          }
          EXPECT_EQ(passes, 2 * m * vpp) << where;
        }
        EXPECT_LT(merged.makespan_s, zero.makespan_s) << where;
        // The extra warm-up forward alone costs at most one forward.
        EXPECT_LE(zero.makespan_s, plain.makespan_s + 1.0 + 0.1 * static_cast<double>(vpp - 1) + 1e-9) << where;
      }
    }
  }
}

// End to end: a MoE model with expert parallelism across nodes.
json moe_config(int64_t pp, int64_t vpp) {
  json c = {{"model", {{"preset", "mixtral-8x7b"}, {"num_layers", 8}}},
            {"training",
             {{"seq_len", 4096}, {"micro_batch_size", 1}, {"num_micro_batches", 8}, {"tp", 1}, {"pp", pp},
              {"vpp", vpp}, {"ep", 8}}},
            {"system", {{"preset", "h100-sxm-80gb"}, {"num_gpus", 16 * pp}, {"gpus_per_node", 4}}}};
  return c;
}

double stage_key(const json& r, const char* key) {
  double total = 0.0;
  for (const json& s : r["time"]["stages"]) total += s[key].get<double>();
  return total;
}

TEST(EpOverlapTest, EstimatesHideAllToAllAndReportIt) {
  for (const auto& [pp, vpp] : {std::pair<int64_t, int64_t>{1, 1}, {2, 2}}) {
    json plain = moe_config(pp, vpp);
    json overlap = plain;
    overlap["training"]["overlap_moe_expert_parallel_comm"] = true;
    json delayed = overlap;
    delayed["training"]["delay_wgrad_compute"] = true;
    const json a = testing::estimate_ok(plain);
    const json b = testing::estimate_ok(overlap);
    const json c = testing::estimate_ok(delayed);
    const double ep_plain = a["time"]["breakdown"]["ep_comm_exposed_s"].get<double>();
    const double ep_overlap = b["time"]["breakdown"]["ep_comm_exposed_s"].get<double>();
    EXPECT_GT(ep_plain, 0.0);
    EXPECT_LT(ep_overlap, ep_plain);
    EXPECT_LT(b["time"]["iteration_s"].get<double>(), a["time"]["iteration_s"].get<double>());
    EXPECT_LE(c["time"]["iteration_s"].get<double>(), b["time"]["iteration_s"].get<double>() * (1 + 1e-12));
    // Hidden and exposed add up to the all-to-all before overlap, which overlap leaves alone.
    for (const json& r : {a, b, c}) {
      for (const json& s : r["time"]["stages"]) {
        EXPECT_NEAR(s["ep_comm_hidden_s"].get<double>() + s["breakdown"]["ep_comm_exposed_s"].get<double>(),
                    s["ep_comm_s"].get<double>(), 1e-12);
      }
    }
    // The figures README quotes ("Expert-parallel overlap").
    std::printf("[ep-overlap] mixtral-8x7b 8 layers pp %lld vpp %lld ep 8 over 2 nodes: step %.1f / %.1f / %.1f ms "
                "(plain / overlap / + delay_wgrad), exposed EP %.1f / %.1f / %.1f ms of %.1f ms\n",
                static_cast<long long>(pp), static_cast<long long>(vpp), 1e3 * a["time"]["iteration_s"].get<double>(),
                1e3 * b["time"]["iteration_s"].get<double>(), 1e3 * c["time"]["iteration_s"].get<double>(),
                1e3 * ep_plain, 1e3 * ep_overlap, 1e3 * c["time"]["breakdown"]["ep_comm_exposed_s"].get<double>(),
                1e3 * b["time"]["stages"][0]["ep_comm_s"].get<double>());
    EXPECT_NEAR(stage_key(a, "ep_comm_s"), stage_key(b, "ep_comm_s"), 1e-12);
    EXPECT_DOUBLE_EQ(stage_key(a, "ep_comm_hidden_s"), 0.0);
    EXPECT_GT(stage_key(b, "ep_comm_hidden_s"), 0.0);
  }
}

// End to end: with the flex dispatcher and overlap, a smaller SM budget leaves the same
// all-to-all hidden but slows the compute beside it less, so the step is shorter; without
// overlap nothing runs beside the all-to-all and the budget changes nothing.
TEST(EpOverlapTest, EstimatesWithASmallerFlexSmBudgetSaveMore) {
  json base = moe_config(1, 1);
  base["training"]["moe_token_dispatcher"] = "flex";
  std::vector<double> overlapped_s, serial_s;
  for (const int64_t sms : {8, 20, 64}) {
    json c = base;
    c["training"]["moe_flex_dispatcher_num_sms"] = sms;
    serial_s.push_back(testing::estimate_ok(c)["time"]["iteration_s"].get<double>());
    c["training"]["overlap_moe_expert_parallel_comm"] = true;
    const json r = testing::estimate_ok(c);
    EXPECT_GT(stage_key(r, "ep_comm_hidden_s"), 0.0);
    overlapped_s.push_back(r["time"]["iteration_s"].get<double>());
  }
  EXPECT_LT(overlapped_s[0], overlapped_s[1]);
  EXPECT_LT(overlapped_s[1], overlapped_s[2]);
  EXPECT_DOUBLE_EQ(serial_s[0], serial_s[1]);
  EXPECT_DOUBLE_EQ(serial_s[1], serial_s[2]);
}

double parts_sum(const json& breakdown) {
  double sum = 0.0;
  for (const auto& [key, value] : breakdown.items()) sum += value.get<double>();
  return sum;
}

// Random MoE configs with expert parallelism (tests/properties/random_configs.h) that Megatron
// lets overlap: the parts still sum to the step, hidden + exposed all-to-all is the all-to-all
// before overlap, and without pipelining (every step but the first forward and last backward
// merged) overlap is never slower; with an interleaved pipeline the extra warm-up forward can
// cost at most one chunk's forward per step.
TEST(EpOverlapTest, RandomMoeConfigsKeepTheirLawsUnderOverlap) {
  int checked = 0;
  for (uint64_t seed = 1; seed < 400 && checked < 40; ++seed) {
    json plain = testing::random_config(seed);
    json& t = plain["training"];
    if (!plain["model"].contains("moe") || t.value("ep", 1) < 2) continue;
    if (t["pp"].get<int64_t>() > 1 && t["vpp"].get<int64_t>() < 2) continue;
    if (t.contains("recompute") && (t["recompute"]["granularity"] == "full" ||
                                    t["recompute"].value("modules", json::array()).dump().find("\"moe\"") != std::string::npos)) {
      t.erase("recompute");
    }
    const json a = testing::run_estimate(plain);
    if (!a["ok"].get<bool>()) continue;
    json overlap = plain;
    overlap["training"]["overlap_moe_expert_parallel_comm"] = true;
    overlap["training"]["delay_wgrad_compute"] = (seed % 2) == 0;
    SCOPED_TRACE("seed " + std::to_string(seed));
    const json b = testing::estimate_ok(overlap);
    ++checked;
    const double step_a = a["result"]["time"]["iteration_s"].get<double>();
    const double step_b = b["time"]["iteration_s"].get<double>();
    EXPECT_NEAR(parts_sum(b["time"]["breakdown"]), step_b, 1e-9 * step_b);
    for (const json& st : b["time"]["stages"]) {
      EXPECT_NEAR(parts_sum(st["breakdown"]), st["total_s"].get<double>(), 1e-9 * step_b);
      EXPECT_NEAR(st["ep_comm_hidden_s"].get<double>() + st["breakdown"]["ep_comm_exposed_s"].get<double>(),
                  st["ep_comm_s"].get<double>(), 1e-9 * step_b);
      EXPECT_GE(st["ep_comm_hidden_s"].get<double>(), 0.0);
    }
    if (plain["training"]["pp"].get<int64_t>() == 1) {
      EXPECT_LE(step_b, step_a * (1 + 1e-12));
    } else {
      double slowest_forward = 0.0;
      for (const json& st : a["result"]["time"]["stages"]) {
        slowest_forward = std::max(slowest_forward, st["forward_per_micro_batch_s"].get<double>());
      }
      EXPECT_LE(step_b, step_a + slowest_forward);
    }
  }
  EXPECT_GE(checked, 10);
}

TEST(EpOverlapTest, SharedExpertOverlapHidesAllToAllBesideTheSharedExperts) {
  json plain = {{"model", {{"preset", "deepseek-v2-lite"}, {"num_layers", 6}}},
                {"training",
                 {{"seq_len", 4096}, {"micro_batch_size", 1}, {"num_micro_batches", 4}, {"pp", 1}, {"ep", 8}}},
                {"system", {{"preset", "h100-sxm-80gb"}, {"num_gpus", 16}, {"gpus_per_node", 4}}}};
  json shared = plain;
  shared["training"]["moe_shared_expert_overlap"] = true;
  const json a = testing::estimate_ok(plain);
  const json b = testing::estimate_ok(shared);
  EXPECT_LT(b["time"]["iteration_s"].get<double>(), a["time"]["iteration_s"].get<double>());
  EXPECT_GT(stage_key(b, "ep_comm_hidden_s"), 0.0);
  EXPECT_NEAR(stage_key(a, "ep_comm_s"), stage_key(b, "ep_comm_s"), 1e-12);
}

}  // namespace
}  // namespace trainsim
