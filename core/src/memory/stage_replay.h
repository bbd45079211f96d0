// Reserved memory of every pipeline stage from the caching-allocator replay of
// its allocation trace, and the memory outside the allocator: fills
// StageMemory's reserved_bytes, fragmentation_bytes, allocator, timeline,
// outside, outside_allocator_bytes and device_bytes.
//
// Each stage's trace follows its rank's order under the plan's schedule:
// Megatron-LM's 1F1B / interleaved order (pass_order.h) with the steady state
// cut to kSteadyCycles cycles (compressed_micro_batches), or the zero-bubble /
// DualPipe order of the time model's generator (time/schedule_orders.h, handed
// over in ScheduleInFlight), whole: those orders have no repeating cycle the
// compression could cut, so a long one falls to layer granularity and past
// the bounds below to reserved = allocated, with a note;
// the allocator may reserve the usable capacity less the memory outside it, so
// its retry ladder (free the cache, then fail) plays out as on the GPU. For a
// stage it cannot serve, the least capacity it runs in is found by bisection
// (at most kNeedBisections replays): that is its need, and reserved_bytes is
// what it reserves there. The work is bounded (kReplayEventBudget).
#pragma once

#include <cstdint>
#include <vector>

#include "memory/allocation_trace.h"
#include "model/model_plan.h"
#include "model/schedule_in_flight.h"
#include "trainsim/result.h"
#include "trainsim/spec.h"

namespace trainsim {

inline constexpr int64_t kSteadyCycles = 2;
// Events of all stages' traces together before traces are folded to one tensor
// per layer, and the most one stage may replay even then (beyond it reserved
// memory is reported as the allocated peak, with a note).
inline constexpr int64_t kTraceEventBudget = 3'000'000;
inline constexpr int64_t kStageTraceEventLimit = 12'000'000;
// Events one estimate replays in all (about 1 s on one core; tests/cli/worst_inputs.py):
// stages are replayed largest need first while their traces fit, the others keep
// reserved = allocated (a lower bound; the estimate's notes name them). The need
// bisection of the stages that ran out of memory has a budget of its own.
inline constexpr int64_t kReplayEventBudget = 6'000'000;
inline constexpr int64_t kNeedEventBudget = 3'000'000;
inline constexpr int kNeedBisections = 8;
// The need is found to within this fraction of itself (or 64 MiB, the larger).
inline constexpr double kNeedTolerance = 1.0 / 512.0;

struct ReplayOptions {
  bool describe = true;          ///< name the reserved peak and the timeline passes
  int64_t timeline_points = -1;  ///< per stage; < 0: clamp(2048 / stages, 8, 64); 0: none
  /// A stage the allocator cannot serve: find by bisection the least capacity it
  /// runs in (its need; false: replay once without a limit, which counts the cache
  /// a real allocator would have freed on the way, so it overstates the need).
  bool find_need = true;
};

// The trace of one stage as the replay builds it (the events are not stored).
struct StageTracePlan {
  std::vector<PassStep> order;
  StageStatics statics;
  TraceGranularity granularity = TraceGranularity::kOp;
  double weight_kept_fraction = 0.0;  ///< StageTraceSpec's (orders with B passes)
  int64_t events = 0;
  bool replayable = true;
};

// The spec replay_stage_trace() / emit_stage_trace() take for trace `t` of `stage`.
StageTraceSpec stage_trace_spec(const ModelPlan& plan, size_t stage, const StageTracePlan& t);

// in_flight: the schedule's orders (model/schedule_in_flight.h), required for
// every schedule but 1f1b, whose Megatron orders are listed here (pass_order.h).
std::vector<StageTracePlan> plan_stage_traces(const Config& config, const ModelPlan& plan,
                                              const ScheduleInFlight* in_flight = nullptr);

// Without a replay: reserved = allocated (a lower bound), with the outside terms.
void lower_bound_reserved(const Config& config, std::vector<StageMemory>& stages);

void replay_stage_memory(const Config& config, const ModelPlan& plan,
                         std::vector<StageMemory>& stages, const ReplayOptions& options,
                         const ScheduleInFlight* in_flight = nullptr);

// Whether memory_verdict() would say "fits" after replay_stage_memory() (the
// search's question), the stages as lower_bound_reserved() leaves them: the
// same stages replayed in the same order within the same budget, but a stage's
// replay stops as soon as it cannot fit (FitsStop), and the first such stage
// ends it.
bool replayed_stages_fit(const Config& config, const ModelPlan& plan,
                         const std::vector<StageMemory>& stages, double headroom_fraction,
                         const ScheduleInFlight* in_flight = nullptr);

}  // namespace trainsim
