// The step trace (`trainsim trace`, op "trace"): its structure against the
// Trace Event Format's documented fields (Google's "Trace Event Format":
// every event has name, ph, pid, tid, ts; "X" has dur; flow "s"/"f" pairs
// share cat, name and id; "M" process_name / thread_name), and its content
// against the estimate: one process per stage, no two slices overlapping on
// a thread, each stage's compute, TP, CP and host slices summing to the
// estimate's parts, the step ending at the estimate's iteration time, flows
// per micro-batch across stages, memory counters back to the static bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

struct Case {
  const char* name;
  const char* patch;  // merged into testing::base_config()
};

// Every pipeline schedule, interleaving, CP, EP, deferred output-layer weight gradients.
const Case kCases[] = {
    {"1f1b_tp2_pp2", R"({})"},
    {"1f1b_cp2", R"({"training": {"cp": 2, "cp_comm_type": "a2a", "global_batch_size": 32}})"},
    {"interleaved", R"({"training": {"pp": 4, "vpp": 2, "global_batch_size": 32}})"},
    {"zero_bubble_h1", R"({"training": {"pp": 4, "pipeline_schedule": "zero_bubble_h1", "global_batch_size": 32}})"},
    {"zero_bubble_v", R"({"training": {"pp": 4, "vpp": 2, "pipeline_schedule": "zero_bubble_v",
                                        "global_batch_size": 32}})"},
    {"dualpipe_moe", R"({"model": "mixtral-8x7b", "training": {"tp": 1, "pp": 4, "ep": 4, "sequence_parallel": false,
                         "pipeline_schedule": "dualpipe", "global_batch_size": 32}})"},
    {"dualpipe_v_moe", R"({"model": "mixtral-8x7b", "training": {"tp": 1, "pp": 4, "ep": 4, "vpp": 2,
                           "sequence_parallel": false, "pipeline_schedule": "dualpipe_v", "global_batch_size": 32}})"},
    {"deferred_output_wgrad", R"({"training": {"pp": 4, "global_batch_size": 32, "defer_embedding_wgrad_compute": true,
                                               "wgrad_deferral_limit": 3}})"},
    {"deferred_output_wgrad_interleaved", R"({"training": {"pp": 4, "vpp": 2, "global_batch_size": 32,
                                                           "defer_embedding_wgrad_compute": true}})"},
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

Json config_of(const Case& c) {
  Json config = testing::base_config();
  config.merge_patch(Json::parse(c.patch));
  return config;
}

double relative_gap(double a, double b) { return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-30}); }

class TraceCaseTest : public ::testing::TestWithParam<Case> {};

