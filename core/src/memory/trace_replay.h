// Replays a stage's allocation trace (allocation_trace.h) through the caching
// allocator (caching_allocator.h) as the events are made, without storing them:
// peak reserved memory, the moment and op behind it, and allocated / reserved
// through the steady step as a bounded series.
#pragma once

#include <cstdint>
#include <vector>

#include "memory/allocation_trace.h"
#include "memory/caching_allocator.h"

namespace trainsim {

struct ReplayPoint {  ///< maxima over a run of consecutive events of the steady step
  int64_t event_index = 0;  ///< last event of the run, counted from the steady step's start
  int64_t allocated_bytes = 0;
  int64_t reserved_bytes = 0;
  TraceLabel label;  ///< where allocated memory peaked inside the run
};

struct StageReplay {
  AllocatorStats stats;           ///< at the end (peaks over the whole trace)
  bool out_of_memory = false;     ///< an allocation failed after the allocator's retries
  bool stopped = false;           ///< by a FitsStop
  int64_t oom_request_bytes = 0;
  TraceLabel oom_label;
  int64_t events = 0;                 ///< events replayed
  TraceLabel at_peak_reserved;        ///< where reserved memory reached its maximum
  TraceLabel at_peak_allocated;       ///< where allocated memory peaked in the steady step
  int64_t steady_peak_allocated_bytes = 0;  ///< allocator's allocated bytes (rounded blocks)
  int64_t steady_peak_requested_bytes = 0;  ///< the trace's own bytes (the op walk's peak)
  std::vector<ReplayPoint> timeline;        ///< at most timeline_points (0: none)
};

// Stops the replay early (StageReplay::stopped) at the first event after which
// usable - (reserved + outside) < headroom, or after the allocator's first
// retry: the memory verdict (memory/verdict.h) cannot be "fits" any more.
struct FitsStop {
  double usable_bytes = 0.0;
  double outside_bytes = 0.0;
  double headroom_bytes = 0.0;
};

StageReplay replay_stage_trace(const StageTraceSpec& spec, const AllocatorOptions& options,
                               int64_t timeline_points, const FitsStop* stop = nullptr);
// The same through `sim`, reset to `options` first: a caller replaying several
// stages keeps one allocator, so its arena and maps are not regrown (and their
// pages not faulted in again) for every stage. Results are identical.
StageReplay replay_stage_trace(CachingAllocatorSim& sim, const StageTraceSpec& spec,
                               const AllocatorOptions& options, int64_t timeline_points,
                               const FitsStop* stop = nullptr);

}  // namespace trainsim
