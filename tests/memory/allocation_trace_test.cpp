// The allocation trace of a stage follows the op walk (its peak of requested
// bytes is the estimate's allocated peak), Megatron's pass orders, and the
// steady-state compression (the same reserved memory as the full order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "memory/pass_order.h"
#include "memory/stage_memory.h"
#include "memory/stage_replay.h"
#include "memory/trace_replay.h"
#include "model/model_plan.h"
#include "test_util.h"
#include "valid_config.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

Json plan_config(const char* model, int tp, int pp, int vpp, int mbs, int gbs, const char* recompute,
                 int num_gpus, int ep = 1) {
  Json c = testing::base_config();
  c["model"] = model;
  c["training"]["tp"] = tp;
  c["training"]["pp"] = pp;
  c["training"]["vpp"] = vpp;
  c["training"]["ep"] = ep;
  c["training"]["micro_batch_size"] = mbs;
  c["training"]["global_batch_size"] = gbs;
  c["training"]["recompute"] = Json::parse(recompute);
  c["system"]["num_gpus"] = num_gpus;
  return c;
}

// EP overlap (Megatron-LM --overlap-moe-expert-parallel-comm): the pass order is Megatron's
// interleaved one (memory/pass_order.h), so the trace and the estimate agree as without it.
Json ep_overlap(Json config) {
  config["training"]["overlap_moe_expert_parallel_comm"] = true;
  config["training"]["delay_wgrad_compute"] = true;
  return config;
}

// Dense, MoE, MLA, recompute modes, 1F1B and interleaved.
std::vector<Json> sample_configs() {
  const char* none = R"({"granularity": "none"})";
  const char* selective = R"({"granularity": "selective"})";
  const char* full = R"({"granularity": "full", "method": "uniform", "num_layers": 1})";
  const char* block = R"({"granularity": "full", "method": "block", "num_layers": 2})";
  return {
      plan_config("llama3-8b", 2, 1, 1, 1, 16, none, 8),
      plan_config("llama3-8b", 2, 2, 1, 1, 32, selective, 16),
      plan_config("llama3-8b", 1, 4, 2, 1, 32, full, 8),
      plan_config("llama3-8b", 2, 4, 4, 2, 64, block, 16),
      plan_config("mixtral-8x7b", 2, 2, 1, 1, 32, selective, 32, 4),
      plan_config("deepseek-v2-lite", 1, 3, 1, 1, 48, none, 12, 4),
      plan_config("llama3-70b", 8, 4, 5, 1, 64, none, 64),
      ep_overlap(plan_config("mixtral-8x7b", 1, 2, 2, 1, 32, selective, 32, 8)),
  };
}

ModelPlan plan_of(const Config& config) { return build_model_plan(config); }

TEST(AllocationTraceTest, SteadyStepPeakOfRequestedBytesIsTheOpWalkPeak) {
  for (const Json& document : sample_configs()) {
    const Config config = testing::valid_config_of(document);
    const ModelPlan plan = plan_of(config);
    const std::vector<StageMemory> stages = estimate_stage_memory(config, plan, false);
    const std::vector<StageTracePlan> traces = plan_stage_traces(config, plan);
    ASSERT_EQ(traces.size(), stages.size());
    for (size_t i = 0; i < stages.size(); ++i) {
      const StageTraceSpec spec{&plan, i, &traces[i].statics, traces[i].order, traces[i].granularity};
      const StageReplay replay = replay_stage_trace(spec, AllocatorOptions{}, 0);
      // One byte of rounding per tensor at most (double -> int64 sizes).
      EXPECT_NEAR(static_cast<double>(replay.steady_peak_requested_bytes), stages[i].peak_bytes, 4096.0)
          << document.dump() << " stage " << i;
      // The allocator rounds blocks up: allocated >= requested, reserved >= allocated.
      EXPECT_GE(replay.steady_peak_allocated_bytes, replay.steady_peak_requested_bytes);
      EXPECT_GE(replay.stats.peak_reserved_bytes, replay.stats.peak_allocated_bytes);
      EXPECT_FALSE(replay.out_of_memory);
    }
  }
}

TEST(AllocationTraceTest, LayerGranularityKeepsThePeak) {
  for (const Json& document : sample_configs()) {
    const Config config = testing::valid_config_of(document);
    const ModelPlan plan = plan_of(config);
    const std::vector<StageMemory> stages = estimate_stage_memory(config, plan, false);
    for (size_t i = 0; i < stages.size(); ++i) {
      const StageStatics statics = stage_statics(config, plan, i, false);
      const std::vector<PassStep> order = megatron_pass_order(
          config.training.parallel.pp, config.training.parallel.vpp,
          config.training.num_micro_batches, static_cast<int64_t>(i), config.training.parallel.pp);
      const StageTraceSpec spec{&plan, i, &statics, order, TraceGranularity::kLayer};
      const StageReplay replay = replay_stage_trace(spec, AllocatorOptions{}, 0);
      EXPECT_NEAR(static_cast<double>(replay.steady_peak_requested_bytes), stages[i].peak_bytes, 4096.0)
          << document.dump() << " stage " << i;
    }
  }
}

