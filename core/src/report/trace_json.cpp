#include "report/trace_json.h"

#include <string>

#include "report/trace_layout.h"
#include "time/schedule_orders.h"
#include "trainsim/trainsim.h"

namespace trainsim::report {
namespace {

constexpr double kMicrosecondsPerSecond = 1e6;

double us(double seconds) { return seconds * kMicrosecondsPerSecond; }

nlohmann::json metadata_event(const char* name, int32_t pid, int32_t tid, nlohmann::json args) {
  return {{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"ts", 0}, {"args", std::move(args)}};
}

nlohmann::json config_summary(const Config& config) {
  const TrainingSpec& t = config.training;
  const ParallelSpec& p = t.parallel;
  return {{"model", config.model.name},
          {"system", config.system.name},
          {"gpu", config.system.gpu.name},
          {"num_gpus", config.system.num_gpus},
          {"tp", p.tp},
          {"pp", p.pp},
          {"dp", p.dp},
          {"cp", p.cp},
          {"ep", p.ep},
          {"etp", p.etp},
          {"vpp", p.vpp},
          {"sequence_parallel", p.sequence_parallel},
          {"pipeline_schedule", pipeline_schedule_name(p.schedule)},
          {"micro_batch_size", t.micro_batch_size},
          {"num_micro_batches", t.num_micro_batches},
          {"seq_len", t.seq_len}};
}

nlohmann::json other_data(const Config& config, const Estimate& e) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageTime& st : e.time.stages) {
    const StageMemory& m = e.memory.stages[static_cast<size_t>(st.stage)];
    const TimeBreakdown& b = st.breakdown;
    stages.push_back({{"stage", st.stage},
                      {"compute_s", b.forward_s + b.backward_s + b.recompute_s},
                      {"pipeline_s", st.pipeline_s},
                      {"total_s", st.total_s},
                      {"peak_allocated_bytes", m.peak_bytes},
                      {"reserved_bytes", m.reserved_bytes}});
  }
  return {{"generator", "trainsim trace"},
          {"trainsim_version", version()},
          {"time_unit", "ts and dur in microseconds from the step's start"},
          {"config", config_summary(config)},
          {"iteration_s", e.time.iteration_s},
          {"critical_stage", e.time.critical_stage},
          {"memory_verdict", e.memory.verdict.status},
          {"mfu", e.throughput.mfu},
          {"stages", stages},
          {"layout",
           "Passes and their times are the estimate's pipeline timeline. Each pass is split into the parts "
           "its time is the sum of (compute, TP, CP, EP collectives, host waits), laid end to end in that order "
           "(the model does not order them inside a pass); DualPipe's F&B pairs run EP beside the rest. The "
           "memory counter is static bytes plus the activations stored by live micro-batches, without the "
           "running op's transient working set."}};
}

}  // namespace

nlohmann::json step_trace_json(const Config& config, const Estimate& estimate) {
  const TraceLayout layout = trace_layout(config, estimate);
  nlohmann::json events = nlohmann::json::array();
  for (size_t s = 0; s < layout.stage_names.size(); ++s) {
    const auto pid = static_cast<int32_t>(s);
    events.push_back(metadata_event("process_name", pid, 0, {{"name", layout.stage_names[s]}}));
    events.push_back(metadata_event("process_sort_index", pid, 0, {{"sort_index", pid}}));
    for (const auto& [tid, name] : layout.threads[s]) {
      events.push_back(metadata_event("thread_name", pid, tid, {{"name", name}}));
      events.push_back(metadata_event("thread_sort_index", pid, tid, {{"sort_index", tid}}));
    }
  }
  for (const TraceSlice& x : layout.slices) {
    nlohmann::json args = nlohmann::json::object();
    if (x.micro_batch >= 0) args["micro_batch"] = x.micro_batch;
    if (x.chunk >= 0) args["chunk"] = x.chunk;
    events.push_back({{"name", x.name},
                      {"cat", x.cat},
                      {"ph", "X"},
                      {"pid", x.stage},
                      {"tid", x.tid},
                      {"ts", us(x.start_s)},
                      {"dur", us(x.duration_s)},
                      {"args", std::move(args)}});
  }
  for (const TraceFlow& f : layout.flows) {
    const std::string name = f.cat + " mb " + std::to_string(f.micro_batch);
    events.push_back({{"name", name}, {"cat", f.cat}, {"ph", "s"}, {"id", f.id},
                      {"pid", f.from_stage}, {"tid", kComputeTid}, {"ts", us(f.from_s)}});
    events.push_back({{"name", name}, {"cat", f.cat}, {"ph", "f"}, {"bp", "e"}, {"id", f.id},
                      {"pid", f.to_stage}, {"tid", kComputeTid}, {"ts", us(f.to_s)}});
  }
  for (const TraceCounter& c : layout.counters) {
    events.push_back({{"name", "memory (modelled allocated bytes)"},
                      {"ph", "C"},
                      {"pid", c.stage},
                      {"tid", 0},
                      {"ts", us(c.at_s)},
                      {"args", {{"static_bytes", c.static_bytes}, {"activations_bytes", c.activations_bytes}}}});
  }
  return {{"traceEvents", std::move(events)},
          {"displayTimeUnit", "ms"},
          {"otherData", other_data(config, estimate)}};
}

}  // namespace trainsim::report
