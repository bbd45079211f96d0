// The search's shortcuts give what the full estimate gives: the static-memory
// bound never exceeds a plan's static memory, the pipeline lower bound never
// exceeds the simulated pipeline, and the fast path (shared blocks, no
// timeline) reproduces estimate() bit for bit.
#include <gtest/gtest.h>

#include <random>

#include "schema/search_request.h"
#include "search/enumerate.h"
#include "search/evaluator.h"
#include "search/floor.h"
#include "search/memory_bound.h"
#include "floor_walk.h"
#include "test_util.h"
#include "time/pipeline_schedule.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

std::vector<std::string> model_presets() {
  std::vector<std::string> ids;
  const Json presets = Json::parse(presets_json());
  for (const Json& preset : presets["result"]["models"]) {
    ids.push_back(preset["id"].get<std::string>());
  }
  return ids;
}

double max_static_bytes(const Estimate& e) {
  double bytes = 0.0;
  for (const StageMemory& s : e.memory.stages) {
    bytes = std::max(bytes, s.parameters_bytes + s.gradients_bytes + s.optimizer_bytes);
  }
  return bytes;
}

TEST(SearchBoundsTest, StaticMemoryBoundIsBelowTheEstimateOnEveryPreset) {
  int checked = 0;
  for (const std::string& model : model_presets()) {
    for (const int64_t tp : {1, 2, 8}) {
      for (const int64_t pp : {1, 2, 4}) {
        for (const int64_t zero : {0, 1, 3}) {
          for (const char* dtype : {"bf16", "fp8"}) {
            const int64_t ep = (tp + pp) % 2 == 0 ? 2 : 1;
            Json training = {{"seq_len", 2048},
                             {"micro_batch_size", 1},
                             {"global_batch_size", 64},
                             {"tp", tp},
                             {"pp", pp},
                             {"dp", 2},
                             {"zero_stage", zero},
                             {"dtype", dtype},
                             {"sequence_parallel", tp > 1}};
            const Json config = {{"model", model},
                                 {"training", training},
                                 {"system", {{"preset", "h100-sxm-80gb"}}}};
            Json with_ep = config;
            with_ep["training"]["ep"] = ep;
            Config parsed;
            Issues issues;
            if (!parse_config(with_ep.dump(), parsed, issues)) {
              issues.clear();
              if (!parse_config(config.dump(), parsed, issues)) continue;
            }
            const double bound = StaticMemoryBound(parsed.model).lower_bound_bytes(parsed);
            const Estimate e = estimate(parsed);
            EXPECT_LE(bound, max_static_bytes(e)) << with_ep;
            EXPECT_GT(bound, 0.95 * max_static_bytes(e)) << with_ep;  // and it is tight
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 300);
}

ScheduleInput random_schedule(std::mt19937& rng, int64_t pp, int64_t vpp, int64_t m) {
  std::uniform_real_distribution<double> pass(0.5, 3.0), p2p(0.0, 0.4);
  ScheduleInput input;
  input.num_micro_batches = m;
  for (int64_t s = 0; s < pp; ++s) {
    input.phases.emplace_back();
    for (int64_t c = 0; c < vpp; ++c) input.phases.back().push_back({pass(rng), 2.0 * pass(rng)});
    const double in = s == 0 ? 0.0 : p2p(rng);
    input.p2p.push_back({in, 0.0, 0.0, in});
  }
  for (int64_t s = 0; s + 1 < pp; ++s) {
    input.p2p[s].forward_send_s = input.p2p[s + 1].forward_recv_s;
    input.p2p[s].backward_recv_s = input.p2p[s + 1].forward_recv_s;
  }
  input.interleaved_p2p_s = p2p(rng);
  return input;
}

TEST(SearchBoundsTest, PipelineLowerBoundNeverExceedsTheSimulation) {
  std::mt19937 rng(7);
  for (int64_t pp = 1; pp <= 6; ++pp) {
    for (int64_t vpp = 1; vpp <= (pp > 1 ? 3 : 1); ++vpp) {
      for (int64_t m = pp; m <= 4 * pp; m += pp) {
        for (int trial = 0; trial < 5; ++trial) {
          const ScheduleInput input = random_schedule(rng, pp, vpp, m);
          const double bound = pipeline_lower_bound(input).makespan_s;
          const double simulated = simulate_pipeline(input).makespan_s;
          EXPECT_LE(bound, simulated * (1.0 + 1e-12)) << pp << " " << vpp << " " << m;
          EXPECT_GT(bound, 0.5 * simulated);
        }
      }
    }
  }
}

TEST(SearchBoundsTest, PipelineLowerBoundIsThe1f1bMakespanForEqualStagesWithoutTransfers) {
  ScheduleInput input;
  input.num_micro_batches = 8;
  input.phases.assign(4, {{1.0, 2.0}});
  input.p2p.assign(4, {});
  EXPECT_DOUBLE_EQ(pipeline_lower_bound(input).makespan_s, (8 + 4 - 1) * 3.0);
  EXPECT_DOUBLE_EQ(simulate_pipeline(input).makespan_s, (8 + 4 - 1) * 3.0);
}

schema::SearchRequest parse_search(const std::string& text) {
  schema::SearchRequest request;
  Issues issues;
  EXPECT_TRUE(schema::read_search_request(text, request, issues));
  return request;
}

bool same_estimate(const Estimate& a, const Estimate& b) {
  if (a.memory.stages.size() != b.memory.stages.size()) return false;
  for (size_t s = 0; s < a.memory.stages.size(); ++s) {
    const StageMemory& x = a.memory.stages[s];
    const StageMemory& y = b.memory.stages[s];
    if (x.peak_bytes != y.peak_bytes || x.activations_bytes != y.activations_bytes ||
        x.buffers_bytes != y.buffers_bytes ||
        x.in_flight_micro_batches != y.in_flight_micro_batches) {
      return false;
    }
  }
  const TimeBreakdown& p = a.time.breakdown;
  const TimeBreakdown& q = b.time.breakdown;
  return a.time.iteration_s == b.time.iteration_s &&
         a.time.critical_stage == b.time.critical_stage && p.forward_s == q.forward_s &&
         p.backward_s == q.backward_s && p.bubble_s == q.bubble_s &&
         p.dp_comm_exposed_s == q.dp_comm_exposed_s && a.throughput.mfu == b.throughput.mfu &&
         a.memory.peak_bytes == b.memory.peak_bytes && a.fits == b.fits;
}

// Dense with recompute variants and interleaving, and an MLA + MoE model.
const char* kFastPathSearches[] = {
    R"({"model": {"preset": "llama3-8b", "num_layers": 8}, "system": "h100-sxm-80gb",
        "num_gpus": [8, 16], "global_batch_size": 64, "seq_len": 4096,
        "constraints": {"sequence_parallel": "both", "uneven_stages": true, "zero_stage": [1, 3],
          "recompute": [{"granularity": "none"}, {"granularity": "selective"},
                        {"granularity": "selective", "modules": ["core_attn", "mlp"]},
                        {"granularity": "full", "method": "uniform", "num_layers": 2},
                        {"granularity": "full", "method": "block", "num_layers": "all"}]}})",
    R"({"model": {"preset": "deepseek-v2-lite", "num_layers": 6}, "system": "h100-sxm-80gb",
        "num_gpus": 8, "global_batch_size": 16, "seq_len": 2048,
        "constraints": {"micro_batch_size": [1, 2], "cp": 1}})"};

TEST(SearchBoundsTest, FastPathReproducesTheEstimateBitForBit) {
  for (const char* text : kFastPathSearches) {
    const schema::SearchRequest request = parse_search(text);
    const auto candidates = enumerate_candidates(request.spec).candidates;
    ASSERT_GT(candidates.size(), 20u);
    CandidateEvaluator evaluator(request.spec, 1e30);
    for (const Candidate& c : candidates) {
      Config config = base_config(request.spec);
      apply_candidate(request.spec, c, config);
      const Estimate reference = estimate(config);
      EXPECT_TRUE(same_estimate(evaluator.full(c), reference));
      const CandidateMetrics exact = evaluator.exact(c);
      EXPECT_EQ(exact.iteration_s, reference.time.iteration_s);
      EXPECT_EQ(exact.peak_bytes, reference.memory.peak_bytes);
      EXPECT_EQ(exact.tokens_per_s_per_gpu, reference.throughput.tokens_per_s_per_gpu);
      // The search's replay check is the estimate's verdict.
      EXPECT_EQ(evaluator.replay_fits(c), reference.memory.verdict.status == "fits");
      // Screening applies the memory verdict's lower bound (allocated memory): a plan
      // that fits by the replayed verdict always passes it.
      CandidateMetrics bound;
      const Screening screening = evaluator.screen(c, evaluator.static_bound_bytes(c), bound);
      if (reference.memory.verdict.status == "fits") {
        ASSERT_EQ(screening, Screening::kFits);
      }
      if (screening != Screening::kFits) continue;
      EXPECT_EQ(bound.peak_bytes, reference.memory.peak_bytes);
      EXPECT_LE(bound.iteration_s, reference.time.iteration_s * (1.0 + 1e-12));
    }
  }
}

// The floors of a block (floor.h) never exceed the step time nor the static
// memory of a member: every preset model (a few layers of it, so that every
// layer kind is there), dense and MoE degrees, uneven splits, vpp, every
// recompute mode, ZeRO 1 and 3, both CP exchanges, two GPU counts.
TEST(SearchBoundsTest, FloorsBoundEveryMemberOfTheirBlock) {
  int64_t checked = 0;
  for (const std::string& model : model_presets()) {
    Json document = Json::parse(R"({"system": "h100-sxm-80gb", "num_gpus": [8, 16],
        "global_batch_size": 32, "seq_len": 4096, "memory_headroom": 0,
        "constraints": {"micro_batch_size": [1, 2], "zero_stage": [1, 3], "max_tp": 4,
          "cp": [1, 2], "uneven_stages": true, "cp_comm_type": ["p2p", "a2a"],
          "recompute": [{"granularity": "none"}, {"granularity": "selective"},
                        {"granularity": "full", "method": "uniform", "num_layers": 1},
                        {"granularity": "full", "method": "block", "num_layers": "all"}]}})");
    const Json preset = Json::parse(preset_json(model))["result"]["model"];
    const int64_t layers = preset.contains("moe") ? 5 : 7;
    document["model"] = {{"preset", model}, {"num_layers", layers}};
    if (preset.contains("moe")) {
      document["model"]["moe"] = {{"num_dense_layers", 1}};
      // An interleaved preset (llama4-maverick) keeps its pattern, cut to the layers here.
      if (preset["moe"].contains("moe_layer_freq")) {
        document["model"]["moe"] = {{"moe_layer_freq", {0, 1, 0, 1, 1}}};
      }
      document["constraints"]["ep"] = {1, 2, 4};
    }
    const schema::SearchRequest request = parse_search(document.dump());
    testing::walk_floors(request, [&](const testing::FloorMember& m) {
      const Candidate& c = m.candidate;
      EXPECT_LE(m.floor_bytes, m.evaluator.static_bound_bytes(c)) << model;
      EXPECT_LE(m.floor_s, m.evaluator.exact(c).iteration_s) << model << " " << c.tp << " " << c.pp;
      checked += m.floor_s > 0.0 ? 1 : 0;
    });
  }
  EXPECT_GT(checked, 5000);
}

}  // namespace
}  // namespace trainsim
