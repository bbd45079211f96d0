// The allocation_trace op (`trainsim alloc-trace`): the events it writes,
// replayed through the allocator simulation here, give the figures it reports
// and the estimate's reserved bytes for that stage; bad inputs name their path.
#include <gtest/gtest.h>

#include <map>

#include "memory/caching_allocator.h"
#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

Json trace_config() {
  Json c = testing::base_config();
  c["model"] = "llama3-8b";
  c["training"]["tp"] = 2;
  c["training"]["pp"] = 2;
  c["training"]["micro_batch_size"] = 1;
  c["training"]["global_batch_size"] = 32;
  c["system"]["num_gpus"] = 16;
  return c;
}

Json trace_of(const Json& config, int stage) {
  const ApiResult r = call("allocation_trace", Json{{"config", config}, {"stage", stage}}.dump());
  EXPECT_TRUE(r.ok) << r.envelope;
  return Json::parse(r.envelope)["result"];
}

AllocatorStats replay(const Json& events, bool expandable) {
  AllocatorOptions options;
  options.expandable_segments = expandable;
  CachingAllocatorSim sim(options);
  for (const Json& e : events) {
    if (e[2].get<bool>()) {
      sim.free(e[0].get<int64_t>());
    } else {
      EXPECT_TRUE(sim.allocate(e[0].get<int64_t>(), e[1].get<int64_t>()));
    }
  }
  return sim.stats();
}

TEST(AllocationTraceOpTest, ReplayedEventsGiveTheReportedFiguresAndTheEstimatesReserve) {
  const Json config = trace_config();
  const Json memory = testing::estimate_ok(config)["memory"];
  for (int stage = 0; stage < 2; ++stage) {
    const Json trace = trace_of(config, stage);
    EXPECT_EQ(trace["stage"], stage);
    EXPECT_EQ(trace["columns"], Json({"id", "size_bytes", "is_free"}));
    const Json& events = trace["events"];
    ASSERT_GT(events.size(), 100u);
    // Every id is freed at most once and only while live; labels point inside the events.
    std::map<int64_t, bool> live;
    for (const Json& e : events) {
      const int64_t id = e[0].get<int64_t>();
      if (e[2].get<bool>()) {
        ASSERT_TRUE(live.count(id)) << "free of a dead id " << id;
        live.erase(id);
      } else {
        ASSERT_FALSE(live.count(id)) << "id " << id << " allocated twice";
        EXPECT_GE(e[1].get<int64_t>(), 0);
        live[id] = true;
      }
    }
    for (const Json& label : trace["labels"]) {
      EXPECT_LE(label[0].get<size_t>(), events.size());
      EXPECT_FALSE(label[1].get<std::string>().empty());
    }
    for (const bool expandable : {false, true}) {
      const AllocatorStats stats = replay(events, expandable);
      const Json& simulated = trace["simulated"][expandable ? "expandable_segments" : "native"];
      EXPECT_EQ(stats.peak_reserved_bytes, simulated["peak_reserved_bytes"].get<int64_t>());
      EXPECT_EQ(stats.peak_allocated_bytes, simulated["peak_allocated_bytes"].get<int64_t>());
      EXPECT_EQ(stats.reserved_bytes, simulated["reserved_at_end_bytes"].get<int64_t>());
    }
    // The estimate replays the same trace (native segments, the default).
    EXPECT_EQ(trace["simulated"]["native"]["peak_reserved_bytes"].get<double>(),
              memory["stages"][stage]["reserved_bytes"].get<double>());
    EXPECT_LT(trace["simulated"]["expandable_segments"]["peak_reserved_bytes"].get<double>(),
              trace["simulated"]["native"]["peak_reserved_bytes"].get<double>());
  }
}

TEST(AllocationTraceOpTest, BadInputsNameTheirPath) {
  const Json config = trace_config();
  const auto first_error = [](const Json& input) {
    const ApiResult r = call("allocation_trace", input.dump());
    EXPECT_FALSE(r.ok);
    return Json::parse(r.envelope)["errors"][0];
  };
  EXPECT_EQ(first_error({{"config", config}, {"stage", 2}})["path"], "/stage");
  EXPECT_EQ(first_error({{"config", config}, {"stage", 2}})["message"],
            "must be a pipeline stage from 0 to 1, got 2");
  EXPECT_EQ(first_error({{"config", config}, {"stage", -1}})["path"], "/stage");
  EXPECT_EQ(first_error({{"config", config}, {"stage", "0"}})["path"], "/stage");
  EXPECT_EQ(first_error({{"config", config}, {"stage", 0.5}})["path"], "/stage");
  EXPECT_EQ(first_error({{"config", config}, {"stages", 0}})["path"], "/stages");
  EXPECT_EQ(first_error({{"stage", 0}})["path"], "/config");
  Json bad = config;
  bad["training"]["tp"] = 0;
  EXPECT_EQ(first_error({{"config", bad}})["path"], "/config/training/tp");
  const ApiResult not_json = call("allocation_trace", "[1, 2");
  EXPECT_FALSE(not_json.ok);
  EXPECT_FALSE(not_json.internal);
}

}  // namespace
}  // namespace trainsim