TEST(AllocationTraceTest, StaticTensorsAddUpToTheStagesStaticParts) {
  for (const Json& document : sample_configs()) {
    const Config config = testing::valid_config_of(document);
    const ModelPlan plan = plan_of(config);
    const std::vector<StageMemory> stages = estimate_stage_memory(config, plan, false);
    for (size_t i = 0; i < stages.size(); ++i) {
      for (const bool pieces : {true, false}) {
        const StageStatics s = stage_statics(config, plan, i, pieces);
        double sum = 0.0;
        for (const auto* list : {&s.setup, &s.first_forward, &s.first_backward, &s.optimizer_state}) {
          for (const TraceTensor& t : *list) sum += t.bytes;
        }
        const StageMemory& m = stages[i];
        EXPECT_NEAR(sum, m.parameters_bytes + m.gradients_bytes + m.optimizer_bytes + m.buffers_bytes,
                    1e-6 * sum);
      }
    }
  }
}

// Every (micro-batch, chunk) has one forward and then one backward; the
// warm-up is Megatron's; the activation peak in chunks equals the walk's count.
TEST(PassOrderTest, MegatronOrdersAreCompleteAndWarmUpAsMegatron) {
  for (const auto& [pp, vpp, m] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 1, 4}, {4, 1, 8}, {4, 1, 2}, {4, 2, 8}, {4, 2, 4}, {4, 3, 12}, {8, 2, 10}}) {
    for (int64_t stage = 0; stage < pp; ++stage) {
      const std::vector<PassStep> order = megatron_pass_order(pp, vpp, m, stage, pp);
      ASSERT_EQ(static_cast<int64_t>(order.size()), 2 * m * vpp);
      std::map<std::pair<int32_t, int32_t>, int> state;
      int64_t warmup = 0;
      bool seen_backward = false;
      for (const PassStep& step : order) {
        int& s = state[{step.micro_batch, step.chunk}];
        if (step.kind == PassKind::kForward) {
          EXPECT_EQ(s, 0);
          s = 1;
          if (!seen_backward) ++warmup;
        } else {
          EXPECT_EQ(step.kind, PassKind::kBackwardWeight);
          EXPECT_EQ(s, 1);
          s = 2;
          seen_backward = true;
        }
      }
      EXPECT_EQ(static_cast<int64_t>(state.size()), m * vpp);
      int64_t expected = vpp == 1 ? std::min(pp - stage - 1, m) : 2 * (pp - stage - 1) + (vpp - 1) * pp;
      expected = std::min(expected, m * vpp);
      // The first backward comes after the warm-up and the first steady forward.
      EXPECT_EQ(warmup, std::min(expected + 1, m * vpp)) << pp << " " << vpp << " " << m << " " << stage;
    }
  }
}

