// Invariants of the estimator over randomized valid configs (house style 8.6:
// sums, zero-cost limits, monotonicity). Configs are valid by construction:
// dense (MHA/GQA), MoE and MLA models with every parallel degree (tp, pp, vpp,
// dp, cp, ep, etp, sp), recompute mode, ZeRO stage and dtype drawn from fixed
// seeds, so a failure names a seed that reproduces it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "properties/estimate_generated.h"
#include "properties/random_configs.h"
#include "test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;
using testing::random_config;

constexpr int kNumConfigs = 120;
constexpr double kRel = 1e-12;  // parts vs totals; both sides are sums of the same doubles


Estimate run(const json& document) { return testing::estimate_generated(document); }

bool near(double a, double b, double rel = kRel) {
  return std::fabs(a - b) <= rel * std::max({std::fabs(a), std::fabs(b), 1e-300});
}

// A copy of `document` with one training field changed.
json with_training(json document, const char* key, json value) {
  document["training"][key] = std::move(value);
  return document;
}

json system_of(const json& document) {
  json system = json::parse(preset_json(document["system"]["preset"].get<std::string>()));
  json out = system["result"]["system"];
  out["num_gpus"] = document["system"]["num_gpus"];
  return out;
}

// Each property runs over the same kNumConfigs seeds in one test (one process
// under ctest); a failure names its seed.
template <typename Check>
void for_each_config(Check&& check) {
  for (int i = 0; i < kNumConfigs; ++i) {
    const uint64_t seed = 1000 + static_cast<uint64_t>(i);
    SCOPED_TRACE("seed " + std::to_string(seed));
    check(random_config(seed), seed);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(PropertyTest, MemoryPartsAddUpToEveryStagePeak) {
  for_each_config([](const json& config, uint64_t) {
    const Estimate e = run(config);
    ASSERT_FALSE(e.memory.stages.empty());
    double peak = 0.0;
    for (const StageMemory& s : e.memory.stages) {
      const double parts = s.parameters_bytes + s.gradients_bytes + s.optimizer_bytes +
                           s.buffers_bytes + s.activations_bytes + s.transient_bytes;
      EXPECT_TRUE(near(parts, s.peak_bytes)) << "stage " << s.stage << ": " << parts << " vs " << s.peak_bytes;
      for (double part : {s.parameters_bytes, s.gradients_bytes, s.optimizer_bytes, s.buffers_bytes,
                          s.activations_bytes, s.transient_bytes}) {
        EXPECT_GE(part, 0.0);
      }
      peak = std::max(peak, s.peak_bytes);
    }
    EXPECT_EQ(e.memory.peak_bytes, peak);
    EXPECT_GT(peak, 0.0);
  });
}

TEST(PropertyTest, TimePartsAddUpToTheStep) {
  for_each_config([](const json& config, uint64_t) {
    const Estimate e = run(config);
    ASSERT_FALSE(e.time.stages.empty());
    EXPECT_GT(e.time.iteration_s, 0.0);
    EXPECT_TRUE(near(e.time.breakdown.total(), e.time.iteration_s, 1e-9))
        << e.time.breakdown.total() << " vs " << e.time.iteration_s;
    for (const StageTime& s : e.time.stages) {
      EXPECT_TRUE(near(s.breakdown.total(), s.total_s, 1e-9)) << "stage " << s.stage;
      EXPECT_LE(s.total_s, e.time.iteration_s);
      for (double part : {s.breakdown.forward_s, s.breakdown.backward_s, s.breakdown.recompute_s,
                          s.breakdown.host_overhead_s, s.breakdown.tp_comm_exposed_s, s.breakdown.cp_comm_exposed_s,
                          s.breakdown.ep_comm_exposed_s, s.breakdown.pp_comm_exposed_s,
                          s.breakdown.bubble_s, s.breakdown.straggler_s,
                          s.breakdown.dp_comm_exposed_s, s.breakdown.optimizer_s}) {
        EXPECT_GE(part, 0.0) << "stage " << s.stage;
      }
    }
    // The per-op table: no op faster than its peak (FLOPs) or the HBM bandwidth (bytes).
    for (const OpTimeRow& row : e.time.ops) {
      EXPECT_GE(row.time_s, 0.0) << row.name;
      EXPECT_LE(row.efficiency, 1.0 + 1e-9) << row.name << " (" << row.kind << ")";
    }
  });
}

TEST(PropertyTest, MoreTensorParallelismNeverIncreasesPerGpuWeights) {
  int compared = 0;
  for_each_config([&compared](const json& config, uint64_t) {
    const json& base = config;
    const int64_t tp = base["training"]["tp"];
    const json& m = base["model"];
    const int64_t wider = tp * 2;
    const int64_t kv = m["num_kv_heads"];
    const int64_t heads = m["num_attention_heads"];
    const int64_t cp = base["training"]["cp"];
    const int64_t shared = m.contains("moe") ? m["moe"]["shared_expert_ffn_hidden_size"].get<int64_t>() : 0;
    const bool a2a = base["training"].value("cp_comm_type", "a2a") == "a2a";
    if (heads % wider != 0 || (!m.contains("mla") && kv % wider != 0) ||
        m["ffn_hidden_size"].get<int64_t>() % wider != 0 || shared % wider != 0 ||
        (cp > 1 && a2a && (heads % (wider * cp) != 0 || (!m.contains("mla") && kv % (wider * cp) != 0)))) {
      return;
    }
    json more = with_training(base, "tp", wider);
    more["system"]["num_gpus"] = base["system"]["num_gpus"].get<int64_t>() * 2;
    ++compared;
    const Estimate a = run(base);
    const Estimate b = run(more);
    ASSERT_EQ(a.memory.stages.size(), b.memory.stages.size());
    for (size_t s = 0; s < a.memory.stages.size(); ++s) {
      EXPECT_LE(b.memory.stages[s].parameters_bytes, a.memory.stages[s].parameters_bytes)
          << "stage " << s << " tp " << tp << " -> " << wider;
    }
  });
  EXPECT_GE(compared, kNumConfigs / 2) << "too few configs allow doubling tp";
}

TEST(PropertyTest, FullRecomputeNeverIncreasesActivationsNorDecreasesStepTime) {
  for_each_config([](const json& config, uint64_t) {
    const json& base = config;
    json none = base;
    none["training"].erase("recompute");
    const int64_t chunk_layers = base["model"]["num_layers"].get<int64_t>() /
                                 base["training"]["pp"].get<int64_t>() /
                                 base["training"]["vpp"].get<int64_t>();
    const json full = with_training(
        none, "recompute",
        {{"granularity", "full"}, {"method", "block"}, {"num_layers", chunk_layers}});
    const Estimate a = run(none);
    const Estimate b = run(full);
    for (size_t s = 0; s < a.memory.stages.size(); ++s) {
      EXPECT_LE(b.memory.stages[s].activations_bytes, a.memory.stages[s].activations_bytes)
          << "stage " << s;
    }
    EXPECT_GE(b.time.iteration_s, a.time.iteration_s * (1 - kRel));
  });
}

// A sliding window (every layer, or all but every 2nd/3rd) computes a subset of
// the causal scores: it never slows a step, and it never changes flash-attention
// memory nor the math-attention memory (the mask is still s x s).
TEST(PropertyTest, SlidingWindowNeverSlowsAStepNorChangesMemory) {
  for_each_config([](const json& config, uint64_t seed) {
    const int64_t seq = config["training"]["seq_len"].get<int64_t>();
    json windowed = config;
    windowed["model"]["sliding_window_tokens"] = std::max<int64_t>(1, seq / 4);
    windowed["model"]["full_attention_every_n_layers"] = static_cast<int64_t>(seed % 3 + 1) % 3;
    const Estimate a = run(config);
    const Estimate b = run(windowed);
    EXPECT_LE(b.time.iteration_s, a.time.iteration_s * (1 + kRel));
    EXPECT_LE(b.throughput.model_flops_per_step, a.throughput.model_flops_per_step * (1 + kRel));
    ASSERT_EQ(a.memory.stages.size(), b.memory.stages.size());
    for (size_t s = 0; s < a.memory.stages.size(); ++s) {
      EXPECT_TRUE(near(b.memory.stages[s].peak_bytes, a.memory.stages[s].peak_bytes)) << "stage " << s;
    }
  });
}

// Outside the FSDP unit buffers ZeRO 2 and 3 add (buffers_bytes, which only grow):
// queued unsharded gradients and, with ZeRO 3, gathered and prefetched units.
TEST(PropertyTest, HigherZeroStageNeverIncreasesMemory) {
  for_each_config([](const json& config, uint64_t) {
    const json& base = config;
    std::vector<Estimate> stages;
    for (int zero = 0; zero <= 3; ++zero) stages.push_back(run(with_training(base, "zero_stage", zero)));
    for (int zero = 1; zero <= 3; ++zero) {
      for (size_t s = 0; s < stages[0].memory.stages.size(); ++s) {
        const StageMemory& higher = stages[zero].memory.stages[s];
        const StageMemory& lower = stages[zero - 1].memory.stages[s];
        EXPECT_LE(higher.peak_bytes - higher.buffers_bytes,
                  (lower.peak_bytes - lower.buffers_bytes) * (1 + kRel) + kRel * lower.peak_bytes)
            << "ZeRO " << zero - 1 << " -> " << zero << ", stage " << s;
        EXPECT_GE(higher.buffers_bytes, lower.buffers_bytes) << "ZeRO " << zero - 1 << " -> " << zero;
      }
    }
  });
}

TEST(PropertyTest, NoTensorParallelismMeansNoTensorParallelCommunication) {
  for_each_config([](const json& config, uint64_t) {
    json base = config;
    if (base["training"]["tp"] != 1) {
      base = with_training(base, "tp", 1);
      base["training"]["sequence_parallel"] = false;
      if (base["training"].contains("etp")) base["training"]["etp"] = 1;
      const int64_t gpus = 1 * base["training"]["pp"].get<int64_t>() * base["training"]["cp"].get<int64_t>() *
                           base["training"]["dp"].get<int64_t>();
      base["system"]["num_gpus"] = gpus;
      if (base["model"].contains("moe")) {
        const int64_t ep = base["training"]["ep"];
        const int64_t group = base["training"]["cp"].get<int64_t>() * base["training"]["dp"].get<int64_t>();
        if (group % ep != 0) base["training"]["ep"] = 1;
      }
    }
    const Estimate e = run(base);
    for (const StageTime& s : e.time.stages) {
      EXPECT_EQ(s.breakdown.tp_comm_exposed_s, 0.0) << "stage " << s.stage;
    }
  });
}

TEST(PropertyTest, FasterHardwareNeverSlowsAStep) {
  for_each_config([](const json& config, uint64_t) {
    const json& base = config;
    json system = system_of(base);
    const double t0 = run(base).time.iteration_s;
    auto faster = [&](auto&& edit) {
      json document = base;
      json changed = system;
      edit(changed);
      document["system"] = changed;
      return run(document).time.iteration_s;
    };
    const double hbm = faster([](json& s) { s["gpu"]["hbm_bandwidth_gb_per_s"] = s["gpu"]["hbm_bandwidth_gb_per_s"].get<double>() * 2; });
    EXPECT_LE(hbm, t0 * (1 + kRel)) << "doubling HBM bandwidth";
    const double flops = faster([](json& s) {
      for (auto& [dtype, tflops] : s["gpu"]["peak_tflops"].items()) tflops = tflops.get<double>() * 2;
    });
    EXPECT_LE(flops, t0 * (1 + kRel)) << "doubling peak FLOP/s";
    const double links = faster([](json& s) {
      auto twice = [](json& link) {
        link["bandwidth_gb_per_s"] = link["bandwidth_gb_per_s"].get<double>() * 2;
        for (const char* table : {"dp_all_gather_gb_per_s", "dp_reduce_scatter_gb_per_s"}) {
          if (!link.contains(table)) continue;
          for (auto& [size, gbps] : link[table].items()) gbps = gbps.get<double>() * 2;
        }
      };
      twice(s["intra_node"]);
      twice(s["inter_node"]);
      if (s.contains("intra_node_tiers")) {
        for (json& tier : s["intra_node_tiers"]) twice(tier);
      }
    });
    EXPECT_LE(links, t0 * (1 + kRel)) << "doubling link bandwidth";
  });
}

TEST(PropertyTest, EstimatesAreDeterministic) {
  for_each_config([](const json& config, uint64_t seed) {
    const std::string text = config.dump();
    const std::string first = estimate_json(text);
    estimate_json(random_config(seed + 7919).dump());  // unrelated work in between
    EXPECT_EQ(estimate_json(text), first);
  });
}

TEST(PropertyGeneratorTest, CoversEveryModelFamilyAndStrategy) {
  std::set<std::string> seen;
  for (int i = 0; i < kNumConfigs; ++i) {
    const json c = random_config(1000 + static_cast<uint64_t>(i));
    const json& t = c["training"];
    if (c["model"].contains("moe")) seen.insert("moe");
    if (c["model"].contains("mla")) seen.insert("mla");
    if (c["model"]["num_kv_heads"] != c["model"]["num_attention_heads"]) seen.insert("gqa");
    for (const char* key : {"tp", "pp", "vpp", "cp", "dp", "ep", "etp"}) {
      if (t.contains(key) && t[key].get<int64_t>() > 1) seen.insert(key);
    }
    if (t.contains("recompute")) seen.insert(t["recompute"]["granularity"].get<std::string>());
    seen.insert("zero" + std::to_string(t["zero_stage"].get<int>()));
    seen.insert(t["dtype"].get<std::string>());
    if (t["sequence_parallel"]) seen.insert("sp");
  }
  for (const char* expected : {"moe", "mla", "gqa", "tp", "pp", "vpp", "cp", "dp", "ep", "etp",
                               "full", "selective", "zero0", "zero1", "zero2", "zero3", "bf16",
                               "fp16", "fp8", "sp"}) {
    EXPECT_TRUE(seen.count(expected)) << expected << " never drawn";
  }
}

}  // namespace
}  // namespace trainsim
