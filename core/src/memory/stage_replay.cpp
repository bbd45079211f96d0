#include "memory/stage_replay.h"

#include <algorithm>
#include <cmath>

#include "memory/outside_memory.h"
#include "memory/pass_order.h"
#include "memory/peak_names.h"
#include "memory/trace_replay.h"
#include "trainsim/issue.h"

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

// The replay at the least capacity (to within 1/2^bisections of the range, or
// 64 MiB, or kNeedTolerance of the need) the stage runs in: from the failed
// capacity, or the peak allocated bytes, which no capacity below serves, up to
// what an unlimited replay reserves, which always suffices. `budget_events`:
// events the bisection may still replay (it takes what it uses).
StageReplay least_capacity_replay(CachingAllocatorSim& sim, const StageTraceSpec& spec,
                                  const Config& config, double failed, int64_t points,
                                  int bisections, int64_t& budget_events) {
  StageReplay best = replay_stage_trace(sim, spec, allocator_options(config, 0.0), points);
  double low = std::max(failed, static_cast<double>(best.stats.peak_allocated_bytes) - 1.0);
  double high = static_cast<double>(best.stats.peak_reserved_bytes);
  const double tolerance = std::max(64.0 * 1024 * 1024, kNeedTolerance * high);
  for (int k = 0; k < bisections && high - low > tolerance && budget_events >= best.events; ++k) {
    budget_events -= best.events;
    const double middle = std::floor((low + high) / 2.0);
    StageReplay trial = replay_stage_trace(sim, spec, allocator_options(config, middle), points);
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

StageTraceSpec stage_trace_spec(const ModelPlan& plan, size_t stage, const StageTracePlan& t) {
  StageTraceSpec spec{&plan, stage, &t.statics, t.order, t.granularity};
  spec.weight_kept_fraction = t.weight_kept_fraction;
  return spec;
}

std::vector<StageTracePlan> plan_stage_traces(const Config& config, const ModelPlan& plan,
                                              const ScheduleInFlight* in_flight) {
  const ParallelSpec& p = config.training.parallel;
  const int64_t m = config.training.num_micro_batches;
  const bool megatron = p.schedule == PipelineSchedule::kOneFOneB;
  TRAINSIM_CHECK(megatron || (in_flight != nullptr && in_flight->ranks.size() == plan.stages.size()),
                 "stage traces: the schedule's orders are missing");
  std::vector<StageTracePlan> traces(plan.stages.size());
  int64_t total = 0;
  for (size_t stage = 0; stage < plan.stages.size(); ++stage) {
    StageTracePlan& t = traces[stage];
    const auto r = static_cast<int64_t>(stage);
    if (megatron) {
      const int64_t kept = compressed_micro_batches(p.pp, p.vpp, m, r, kSteadyCycles);
      t.order = megatron_pass_order(p.pp, p.vpp, kept, r, p.pp);
    } else {
      // The time model's order for this rank, every micro-batch (no compression).
      t.order = in_flight->ranks[stage].order;
      t.weight_kept_fraction = in_flight->weight_kept_fraction;
    }
    t.statics = stage_statics(config, plan, stage, true);
    t.events = stage_trace_events(stage_trace_spec(plan, stage, t));
    total += t.events;
  }
  if (total <= kTraceEventBudget) return traces;
  // Too long together: fold each layer into one tensor (same peaks, fewer events).
  for (size_t stage = 0; stage < plan.stages.size(); ++stage) {
    StageTracePlan& t = traces[stage];
    t.granularity = TraceGranularity::kLayer;
    t.statics = stage_statics(config, plan, stage, false);
    t.events = stage_trace_events(stage_trace_spec(plan, stage, t));
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
                         std::vector<StageMemory>& stages, const ReplayOptions& options,
                         const ScheduleInFlight* in_flight) {
  const std::vector<StageTracePlan> traces = plan_stage_traces(config, plan, in_flight);
  const double usable = usable_capacity_bytes(config.system.gpu);
  const auto count = static_cast<int64_t>(stages.size());
  const int64_t points = options.timeline_points >= 0
                             ? options.timeline_points
                             : std::clamp<int64_t>(2048 / std::max<int64_t>(count, 1), 8, 64);
  for (StageMemory& s : stages) {
    set_outside(config, s);
    s.allocator = AllocatorReplaySummary{};
    s.reserved_bytes = s.peak_bytes;  // until replayed: a lower bound
    s.fragmentation_bytes = 0.0;
    s.device_bytes = s.reserved_bytes + s.outside_allocator_bytes;
  }
  // Stages with the largest need first (they decide the verdict), while the
  // replays stay within kReplayEventBudget; then the need of the stages that
  // ran out of memory, within kNeedEventBudget.
  std::vector<size_t> order(stages.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return stages[a].device_bytes > stages[b].device_bytes;
  });
  int64_t budget = kReplayEventBudget;
  int64_t need_budget = options.find_need ? kNeedEventBudget : 0;
  CachingAllocatorSim sim(AllocatorOptions{});  // reset by every replay
  for (const size_t i : order) {
    StageMemory& s = stages[i];
    const StageTracePlan& t = traces[i];
    AllocatorReplaySummary& a = s.allocator;
    if (!t.replayable || t.events > budget) continue;
    const StageTraceSpec spec = stage_trace_spec(plan, i, t);
    const double capacity = std::max(0.0, usable - s.outside_allocator_bytes);
    StageReplay replay;
    // Allocated bytes alone above the capacity: the allocator cannot serve it.
    const bool fails = s.peak_bytes > capacity;
    if (!fails) {
      replay = replay_stage_trace(sim, spec, allocator_options(config, capacity + 1.0), points);
      budget -= t.events;
    }
    if (fails || replay.out_of_memory) {
      a.out_of_memory = true;
      budget -= t.events;
      replay = least_capacity_replay(sim, spec, config, capacity, points,
                                     options.find_need ? kNeedBisections : 0, need_budget);
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
    if (replay.out_of_memory && s.reserved_bytes < s.peak_bytes) {
      // Past what the allocator may reserve at all (AllocatorOptions): the
      // replay stopped early; the allocated peak is the lower bound.
      s.reserved_bytes = s.peak_bytes;
      s.fragmentation_bytes = 0.0;
    }
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

namespace trainsim {

bool replayed_stages_fit(const Config& config, const ModelPlan& plan,
                         const std::vector<StageMemory>& stages, double headroom_fraction,
                         const ScheduleInFlight* in_flight) {
  const double usable = usable_capacity_bytes(config.system.gpu);
  const double headroom = headroom_fraction * usable;
  // memory_verdict's test of a stage that is not replayed (reserved = allocated).
  const auto lower_bound_fits = [&](const StageMemory& s) {
    return !(usable - s.device_bytes < headroom);
  };
  const std::vector<StageTracePlan> traces = plan_stage_traces(config, plan, in_flight);
  // replay_stage_memory's order and budget (a stage that fits takes its events).
  std::vector<size_t> order(stages.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return stages[a].device_bytes > stages[b].device_bytes;
  });
  int64_t budget = kReplayEventBudget;
  CachingAllocatorSim sim(AllocatorOptions{});  // reset by every replay
  for (const size_t i : order) {
    const StageMemory& s = stages[i];
    const StageTracePlan& t = traces[i];
    if (!t.replayable || t.events > budget) {
      if (!lower_bound_fits(s)) return false;
      continue;
    }
    const double capacity = std::max(0.0, usable - s.outside_allocator_bytes);
    if (s.peak_bytes > capacity) return false;
    const StageTraceSpec spec = stage_trace_spec(plan, i, t);
    const FitsStop stop{usable, s.outside_allocator_bytes, headroom};
    const StageReplay replay =
        replay_stage_trace(sim, spec, allocator_options(config, capacity + 1.0), 0, &stop);
    if (replay.stopped || replay.out_of_memory) return false;
    budget -= t.events;
  }
  return true;
}

}  // namespace trainsim
