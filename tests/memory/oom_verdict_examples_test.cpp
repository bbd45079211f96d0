// The examples of the "will it OOM?" issue, before and after the verdict.
// Before, `fits` compared allocated bytes with the HBM size and reserved memory
// was 1.048 x allocated:
//   Llama-3-8B, 18K tokens, tp 2 on H100 80GB: 79.36 GiB allocated, 83.17 GiB
//     "reserved", called a fit against 80 GiB;
//   the search's 70B plan on 1024 H100 (tp 2, cp 2, pp 8, vpp 10): 77.18 GiB
//     allocated (96.5% of HBM), 80.89 GiB "reserved", called a fit.
// After, reserved memory comes from the allocator replay, memory outside the
// allocator is added, and the sum is checked against the 79.19 GiB PyTorch can
// use on an H100 80GB. The figures the test prints are the README's.
#include <gtest/gtest.h>

#include <cstdio>

#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

Json llama8b_18k() {
  return Json::parse(R"({
    "model": "llama3-8b",
    "training": {"seq_len": 18432, "micro_batch_size": 1, "global_batch_size": 64, "tp": 2,
                 "pp": 1, "sequence_parallel": true, "zero_stage": 1},
    "system": {"preset": "h100-sxm-80gb", "num_gpus": 8}
  })");
}

Json llama70b_plan(int tp, int cp, int pp, int vpp, const char* cp_comm_type = "p2p") {
  Json c = Json::parse(R"({
    "model": "llama3-70b",
    "training": {"seq_len": 8192, "micro_batch_size": 1, "global_batch_size": 1024,
                 "sequence_parallel": true, "zero_stage": 1, "overlap_grad_reduce": true,
                 "recompute": {"granularity": "none"}},
    "system": {"preset": "h100-sxm-80gb", "num_gpus": 1024}
  })");
  c["training"]["tp"] = tp;
  c["training"]["cp"] = cp;
  c["training"]["pp"] = pp;
  c["training"]["vpp"] = vpp;
  if (cp > 1) c["training"]["cp_comm_type"] = cp_comm_type;
  return c;
}

void print(const char* name, const Json& memory) {
  const Json& v = memory["verdict"];
  std::printf("[oom example] %s: allocated %.2f GiB, reserved %.2f GiB, device %.2f GiB of %.2f GiB usable: %s (margin %.2f GiB)\n",
              name, memory["peak_bytes"].get<double>() / kGiB, memory["reserved_bytes"].get<double>() / kGiB,
              memory["device_bytes"].get<double>() / kGiB, v["usable_bytes"].get<double>() / kGiB,
              v["status"].get<std::string>().c_str(), v["margin_bytes"].get<double>() / kGiB);
}

// Applies a suggestion's "set" ({"training.cp": "2", ...}; values are JSON texts).
Json applied(Json config, const Json& set) {
  for (const auto& [key, value] : set.items()) {
    const size_t dot = key.find('.');
    config[key.substr(0, dot)][key.substr(dot + 1)] = Json::parse(value.get<std::string>());
  }
  return config;
}

TEST(OomVerdictExamplesTest, Llama8bAt18kTokensOnTp2NoLongerFits) {
  const Json config = llama8b_18k();
  const Json result = testing::estimate_ok(config);
  const Json& memory = result["memory"];
  print("llama3-8b 18K tp2", memory);
  // Allocated memory is the op walk's (unchanged but for the output layer's
  // gather buffer and the cuBLAS workspaces, which it now counts).
  EXPECT_NEAR(memory["peak_bytes"].get<double>() / kGiB, 79.57, 0.8);
  // Reserved memory is the replay's, not a ratio: the trace leaves 2.9 GiB
  // cached but unallocated at its peak.
  const Json& stage = memory["stages"][0];
  EXPECT_GT(stage["fragmentation_bytes"].get<double>(), 2.0 * kGiB);
  EXPECT_NEAR(memory["reserved_bytes"].get<double>() / kGiB, 82.45, 0.8);
  EXPECT_GT(stage["outside_allocator_bytes"].get<double>(), 1.0 * kGiB);
  EXPECT_EQ(stage["device_bytes"], memory["device_bytes"]);
  const Json& verdict = memory["verdict"];
  EXPECT_EQ(verdict["status"], "out_of_memory");
  EXPECT_FALSE(result["fits"].get<bool>());
  EXPECT_NEAR(verdict["usable_bytes"].get<double>(), 81089.0 * 1024 * 1024, 1.0);
  EXPECT_LT(verdict["margin_bytes"].get<double>(), -4.0 * kGiB);
  ASSERT_EQ(verdict["reasons"].size(), 1u);
  const std::string reason = verdict["reasons"][0];
  EXPECT_NE(reason.find("stage 0 needs"), std::string::npos) << reason;
  EXPECT_NE(reason.find("activations"), std::string::npos) << reason;
  EXPECT_NE(reason.find("peaks at cross_entropy"), std::string::npos) << reason;
  // Every suggestion, applied to the config, gives a plan that does not run out of memory.
  const Json& suggestions = memory["suggestions"];
  ASSERT_GE(suggestions.size(), 2u);
  for (const Json& s : suggestions) {
    const Json after = testing::estimate_ok(applied(config, s["set"]))["memory"];
    std::printf("[oom example]   suggestion %s: %s, device %.2f GiB\n", s["change"].get<std::string>().c_str(),
                after["verdict"]["status"].get<std::string>().c_str(), after["device_bytes"].get<double>() / kGiB);
    EXPECT_NE(after["verdict"]["status"], "out_of_memory") << s.dump();
    EXPECT_EQ(after["verdict"]["status"], s["status"]) << s.dump();
    EXPECT_NEAR(after["device_bytes"].get<double>(), s["device_bytes"].get<double>(), 1.0) << s.dump();
  }
  // Expandable segments nearly remove the cached-but-unallocated part, not enough here.
  Json expandable = config;
  expandable["training"]["expandable_segments"] = true;
  const Json e = testing::estimate_ok(expandable)["memory"];
  print("llama3-8b 18K tp2, expandable segments", e);
  EXPECT_LT(e["stages"][0]["fragmentation_bytes"].get<double>(), 0.25 * kGiB);
  EXPECT_EQ(e["verdict"]["status"], "out_of_memory");
}

