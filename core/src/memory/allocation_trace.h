// The allocation trace of one pipeline stage: the ordered allocations and
// frees PyTorch's caching allocator sees on that GPU, built from the op walk
// (model/activation_walk.h) and the rank's order of passes (pass_order.h).
//
// Shape of the trace:
//   setup       the long-lived buffers (stage_statics.h: parameter and grad
//               buffers, fp32 master shards)
//   step 1      the passes in order; the first forward adds the workspaces, the
//               first backward TE's dummy wgrad tensors
//   optimizer   the first optimizer step makes the Adam moments
//   step 2      the passes again: the steady state every later step repeats
// Each op of a pass follows the walk exactly: forward, op i keeps its saved
// tensor (its activation cache, or a recomputed segment's checkpoint) and
// needs a transient working set of fwd_peak_bytes - saved; backward, it needs
// bwd_peak_bytes, then frees its saved tensor; a recomputed segment re-runs
// its forward (keeping the inner caches) right before its backward. So the
// trace's peak of requested bytes is the walk's peak (tested), and only the
// allocator's rounding, splitting and caching come on top.
//
// Modelling choices (each op's memory is what the op walk says, in at most
// three tensors): an op's saved bytes are one tensor and its working set one
// more; under an order with B and W passes (zero bubble, DualPipe's cool-down)
// the saved bytes are two tensors, the share weight_kept_fraction a B leaves
// for its W and the rest, which the B frees (the W frees the share), so the
// trace's peak is stage_memory's for these schedules too. TraceGranularity::kLayer folds each block
// (a layer) into one saved tensor and one working set: the same peak, fewer
// events, for traces that would be too long.
#pragma once

#include <cstdint>
#include <vector>

#include "memory/pass_order.h"
#include "memory/stage_statics.h"
#include "model/activation_walk.h"
#include "model/model_plan.h"

namespace trainsim {

enum class TraceSection : uint8_t { kSetup, kStep1, kOptimizerStep, kStep2 };
enum class TraceGranularity : uint8_t { kOp, kLayer };

// Where the events after it come from.
struct TraceLabel {
  TraceSection section = TraceSection::kSetup;
  PassKind pass = PassKind::kForward;
  int32_t chunk = -1;
  int32_t micro_batch = -1;
  int32_t block = -1;  ///< plan block id; -1: a long-lived buffer
  int32_t op = -1;     ///< index into the block's ops (-1: the whole block)
  int64_t layer = -1;  ///< global index of the layer (-1: embedding, head or none)
  WalkPhase phase = WalkPhase::kForward;
  const char* buffer = "";  ///< the long-lived buffer's name (block == -1)
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void allocate(int64_t id, int64_t bytes) = 0;
  virtual void release(int64_t id) = 0;
  virtual void label(const TraceLabel& label) = 0;
};

struct StageTraceSpec {
  const ModelPlan* plan = nullptr;
  size_t stage = 0;
  const StageStatics* statics = nullptr;
  std::vector<PassStep> order;  ///< one step of this rank
  TraceGranularity granularity = TraceGranularity::kOp;
  /// Orders with B passes: the share of each saved tensor a B leaves for its W
  /// (ScheduleInFlight::weight_kept_fraction, what stage_memory counts).
  double weight_kept_fraction = 0.0;
};

// Events the trace holds (the same count emit_stage_trace() sends), O(blocks + passes).
int64_t stage_trace_events(const StageTraceSpec& spec);

void emit_stage_trace(const StageTraceSpec& spec, TraceSink& sink);

}  // namespace trainsim
