#include "memory/stage_replay.h"

#include <algorithm>
#include <cmath>

#include "memory/outside_memory.h"
#include "memory/pass_order.h"
#include "memory/peak_names.h"
#include "memory/trace_replay.h"

namespace trainsim {
namespace {

AllocatorOptions allocator_options(const Config& config, double capacity_bytes) {
  AllocatorOptions options;
  options.expandable_segments = config.training.expandable_segments;
  if (capacity_bytes > 0.0) {
    options.capacity_bytes = static_cast<int64_t>(std::min(capacity_bytes, 9.0e18));
  }
  return options;
}

// The replay at the least capacity (to within 1/2^kNeedBisections of the
// range) the stage runs in: from the failed capacity up to what an unlimited
// replay reserves, which always suffices.
StageReplay least_capacity_replay(const StageTraceSpec& spec, const Config& config, double failed,
                                  int64_t points, bool bisect) {
  StageReplay best = replay_stage_trace(spec, allocator_options(config, 0.0), points);
  if (!bisect) return best;
  double low = failed;
  double high = static_cast<double>(best.stats.peak_reserved_bytes);
  for (int k = 0; k < kNeedBisections && high - low > 64.0 * 1024 * 1024; ++k) {
    const double middle = std::floor((low + high) / 2.0);
    StageReplay trial = replay_stage_trace(spec, allocator_options(config, middle), points);
    if (trial.out_of_memory) {
      low = middle;
    } else {
      high = middle;
      best = std::move(trial);
    }
  }
  return best;
}

std::string granularity_name(TraceGranularity g) {
  return g == TraceGranularity::kOp ? "op" : "layer";
}

}  // namespace

std::vector<StageTracePlan> plan_stage_traces(const Config& config, const ModelPlan& plan) {
  const ParallelSpec& p = config.training.parallel;
  const int64_t m = config.training.num_micro_batches;
  std::vector<StageTracePlan> traces(plan.stages.size());
  int64_t total = 0;
  for (size_t stage = 0; stage < plan.stages.size(); ++stage) {
    StageTracePlan& t = traces[stage];
    const auto r = static_cast<int64_t>(stage);
    const int64_t kept = compressed_micro_batches(p.pp, p.vpp, m, r, kSteadyCycles);
    t.order = megatron_pass_order(p.pp, p.vpp, kept, r, p.pp);
    t.statics = stage_statics(config, plan, stage, true);
    StageTraceSpec spec{&plan, stage, &t.statics, t.order, TraceGranularity::kOp};
    t.events = stage_trace_events(spec);
    total += t.events;
  }
  if (total <= kTraceEventBudget) return traces;
  // Too long together: fold each layer into one tensor (same peaks, fewer events).
  for (size_t stage = 0; stage < plan.stages.size(); ++stage) {
    StageTracePlan& t = traces[stage];
    t.granularity = TraceGranularity::kLayer;
    t.statics = stage_statics(config, plan, stage, false);
    StageTraceSpec spec{&plan, stage, &t.statics, t.order, t.granularity};
    t.events = stage_trace_events(spec);
    t.replayable = t.events <= kStageTraceEventLimit;
  }
  return traces;
}

namespace {

void set_outside(const Config& config, StageMemory& s) {
  const OutsideMemory outside = outside_allocator_memory(config, s.stage);
  s.outside.clear();
  for (const OutsideTerm& term : outside.terms) s.outside.push_back({term.name, term.bytes, term.source});
  s.outside_allocator_bytes = outside.total_bytes;
}

}  // namespace

void lower_bound_reserved(const Config& config, std::vector<StageMemory>& stages) {
  for (StageMemory& s : stages) {
    set_outside(config, s);
    s.allocator = AllocatorReplaySummary{};
    s.reserved_bytes = s.peak_bytes;
    s.fragmentation_bytes = 0.0;
    s.device_bytes = s.reserved_bytes + s.outside_allocator_bytes;
  }
}

void replay_stage_memory(const Config& config, const ModelPlan& plan,
                         std::vector<StageMemory>& stages, const ReplayOptions& options) {
  const std::vector<StageTracePlan> traces = plan_stage_traces(config, plan);
  const double usable = usable_capacity_bytes(config.system.gpu);
  const auto count = static_cast<int64_t>(stages.size());
  const int64_t points = options.timeline_points >= 0
                             ? options.timeline_points
                             : std::clamp<int64_t>(2048 / std::max<int64_t>(count, 1), 8, 64);
  for (size_t i = 0; i < stages.size(); ++i) {
    StageMemory& s = stages[i];
    set_outside(config, s);
    const StageTracePlan& t = traces[i];
    AllocatorReplaySummary& a = s.allocator;
    a = AllocatorReplaySummary{};
    if (!t.replayable) {
      s.reserved_bytes = s.peak_bytes;
      s.fragmentation_bytes = 0.0;
      s.device_bytes = s.reserved_bytes + s.outside_allocator_bytes;
      continue;
    }
    const StageTraceSpec spec{&plan, i, &t.statics, t.order, t.granularity};
    const double capacity = std::max(0.0, usable - s.outside_allocator_bytes);
    StageReplay replay = replay_stage_trace(spec, allocator_options(config, capacity + 1.0), points);
    if (replay.out_of_memory) {
      a.out_of_memory = true;
      replay = least_capacity_replay(spec, config, capacity, points, options.find_need);
    }
    a.replayed = true;
    a.granularity = granularity_name(t.granularity);
    a.events = replay.events;
    a.peak_allocated_bytes = static_cast<double>(replay.steady_peak_allocated_bytes);
    a.allocated_at_peak_reserved_bytes =
        static_cast<double>(replay.stats.at_peak_reserved.allocated_bytes);
    a.segments = replay.stats.segments;
    a.device_allocations = replay.stats.num_device_alloc;
    a.alloc_retries = replay.stats.num_alloc_retries;
    if (options.describe) a.peak_reserved_at = describe_label(plan, replay.at_peak_reserved);
    s.reserved_bytes = static_cast<double>(replay.stats.peak_reserved_bytes);
    s.fragmentation_bytes = static_cast<double>(replay.stats.at_peak_reserved.fragmentation_bytes());
    s.device_bytes = s.reserved_bytes + s.outside_allocator_bytes;
    s.timeline.clear();
    s.timeline.reserve(replay.timeline.size());
    for (const ReplayPoint& point : replay.timeline) {
      s.timeline.push_back({point.event_index, static_cast<double>(point.allocated_bytes),
                            static_cast<double>(point.reserved_bytes),
                            options.describe ? describe_pass(point.label) : std::string()});
    }
  }
}

}  // namespace trainsim