TEST(OomVerdictExamplesTest, Llama70bPlansOn1024H100) {
  // The plan the search ranked first before (96.5% of HBM allocated, reserve above the card),
  // with the context-parallel exchange it had then (a2a, trainsim's former default).
  const Json before_best = testing::estimate_ok(llama70b_plan(2, 2, 8, 10, "a2a"))["memory"];
  print("llama3-70b tp2 cp2 pp8 vpp10 a2a", before_best);
  EXPECT_EQ(before_best["verdict"]["status"], "out_of_memory");
  EXPECT_GT(before_best["device_bytes"].get<double>(), before_best["verdict"]["usable_bytes"].get<double>());
  EXPECT_FALSE(before_best["suggestions"].empty());
  // With Megatron-LM's default exchange (p2p, now trainsim's too) its activations are 2.7 GiB
  // smaller: it no longer runs out of memory, but leaves far less than the 5% headroom.
  const Json p2p = testing::estimate_ok(llama70b_plan(2, 2, 8, 10))["memory"];
  print("llama3-70b tp2 cp2 pp8 vpp10 p2p", p2p);
  EXPECT_EQ(p2p["verdict"]["status"], "tight");
  EXPECT_GT(p2p["verdict"]["margin_bytes"].get<double>(), 0.0);
  EXPECT_LT(p2p["verdict"]["margin_bytes"].get<double>(), 0.01 * p2p["verdict"]["usable_bytes"].get<double>());
  // tp 4, pp 4, vpp 10: allocated 71.9 GiB fits, but inside the 5% headroom once reserved.
  const Json tight = testing::estimate_ok(llama70b_plan(4, 1, 4, 10))["memory"];
  print("llama3-70b tp4 cp1 pp4 vpp10", tight);
  EXPECT_EQ(tight["verdict"]["status"], "tight");
  EXPECT_GT(tight["verdict"]["margin_bytes"].get<double>(), 0.0);
  EXPECT_LT(tight["verdict"]["margin_bytes"].get<double>(),
            0.05 * tight["verdict"]["usable_bytes"].get<double>());
  // A tight plan gets the nearest changes that restore the headroom: each, applied, fits.
  for (const Json* plan : {&p2p, &tight}) {
    const Json& suggestions = (*plan)["suggestions"];
    ASSERT_FALSE(suggestions.empty());
    const Json config = plan == &p2p ? llama70b_plan(2, 2, 8, 10) : llama70b_plan(4, 1, 4, 10);
    for (const Json& s : suggestions) {
      EXPECT_EQ(s["status"], "fits") << s.dump();
      const Json after = testing::estimate_ok(applied(config, s["set"]))["memory"];
      std::printf("[oom example]   tight plan, suggestion %s: %s, margin %.2f GiB\n",
                  s["change"].get<std::string>().c_str(),
                  after["verdict"]["status"].get<std::string>().c_str(),
                  after["verdict"]["margin_bytes"].get<double>() / kGiB);
      EXPECT_EQ(after["verdict"]["status"], "fits") << s.dump();
      EXPECT_GE(after["verdict"]["margin_bytes"].get<double>(),
                0.05 * after["verdict"]["usable_bytes"].get<double>());
    }
  }
}

TEST(OomVerdictExamplesTest, SearchOnlyReturnsPlansTheVerdictCallsFits) {
  const Json spec = Json::parse(R"({
    "model": "llama3-70b", "system": {"preset": "h100-sxm-80gb"}, "num_gpus": 1024,
    "global_batch_size": 1024, "seq_len": 8192, "training": {"overlap_grad_reduce": true},
    "constraints": {"micro_batch_size": [1, 2], "max_tp": 8, "pp": [4, 8], "vpp": [1, 5, 10],
                    "recompute": [{"granularity": "none"}]},
    "top_k": 3
  })");
  const Json envelope = Json::parse(search_json(spec.dump()));
  ASSERT_TRUE(envelope["ok"].get<bool>()) << envelope.dump();
  const Json& result = envelope["result"];
  ASSERT_FALSE(result["top"].empty());
  for (const Json& plan : result["top"]) {
    EXPECT_EQ(plan["result"]["memory"]["verdict"]["status"], "fits") << plan["config"].dump();
    EXPECT_EQ(plan["result"]["memory"]["verdict"]["headroom_fraction"], 0.05);
  }
  print("llama3-70b search best", result["top"][0]["result"]["memory"]);
  std::printf("[oom example] search counts %s\n", result["counts"].dump().c_str());
}

}  // namespace
}  // namespace trainsim