TEST_P(TraceCaseTest, FollowsTheFormatAndTheEstimate) {
  const Json config = config_of(GetParam());
  const Json estimate = testing::estimate_ok(config);
  const ApiResult r = call("trace", config.dump());
  ASSERT_TRUE(r.ok) << r.envelope;
  const Json trace = Json::parse(r.envelope)["result"];
  ASSERT_TRUE(trace["traceEvents"].is_array());
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  EXPECT_EQ(trace["otherData"]["trainsim_version"], version());
  EXPECT_EQ(trace["otherData"]["config"]["pp"], estimate["time"]["stages"].size());

  const Json& time = estimate["time"];
  const size_t stages = time["stages"].size();
  std::map<int64_t, std::string> process_names;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names;
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<double, double>>> on_thread;  // [pid, tid] -> ts, dur
  std::map<std::pair<int64_t, std::string>, double> busy_us;  // [pid, cat]
  std::map<int64_t, std::vector<const Json*>> flows;           // id -> s, f
  std::map<int64_t, std::vector<const Json*>> counters;        // pid -> C events in order
  double last_end_us = 0.0;
  for (const Json& e : trace["traceEvents"]) {
    for (const char* key : {"name", "ph", "pid", "tid", "ts"}) ASSERT_TRUE(e.contains(key)) << key << " in " << e;
    ASSERT_TRUE(e["name"].is_string() && e["ph"].is_string() && e["pid"].is_number_integer() &&
                e["tid"].is_number_integer() && e["ts"].is_number())
        << e;
    const std::string ph = e["ph"];
    const int64_t pid = e["pid"];
    const int64_t tid = e["tid"];
    ASSERT_GE(e["ts"].get<double>(), 0.0) << e;
    if (ph == "M") {
      if (e["name"] == "process_name") {
        EXPECT_TRUE(process_names.emplace(pid, e["args"]["name"]).second) << e;
      }
      if (e["name"] == "thread_name") {
        EXPECT_TRUE(thread_names.emplace(std::pair{pid, tid}, e["args"]["name"]).second) << e;
      }
    } else if (ph == "X") {
      ASSERT_TRUE(e["dur"].is_number()) << e;
      const double ts = e["ts"];
      const double dur = e["dur"];
      EXPECT_GE(dur, 0.0) << e;
      on_thread[{pid, tid}].push_back({ts, dur});
      busy_us[{pid, e["cat"]}] += dur;
      last_end_us = std::max(last_end_us, ts + dur);
    } else if (ph == "s" || ph == "f") {
      flows[e["id"].get<int64_t>()].push_back(&e);
    } else if (ph == "C") {
      counters[pid].push_back(&e);
    } else {
      ADD_FAILURE() << "unexpected phase " << e;
    }
  }

  // One process per stage, named with its layers; every thread with slices is named.
  ASSERT_EQ(process_names.size(), stages);
  for (size_t s = 0; s < stages; ++s) {
    EXPECT_EQ(process_names[static_cast<int64_t>(s)].rfind("stage " + std::to_string(s) + " (", 0), 0u)
        << process_names[static_cast<int64_t>(s)];
  }
  for (const auto& [thread, slices] : on_thread) EXPECT_TRUE(thread_names.count(thread)) << thread.first;

  // No two slices overlap on one thread.
  for (auto& [thread, slices] : on_thread) {
    std::sort(slices.begin(), slices.end());
    for (size_t i = 1; i < slices.size(); ++i) {
      const double end_us = slices[i - 1].first + slices[i - 1].second;
      EXPECT_LE(end_us, slices[i].first + 1e-9 * std::max(1.0, end_us))
          << "stage " << thread.first << " thread " << thread.second << " slice " << i;
    }
  }

  // Each stage's parts sum to the estimate's, and the step ends at its iteration time.
  const double iteration_us = time["iteration_s"].get<double>() * 1e6;
  EXPECT_LT(relative_gap(last_end_us, iteration_us), 1e-6) << last_end_us << " vs " << iteration_us;
  for (size_t s = 0; s < stages; ++s) {
    const Json& b = time["stages"][s]["breakdown"];
    const auto pid = static_cast<int64_t>(s);
    const double compute_s = b["forward_s"].get<double>() + b["backward_s"].get<double>() + b["recompute_s"].get<double>();
    EXPECT_LT(relative_gap(busy_us[{pid, "compute"}] * 1e-6, compute_s), 1e-6) << "stage " << s;
    EXPECT_LT(relative_gap(busy_us[{pid, "tp_comm"}] * 1e-6, b["tp_comm_exposed_s"]), 1e-6) << "stage " << s;
    EXPECT_LT(relative_gap(busy_us[{pid, "cp_comm"}] * 1e-6, b["cp_comm_exposed_s"]), 1e-6) << "stage " << s;
    EXPECT_LT(relative_gap(busy_us[{pid, "host_wait"}] * 1e-6, b["host_overhead_s"]), 1e-6) << "stage " << s;
    if (b["ep_comm_exposed_s"].get<double>() > 0.0) {
      const double ep_us = busy_us[{pid, "ep_comm"}];
      EXPECT_GT(ep_us, 0.0) << "stage " << s;
    }
    EXPECT_LT(relative_gap(busy_us[{pid, "optimizer"}] * 1e-6, b["optimizer_s"]), 1e-6) << "stage " << s;
    EXPECT_LT(relative_gap(busy_us[{pid, "dp_comm"}] * 1e-6, b["dp_comm_exposed_s"]), 1e-6) << "stage " << s;
  }

  // Flows: each id one "s" then one "f" with the same cat and name, from one stage to another,
  // each end inside a compute slice; activations and gradients of every micro-batch cross.
  std::map<std::string, std::set<int64_t>> crossing;  // cat -> micro-batches
  for (const auto& [id, pair] : flows) {
    ASSERT_EQ(pair.size(), 2u) << "flow " << id;
    const Json& s = *pair[0];
    const Json& f = *pair[1];
    EXPECT_EQ(s["ph"], "s");
    EXPECT_EQ(f["ph"], "f");
    EXPECT_EQ(f["bp"], "e");
    EXPECT_EQ(s["cat"], f["cat"]);
    EXPECT_EQ(s["name"], f["name"]);
    EXPECT_NE(s["pid"], f["pid"]);
    EXPECT_LT(s["ts"].get<double>(), f["ts"].get<double>()) << s << f;
    for (const Json* end : pair) {
      const auto& slices = on_thread[{(*end)["pid"].get<int64_t>(), (*end)["tid"].get<int64_t>()}];
      const double ts = (*end)["ts"];
      EXPECT_TRUE(std::any_of(slices.begin(), slices.end(),
                              [&](const auto& x) { return x.first <= ts && ts <= x.first + x.second; }))
          << *end;
    }
    crossing[s["cat"]].insert(std::stoll(s["name"].get<std::string>().substr(s["name"].get<std::string>().rfind(' '))));
  }
  const int64_t micro_batches = trace["otherData"]["config"]["num_micro_batches"];
  EXPECT_EQ(crossing["activation"].size(), static_cast<size_t>(micro_batches));
  EXPECT_EQ(crossing["gradient"].size(), static_cast<size_t>(micro_batches));

  // Memory counters: from the static bytes, never above the estimate's peak, back to static at the end.
  ASSERT_EQ(counters.size(), stages);
  for (const auto& [pid, events] : counters) {
    const double peak = estimate["memory"]["stages"][static_cast<size_t>(pid)]["peak_bytes"];
    double max_activations = 0.0;
    double previous_ts = 0.0;
    for (const Json* c : events) {
      const double total = (*c)["args"]["static_bytes"].get<double>() + (*c)["args"]["activations_bytes"].get<double>();
      EXPECT_LE(total, peak * (1.0 + 1e-9)) << *c;
      EXPECT_GE((*c)["ts"].get<double>(), previous_ts);
      previous_ts = (*c)["ts"];
      max_activations = std::max(max_activations, (*c)["args"]["activations_bytes"].get<double>());
    }
    EXPECT_EQ((*events.front())["args"]["activations_bytes"], 0.0);
    EXPECT_GT(max_activations, 0.0);
    EXPECT_LT((*events.back())["args"]["activations_bytes"].get<double>(), 1e-9 * max_activations) << pid;
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, TraceCaseTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& param) { return std::string(param.param.name); });