// The compressed order (a few steady cycles) reserves what the full order does.
TEST(AllocationTraceTest, CompressedStepReservesWhatTheFullStepReserves) {
  int compared = 0;
  double worst = 0.0;
  for (const Json& base : sample_configs()) {
    for (const bool expandable : {false, true}) {
      Json document = base;
      document["training"]["global_batch_size"] = base["training"]["global_batch_size"].get<int>() * 4;
      document["training"]["expandable_segments"] = expandable;
      const Config config = testing::valid_config_of(document);
      const ModelPlan plan = plan_of(config);
      const std::vector<StageTracePlan> traces = plan_stage_traces(config, plan);
      const ParallelSpec& p = config.training.parallel;
      for (size_t i = 0; i < traces.size(); ++i) {
        const std::vector<PassStep> full =
            megatron_pass_order(p.pp, p.vpp, config.training.num_micro_batches, static_cast<int64_t>(i), p.pp);
        if (full.size() == traces[i].order.size()) continue;
        AllocatorOptions options;
        options.expandable_segments = expandable;
        const StageTraceSpec compressed{&plan, i, &traces[i].statics, traces[i].order, traces[i].granularity};
        const StageTraceSpec whole{&plan, i, &traces[i].statics, full, traces[i].granularity};
        const StageReplay a = replay_stage_trace(compressed, options, 0);
        const StageReplay b = replay_stage_trace(whole, options, 0);
        // 1F1B reaches the fixed point; the interleaved schedule drifts by a
        // segment or so over many cycles (70B, pp 4 vpp 5: 14 MiB of 38.5 GB at
        // 48 micro-batches), so allow 0.1%.
        const double reserved_a = static_cast<double>(a.stats.peak_reserved_bytes);
        const double reserved_b = static_cast<double>(b.stats.peak_reserved_bytes);
        worst = std::max(worst, std::abs(reserved_a / reserved_b - 1.0));
        if (p.vpp == 1) {
          EXPECT_EQ(a.stats.peak_reserved_bytes, b.stats.peak_reserved_bytes) << document.dump() << " stage " << i;
          EXPECT_EQ(a.steady_peak_allocated_bytes, b.steady_peak_allocated_bytes) << document.dump();
        }
        EXPECT_NEAR(reserved_a, reserved_b, 1e-3 * reserved_b) << document.dump() << " stage " << i;
        EXPECT_LT(a.events, b.events);
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 10);
  std::printf("compressed vs full step: %d stages, worst reserved difference %.4f%%\n", compared,
              100.0 * worst);
}

TEST(AllocationTraceTest, ExpandableSegmentsCutFragmentation) {
  Json document = plan_config("llama3-8b", 2, 1, 1, 1, 64, R"({"granularity": "none"})", 8);
  document["training"]["seq_len"] = 18432;
  const Json native = testing::estimate_ok(document)["memory"]["stages"][0];
  document["training"]["expandable_segments"] = true;
  const Json expandable = testing::estimate_ok(document)["memory"]["stages"][0];
  EXPECT_GT(native["fragmentation_bytes"].get<double>(), 1.0 * (1 << 30));
  EXPECT_LT(expandable["fragmentation_bytes"].get<double>(), 0.25 * native["fragmentation_bytes"].get<double>());
  EXPECT_EQ(native["peak_bytes"], expandable["peak_bytes"]);
}

TEST(AllocationTraceTest, TimelineIsBoundedAndReachesThePeaks) {
  const Json document = plan_config("llama3-8b", 2, 4, 2, 1, 256, R"({"granularity": "none"})", 16);
  const Json memory = testing::estimate_ok(document)["memory"];
  const Json& stages = memory["timeline"]["stages"];
  ASSERT_EQ(stages.size(), 4u);
  for (size_t i = 0; i < stages.size(); ++i) {
    const Json& points = stages[i]["points"];
    EXPECT_GT(points.size(), 8u);
    EXPECT_LE(points.size(), 64u);
    double max_reserved = 0.0, max_allocated = 0.0;
    int64_t last = -1;
    for (const Json& p : points) {
      EXPECT_GT(p[0].get<int64_t>(), last);
      last = p[0].get<int64_t>();
      EXPECT_LE(p[1].get<double>(), p[2].get<double>());
      max_allocated = std::max(max_allocated, p[1].get<double>());
      max_reserved = std::max(max_reserved, p[2].get<double>());
    }
    const Json& stage = memory["stages"][i];
    EXPECT_EQ(max_allocated, stage["allocator"]["peak_allocated_bytes"].get<double>());
    EXPECT_LE(max_reserved, stage["reserved_bytes"].get<double>());
  }
}

// One allocator reset between replays (how replay_stage_memory walks a
// pipeline's stages) gives what a fresh allocator gives for every stage, under
// alternating options (expandable segments, a capacity that runs out), so no
// block, cached segment, live id or statistic survives a reset.
TEST(AllocationTraceTest, AReusedAllocatorReplaysEveryStageAsAFreshOne) {
  CachingAllocatorSim reused(AllocatorOptions{});
  int compared = 0;
  int out_of_memory = 0;
  for (const Json& document : sample_configs()) {
    const Config config = testing::valid_config_of(document);
    const ModelPlan plan = plan_of(config);
    const std::vector<StageTracePlan> traces = plan_stage_traces(config, plan);
    for (size_t i = 0; i < traces.size(); ++i) {
      const StageTraceSpec spec{&plan, i, &traces[i].statics, traces[i].order, traces[i].granularity};
      for (int variant = 0; variant < 3; ++variant) {
        AllocatorOptions options;
        options.expandable_segments = variant == 1;
        if (variant == 2) options.capacity_bytes = int64_t{3} << 30;  // 3 GiB: most stages run out
        const StageReplay fresh = replay_stage_trace(spec, options, 16);
        const StageReplay again = replay_stage_trace(reused, spec, options, 16);
        const std::string where = document.dump() + " stage " + std::to_string(i) + " variant " +
                                  std::to_string(variant);
        EXPECT_EQ(fresh.out_of_memory, again.out_of_memory) << where;
        EXPECT_EQ(fresh.events, again.events) << where;
        EXPECT_EQ(fresh.stats.peak_reserved_bytes, again.stats.peak_reserved_bytes) << where;
        EXPECT_EQ(fresh.stats.peak_allocated_bytes, again.stats.peak_allocated_bytes) << where;
        EXPECT_EQ(fresh.stats.reserved_bytes, again.stats.reserved_bytes) << where;
        EXPECT_EQ(fresh.stats.segments, again.stats.segments) << where;
        EXPECT_EQ(fresh.stats.num_device_alloc, again.stats.num_device_alloc) << where;
        EXPECT_EQ(fresh.stats.num_alloc_retries, again.stats.num_alloc_retries) << where;
        EXPECT_EQ(fresh.steady_peak_allocated_bytes, again.steady_peak_allocated_bytes) << where;
        ASSERT_EQ(fresh.timeline.size(), again.timeline.size()) << where;
        for (size_t k = 0; k < fresh.timeline.size(); ++k) {
          EXPECT_EQ(fresh.timeline[k].reserved_bytes, again.timeline[k].reserved_bytes) << where;
        }
        out_of_memory += fresh.out_of_memory ? 1 : 0;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 30);
  EXPECT_GT(out_of_memory, 0) << "no replay ran out of memory: the capacity variant tests nothing";
}

}  // namespace
}  // namespace trainsim
