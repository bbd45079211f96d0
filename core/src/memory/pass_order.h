// The order in which one pipeline rank runs its passes (forward, backward and,
// for split-backward schedules, the weight-gradient pass) over micro-batches and
// virtual chunks. The allocation trace (allocation_trace.h) is built from this
// order, so any schedule that can list its per-rank order gets a trace.
//
// PassKind and PassStep live in model/pass_step.h; the zero-bubble and DualPipe
// orders come from the time model's generators (time/schedule_orders.h) through
// ScheduleInFlight::ranks[r].order (model/schedule_in_flight.h).
//
// megatron_pass_order() lists Megatron-LM's orders: 1F1B
// (megatron/core/pipeline_parallel/schedules.py,
// forward_backward_pipelining_without_interleaving: min(pp - r - 1, m) warm-up
// forwards, then forward/backward pairs, then the remaining backwards) and
// interleaved 1F1B (forward_backward_pipelining_with_interleaving with
// get_schedule_table and get_pp_rank_microbatches: warm-up
// 2 (pp - r - 1) + (vpp - 1) * group forwards, at most all of them; the
// backward of table entry k runs chunk vpp - 1 - chunk(k)).
//
// EP overlap (--overlap-moe-expert-parallel-comm) leaves these orders as they are: it
// runs one warm-up forward more (W + 1) and then merges forward k + W + 1 with backward
// k layer by layer (combined_1f1b.py), so as a sequence of passes it is W + 1 forwards,
// then (B(k), F(k + W + 1)) pairs, which is the same list as W forwards then
// (F(k + W), B(k)) pairs. Inside a merged step the backward frees layer L-1-i while the
// forward stores layer i, so the live activations stay at the count these orders give
// plus one layer (not modelled: the trace and the estimate both leave it out).
#pragma once

#include <cstdint>
#include <vector>

#include "model/pass_step.h"

namespace trainsim {

// Megatron-LM's order on rank `stage` of `pp` with `vpp` chunks and `m`
// micro-batches (groups of `group` micro-batches per virtual stage; Megatron's
// default group is pp).
std::vector<PassStep> megatron_pass_order(int64_t pp, int64_t vpp, int64_t m, int64_t stage,
                                          int64_t group);

// The fewest micro-batches whose Megatron order on rank `stage` has the same
// warm-up and cool-down as with m and at least `cycles` whole steady-state
// cycles (1F1B: one forward/backward pair; interleaved: a group of pp
// micro-batches through every chunk). Steady cycles repeat the same
// allocations with other micro-batch ids, so a trace with a few of them
// reaches the caching allocator's fixed point (tests/memory/allocation_trace_test.cpp
// checks equal reserved memory against the full order); returns m when m is
// already that small.
int64_t compressed_micro_batches(int64_t pp, int64_t vpp, int64_t m, int64_t stage,
                                 int64_t cycles);

}  // namespace trainsim
