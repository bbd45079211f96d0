#include "report/allocation_trace_json.h"

#include "memory/peak_names.h"
#include "memory/stage_replay.h"
#include "memory/trace_replay.h"
#include "memory/stage_memory.h"
#include "model/model_plan.h"
#include "time/pipeline_run.h"

namespace trainsim::report {
namespace {

// Collects the events and, at each change, where they come from.
class JsonSink final : public TraceSink {
 public:
  explicit JsonSink(const ModelPlan& plan) : plan_(plan) {}

  void allocate(int64_t id, int64_t bytes) override { push(id, bytes, false); }
  void release(int64_t id) override { push(id, 0, true); }
  void label(const TraceLabel& label) override {
    const auto index = static_cast<int64_t>(events_.size());
    labels_.push_back({index, describe_label(plan_, label)});
  }

  nlohmann::json events() { return std::move(events_); }
  nlohmann::json labels() { return std::move(labels_); }

 private:
  void push(int64_t id, int64_t bytes, bool is_free) {
    // Ids fit a double exactly only below 2^53: renumber them densely.
    auto [it, inserted] = ids_.emplace(id, next_id_);
    if (inserted) ++next_id_;
    const int64_t dense = it->second;
    if (is_free) ids_.erase(it);
    events_.push_back({dense, bytes, is_free});
  }

  const ModelPlan& plan_;
  std::unordered_map<int64_t, int64_t> ids_;
  int64_t next_id_ = 1;
  nlohmann::json events_ = nlohmann::json::array();
  nlohmann::json labels_ = nlohmann::json::array();
};

nlohmann::json simulated(const StageTraceSpec& spec, bool expandable) {
  AllocatorOptions options;
  options.expandable_segments = expandable;
  const StageReplay r = replay_stage_trace(spec, options, 0);
  return {{"peak_reserved_bytes", r.stats.peak_reserved_bytes},
          {"peak_allocated_bytes", r.stats.peak_allocated_bytes},
          {"reserved_at_end_bytes", r.stats.reserved_bytes},
          {"allocated_at_peak_reserved_bytes", r.stats.at_peak_reserved.allocated_bytes},
          {"segments", r.stats.segments},
          {"device_allocations", r.stats.num_device_alloc}};
}

}  // namespace

bool allocation_trace_json(const Config& config, int64_t stage, nlohmann::json& out, int64_t& events) {
  const ModelPlan plan = build_model_plan(config);
  // Zero-bubble and DualPipe: the time model's orders (as estimate.cpp hands them over).
  ScheduleInFlight in_flight;
  if (config.training.parallel.schedule != PipelineSchedule::kOneFOneB) {
    in_flight = schedule_in_flight(config, chunk_stored_bytes(plan), chunk_pass_over_bytes(plan));
  }
  const std::vector<StageTracePlan> traces = plan_stage_traces(config, plan, &in_flight);
  const StageTracePlan& t = traces[static_cast<size_t>(stage)];
  events = t.events;
  if (t.events > kMaxExportedTraceEvents) return false;
  const StageTraceSpec spec = stage_trace_spec(plan, static_cast<size_t>(stage), t);
  JsonSink sink(plan);
  emit_stage_trace(spec, sink);
  nlohmann::json order = nlohmann::json::array();
  static const char* kPasses[] = {"F", "B", "W", "BW"};
  for (const PassStep& step : t.order) {
    order.push_back(std::string(kPasses[static_cast<int>(step.kind)]) + " mb " +
                    std::to_string(step.micro_batch) + " chunk " + std::to_string(step.chunk));
  }
  out = {{"stage", stage},
         {"granularity", t.granularity == TraceGranularity::kOp ? "op" : "layer"},
         {"passes", order},
         {"columns", {"id", "size_bytes", "is_free"}},
         {"events", sink.events()},
         {"labels", sink.labels()},
         {"simulated", {{"native", simulated(spec, false)}, {"expandable_segments", simulated(spec, true)}}}};
  return true;
}

}  // namespace trainsim::report
