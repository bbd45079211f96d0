// What a pipeline schedule keeps alive on each rank at its activation peak,
// from the schedule's pass order (time/schedule_runner.h activation_peaks();
// estimate.cpp hands it from the time model to the memory model), and the
// order itself, for the allocation trace. Megatron's 1F1B and interleaved
// schedules need none: memory lists their orders itself (memory/pass_order.h).
#pragma once

#include <cstdint>
#include <vector>

#include "model/pass_step.h"

namespace trainsim {

// What one micro-batch's pass of a chunk holds beyond its stored activations at the
// pass's own peak (its working set, recompute included), forward and backward.
struct PassOverBytes {
  double forward = 0.0;
  double backward = 0.0;
};

struct RankInFlight {
  /// [chunk] micro-batches whose forward of that chunk started and whose
  /// backward (input gradient) has not ended, at the rank's peak.
  std::vector<int32_t> in_flight_per_chunk;
  /// [chunk] micro-batches past their B whose weight-gradient W is pending: a
  /// share weight_kept_fraction of their activations is still held.
  std::vector<int32_t> waiting_per_chunk;
  /// The moment of the largest live bytes plus the running pass's working set
  /// (time/schedule_runner.h ActivationPeak): counts then, and that pass.
  std::vector<int32_t> peak_alive;
  std::vector<int32_t> peak_waiting;
  int32_t running_chunk = -1;
  bool running_backward = false;
  /// The rank's passes in the order the time model's generator runs them, one
  /// step: F, B, W, BW; DualPipe's overlapped F&B as its F then its BW (the
  /// F's activation exists before the BW frees its own, as activation_peaks()
  /// counts it). The memory model's allocation trace replays it.
  std::vector<PassStep> order;
};

struct ScheduleInFlight {
  double weight_kept_fraction = 0.0;
  std::vector<RankInFlight> ranks;  ///< [rank]
};

}  // namespace trainsim
