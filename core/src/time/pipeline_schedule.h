// Pipeline-parallel schedule simulator: per-stage, per-virtual-chunk forward and
// backward durations in, the step's pipeline makespan and a per-stage timeline out.
//
// Schedules (Megatron-LM megatron/core/pipeline_parallel/schedules.py):
// - vpp == 1: forward_backward_pipelining_without_interleaving (1F1B, warm-up
//   pp - rank - 1, arXiv:2104.04473 section 2.2.1), with blocking send/recv pairs;
// - vpp > 1: forward_backward_pipelining_with_interleaving (get_schedule_table,
//   get_pp_rank_microbatches) with blocking batched p2p (batch_isend_irecv);
// - pp == 1: forward_backward_no_pipelining, every pass back to back.
// The event replays follow SimuMax (MooreThreads/SimuMax,
// simumax/core/transformer/pipeline_schedule.py) as written down and checked
// against it in notes/time-spec.md sections 6.2 and 6.3.
#pragma once

#include <cstdint>
#include <vector>

namespace trainsim {

struct PhaseTimes {         // one micro-batch through one virtual chunk of one stage
  double forward_s = 0.0;   // compute + exposed in-layer comm of the forward pass
  double backward_s = 0.0;  // backward incl. recompute
};

struct StageP2pTimes {           // blocking p2p transfer durations seen by one stage
  double forward_recv_s = 0.0;   // activation from stage - 1
  double forward_send_s = 0.0;   // activation to stage + 1
  double backward_recv_s = 0.0;  // gradient from stage + 1
  double backward_send_s = 0.0;  // gradient to stage - 1
};

struct ScheduleInput {
  int64_t num_micro_batches = 1;
  int64_t microbatch_group_size = 0;            // interleaved only; 0 = pp (Megatron default)
  std::vector<std::vector<PhaseTimes>> phases;  // [stage][chunk]; pp = size(), vpp = [0].size()
  std::vector<StageP2pTimes> p2p;               // [stage], 1F1B only; empty = all zero
  double interleaved_p2p_s = 0.0;  // one transfer's duration in the interleaved schedule
  // EP overlap (Megatron-LM --overlap-moe-expert-parallel-comm, time/ep_overlap.h):
  // [stage][forward chunk * vpp + backward chunk] the time a merged forward+backward step
  // saves over the two passes one after the other. Empty: passes never merge. Non-empty:
  // the sequential schedule (pp 1) runs micro-batch i + 1's forward merged with i's
  // backward (combined_1f1b.py combined_1f1b_schedule_for_no_pipelining) and the
  // interleaved one runs one extra warm-up forward (schedules.py get_pp_rank_microbatches)
  // and every steady-state forward/backward pair merged. vpp == 1 with pp > 1 is refused.
  // A merged step appears in the timeline as its forward then its backward, the step's
  // duration shared in proportion to the two passes.
  std::vector<std::vector<double>> merged_saving_s;
  // Interleaved only: Megatron-LM's overlap_p2p_comm (on unless --no-overlap-p2p-communication;
  // schedules.py forward_backward_pipelining_with_interleaving). Warm-up and cool-down keep
  // their blocking transfers; in the steady phase each pass posts its send and the next
  // pass's receive without waiting, and a pass waits only for the receive that carries its
  // own input (pp_pre_forward / pp_pre_backward).
  bool overlap_p2p = false;
  bool record_timeline = false;
};

enum class EventKind { kForward, kBackward, kSend, kRecv };

// One interval on one stage. micro_batch and chunk (virtual chunk on this stage)
// name the tensor that is computed or moved. Compute events of a stage never
// overlap each other nor a transfer; the transfers of one interleaved bundle run
// concurrently (batch_isend_irecv) and may overlap each other. Gaps are idle time.
struct TimelineEvent {
  EventKind kind = EventKind::kForward;
  int64_t micro_batch = 0;
  int64_t chunk = 0;
  double start_s = 0.0;
  double end_s = 0.0;
};

struct ScheduleResult {
  double makespan_s = 0.0;                           // max over stages of the stage's finish time
  std::vector<double> stage_finish_s;                // per stage
  std::vector<double> stage_saved_s;                 // per stage: merged steps' savings (EP overlap)
  // Interleaved with overlap_p2p only, per stage: the time it waited on transfers, each
  // wait counted up to one transfer's duration (the rest is waiting on the peer's compute).
  std::vector<double> stage_p2p_wait_s;
  std::vector<std::vector<TimelineEvent>> timeline;  // [stage], only when record_timeline
};

// True when the schedule is defined for these sizes. The interleaved replay
// (time-spec 6.3) matches transfers by (virtual stage, micro-batch); that
// pairing holds for Megatron's classic interleaved schedule, groups of exactly
// pp micro-batches and num_micro_batches a multiple of pp (the assertion older
// Megatron-LM made). Other group sizes deadlock the replay, so validation must
// reject them before simulate_pipeline is called.
bool pipeline_schedule_supported(int64_t pp, int64_t vpp, int64_t num_micro_batches,
                                 int64_t microbatch_group_size);

// Picks 1F1B (vpp == 1), the synchronous interleaved schedule (vpp > 1) or
// sequential execution (pp == 1). Precondition: phases is a non-empty
// rectangle, num_micro_batches >= 1, p2p is empty or has pp entries, and
// pipeline_schedule_supported(); a violation throws InternalError.
ScheduleResult simulate_pipeline(const ScheduleInput& input);

// A lower bound of simulate_pipeline's times without simulating. Clocks only
// wait and add pass times, and every pass of stage s runs after stage s
// received micro-batch 0 of chunk 0 (after stages 0..s-1 ran its forward);
// stage s's last pass is the backward of chunk 0 of the last micro-batch,
// which then runs through the backward of chunk 0 on stages s-1..0. So
//   makespan >= max over s of  sum_{r<s} F[r][0] + m * sum_c (F[s][c] + B[s][c])
//                              + sum_{r<s} B[r][0]
// in exact arithmetic (transfers only add; the simulator's rounding can differ
// by a few ulps). For equal stages without transfers this is the 1F1B makespan
// (m + pp - 1) (F + B). No timeline; stage_finish_s holds each stage's term.
// The strategy search uses it to skip simulating plans that cannot make its
// top K or Pareto front.
ScheduleResult pipeline_lower_bound(const ScheduleInput& input);

namespace detail {

// The individual schedules, exposed for tests.
ScheduleResult simulate_1f1b(const ScheduleInput& input);         // uses phases[s][0]
ScheduleResult simulate_interleaved(const ScheduleInput& input);  // any vpp >= 1, pp >= 2
ScheduleResult simulate_sequential(const ScheduleInput& input);   // pp == 1

}  // namespace detail
}  // namespace trainsim
