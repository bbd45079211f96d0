// The configured pipeline schedule over per-chunk times. Megatron-LM's 1F1B and
// interleaved 1F1B go through simulate_pipeline() (pipeline_schedule.h: its
// blocking p2p, validated against SimuMax); zero_bubble_h1/h2/v, dualpipe and
// dualpipe_v through their pass orders (schedule_orders.h) on the
// order-driven simulator (schedule_runner.h) with async p2p. Their backward
// splits into the input-gradient B and the weight-gradient W (ChunkTime's
// weight part); DualPipe's overlapped F&B pairs hide expert-parallel
// all-to-all behind the other pass's compute (overlapped_pair_s()).
#pragma once

#include <cstdint>
#include <vector>

#include "model/schedule_in_flight.h"
#include "time/chunk_time.h"
#include "trainsim/result.h"
#include "trainsim/spec.h"

namespace trainsim {

struct PipelineRunInput {
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  int64_t num_micro_batches = 1;
  std::vector<std::vector<ChunkTime>> chunks;  ///< [rank][chunk], one micro-batch each
  /// [rank]: the transfer between rank r and r + 1 (the last entry wraps to rank 0).
  std::vector<double> boundary_p2p_s;
  /// EP overlap (1f1b only): [rank][forward chunk * chunks + backward chunk] the time a
  /// merged forward+backward step saves (time/ep_overlap.h); empty = passes never merge.
  std::vector<std::vector<double>> merged_saving_s;
  /// Interleaved 1F1B (vpp > 1) only: Megatron-LM's overlap_p2p_comm (ScheduleInput).
  bool overlap_p2p = false;
  bool record_timeline = false;
};

struct PipelineRun {
  double makespan_s = 0.0;
  std::vector<double> finish_s;  ///< [rank] its last pass (or transfer) ends
  /// [rank] expert-parallel communication hidden by overlapped F&B pairs (the
  /// nominal pass times minus the pairs' durations): DualPipe's pairs and the merged
  /// steps of EP overlap; 0 otherwise.
  std::vector<double> hidden_ep_s;
  /// [rank] total duration of the p2p transfers the rank sends or receives, hidden or not.
  std::vector<double> transfer_s;
  /// [rank] the transfers' share the exposure is capped at: transfer_s, or with
  /// overlap_p2p the part of them the rank waited for.
  std::vector<double> p2p_s;
  std::vector<std::vector<TimelineSpan>> timeline;  ///< [rank], when recorded
};

// Micro-batches that pass through each chunk of a rank: all of them, except
// under DualPipe, where each direction carries half (dualpipe.py DualPipe.step).
int64_t micro_batches_per_chunk(PipelineSchedule schedule, int64_t num_micro_batches);

PipelineRun run_pipeline(const PipelineRunInput& input);

// A lower bound of run_pipeline()'s makespan without simulating (the strategy
// search). 1F1B: pipeline_lower_bound(). The others: a rank runs every one of
// its passes one at a time after the first forward of chunk 0 crossed the
// ranks before it (their chunk 0 is virtual stage r of the route entering at
// rank 0), so makespan >= max over r of sum_{q<r} F[q][0] + n * sum_c cost[r][c];
// for DualPipe cost leaves out the expert all-to-all an F&B pair may hide
// (an F&B takes at least the compute of its two passes) and the upstream term
// is dropped (half of its micro-batches enter at the last rank).
PipelineRun pipeline_run_lower_bound(const PipelineRunInput& input);

// The in-flight activation counts of the schedule's order at each rank's peak
// (memory/stage_memory.h) and each rank's order itself (rank_pass_steps(), the
// allocation trace's, memory/stage_replay.h), for every schedule but 1f1b. stored_bytes:
// [rank][chunk] bytes one micro-batch keeps (they pick the peak moment);
// pass_bytes: what its passes hold beyond them (the peak of bytes with its pass).
ScheduleInFlight schedule_in_flight(const Config& config,
                                    const std::vector<std::vector<double>>& stored_bytes,
                                    const std::vector<std::vector<PassOverBytes>>& pass_bytes = {});

}  // namespace trainsim