std::set<std::string> thread_names_of_stage_0(const Case& c) {
  const Json trace = Json::parse(call("trace", config_of(c).dump()).envelope)["result"];
  std::set<std::string> names;
  for (const Json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 0) names.insert(e["args"]["name"]);
  }
  return names;
}

TEST(TraceTest, ThreadsForTheModelledStreams) {
  std::set<std::string> names = thread_names_of_stage_0(kCases[1]);  // tp 2, cp 2 (a2a), pp 2, dp 2
  for (const char* name : {"compute", "TP collectives", "CP collectives", "PP send/recv", "DP collectives"}) {
    EXPECT_TRUE(names.count(name)) << name;
  }
  EXPECT_FALSE(names.count("EP all-to-all"));  // ep 1: nothing to draw
  names = thread_names_of_stage_0(kCases[5]);  // DualPipe, ep 4, tp 1: async p2p, no transfer slices
  for (const char* name : {"compute", "EP all-to-all"}) EXPECT_TRUE(names.count(name)) << name;
  for (const char* name : {"TP collectives", "PP send/recv"}) EXPECT_FALSE(names.count(name)) << name;
}

TEST(TraceTest, BadInputIsAnsweredAsEstimateAnswersIt) {
  Json infeasible = testing::base_config();
  infeasible["training"]["tp"] = 3;  // 32 heads
  infeasible["system"]["num_gpus"] = 12;
  const ApiResult trace = call("trace", infeasible.dump());
  const ApiResult estimate = call("estimate", infeasible.dump());
  EXPECT_FALSE(trace.ok);
  EXPECT_FALSE(trace.internal);
  EXPECT_EQ(trace.envelope, estimate.envelope);
  EXPECT_NE(trace.envelope.find("\"path\":\"/training"), std::string::npos) << trace.envelope;
  EXPECT_EQ(call("trace", "{").envelope, call("estimate", "{").envelope);
}

TEST(TraceTest, TooManyPassesNameTheMicroBatches) {
  Json config = testing::base_config();  // pp 2, dp 4: 4096 micro-batches, 8192 passes
  config["training"]["global_batch_size"] = 16384;
  const ApiResult r = call("trace", config.dump());
  ASSERT_FALSE(r.ok);
  const Json error = Json::parse(r.envelope)["errors"][0];
  EXPECT_EQ(error["path"], "/training/num_micro_batches");
  EXPECT_NE(error["message"].get<std::string>().find("8192"), std::string::npos) << error;
}

}  // namespace
}  // namespace trainsim
