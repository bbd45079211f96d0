// DualPipe and DualPipeV orders, step for step as DualPipe.step() and
// DualPipeV.step() run them (deepseek-ai/DualPipe dualpipe/dualpipe.py and
// dualpipe/dualpipev.py, "Step 1: nF0" ... "Step 8: nW"):
//   _forward_chunk(p)            F of phase p
//   _backward_chunk(p, zb)       BW, or B with its W queued (WeightGradStore) when zb
//   _weight_chunk()              W of the oldest queued B (FIFO)
//   _forward_backward_chunk(a,b) the overlapped F(a) & BW(b) (overlapped_forward_backward)
// Each phase (module) takes its micro-batches in order. The transfers are
// left to the async p2p model (DualPipe posts them with batch_isend_irecv and
// only waits before the next compute).
//
// DualPipe: rank r holds module 0 = stage r of the direction entering at rank 0
// and module 1 = stage pp - 1 - r of the direction entering at rank pp - 1; the
// step code's phase p means module p ^ (r >= pp / 2), so every rank runs the
// same program with half_rank = min(r, pp - 1 - r) on pp / 2 "half ranks" and m / 2
// micro-batches per direction. DualPipeV is the same program on a V
// (module 0 = virtual stage r, module 1 = 2 pp - 1 - r) with half_rank = r,
// pp half ranks and all m micro-batches; its special first step belongs to the
// last rank where DualPipe's belongs to the two middle ranks.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

#include "time/schedule_orders.h"

namespace trainsim::detail {
namespace {

class DualPipeRank {
 public:
  DualPipeRank(std::vector<Action>& out, bool flip_phases, int32_t second_module_first_mb)
      : out_(out), flip_(flip_phases), first_mb_{0, second_module_first_mb} {}

  // DualPipe.step() from "Step 1" to "Step 8" with H half ranks, this rank's
  // half_rank hr, n micro-batches per module, and whether it is the special rank.
  void emit(int32_t H, int32_t hr, int32_t n, bool special) {
    for (int32_t i = 0; i < (H - hr - 1) * 2; ++i) forward(0);  // 1: nF0
    for (int32_t i = 0; i < hr + 1; ++i) {                      // 2: nF0F1
      forward(0);
      forward(1);
    }
    for (int32_t i = 0; i < H - hr - 1; ++i) {  // 3: nB1W1F1
      backward(1, true);
      weight();
      forward(1);
    }
    for (int32_t i = 0; i < n - 2 * H + hr + 1; ++i) {  // 4: nF0B1F1B0
      if (i == 0 && special) {                          // "We don't overlap these two chunks"
        forward(0);
        backward(1, false);
      } else {
        overlapped(0, 1);
      }
      overlapped(1, 0);
    }
    for (int32_t i = 0; i < H - hr - 1; ++i) {  // 5: nB1F1B0
      backward(1, false);
      overlapped(1, 0);
    }
    const int32_t step_6 = hr + 1;  // 6: nB1B0, the second half with zero bubble
    bool zb = false;
    for (int32_t i = 0; i < step_6; ++i) {
      if (i == step_6 / 2 && hr % 2 == 1) zb = true;
      backward(1, zb);
      if (i == step_6 / 2 && hr % 2 == 0) zb = true;
      backward(0, zb);
    }
    for (int32_t i = 0; i < H - hr - 1; ++i) {  // 7: nWB0
      weight();
      backward(0, true);
    }
    for (int32_t i = 0; i < hr + 1; ++i) weight();  // 8: nW
  }

 private:
  int32_t module(int32_t phase) const { return flip_ ? 1 - phase : phase; }

  void forward(int32_t phase) {
    const int32_t c = module(phase);
    out_.push_back({ActionKind::kForward, false, c, first_mb_[c] + next_f_[c]++});
  }
  void backward(int32_t phase, bool zb) {
    const int32_t c = module(phase);
    const int32_t mb = first_mb_[c] + next_b_[c]++;
    out_.push_back({zb ? ActionKind::kBackward : ActionKind::kBackwardWeight, false, c, mb});
    if (zb) queued_.emplace_back(mb, c);
  }
  void weight() {
    const auto [mb, c] = queued_.front();
    queued_.pop_front();
    out_.push_back({ActionKind::kWeight, false, c, mb});
  }
  void overlapped(int32_t forward_phase, int32_t backward_phase) {
    const int32_t fc = module(forward_phase);
    const int32_t bc = module(backward_phase);
    Action a{ActionKind::kOverlapped, false, fc, first_mb_[fc] + next_f_[fc]++};
    a.backward_chunk = bc;
    a.backward_micro_batch = first_mb_[bc] + next_b_[bc]++;
    out_.push_back(a);
  }

  std::vector<Action>& out_;
  const bool flip_;
  const int32_t first_mb_[2];
  int32_t next_f_[2] = {0, 0};
  int32_t next_b_[2] = {0, 0};
  std::deque<std::pair<int32_t, int32_t>> queued_;  // WeightGradStore: (mb, chunk)
};

}  // namespace

ScheduleOrders dualpipe_orders(int32_t pp, int32_t m) {
  ScheduleOrders o;
  o.pp = pp;
  o.num_chunks = 2;
  o.num_micro_batches = m;
  o.num_virtual_stages = pp;
  o.actions.resize(static_cast<size_t>(pp));
  // Route 0 enters at rank 0 (module 0), route 1 at rank pp - 1 (module 1);
  // micro-batches 0 .. m/2 - 1 take route 0 (DualPipe.step scatters half to each end).
  for (int32_t v = 0; v < pp; ++v) {
    o.route_stages.push_back({v, 0, v + 1 < pp ? v : -1});
  }
  for (int32_t v = 0; v < pp; ++v) {
    o.route_stages.push_back({pp - 1 - v, 1, v + 1 < pp ? pp - 2 - v : -1});
  }
  o.route_of_micro_batch.assign(static_cast<size_t>(m), 0);
  for (int32_t mb = m / 2; mb < m; ++mb) o.route_of_micro_batch[static_cast<size_t>(mb)] = 1;
  const int32_t half = pp / 2;
  for (int32_t r = 0; r < pp; ++r) {
    const int32_t half_rank = std::min(r, pp - 1 - r);
    const bool middle = r == half - 1 || r == half;
    DualPipeRank(o.actions[static_cast<size_t>(r)], r >= half, m / 2)
        .emit(half, half_rank, m / 2, middle);
  }
  return o;
}

ScheduleOrders dualpipe_v_orders(int32_t pp, int32_t m) {
  ScheduleOrders o = v_placement(pp, m);
  for (int32_t r = 0; r < pp; ++r) {
    DualPipeRank(o.actions[static_cast<size_t>(r)], false, 0).emit(pp, r, m, r == pp - 1);
  }
  return o;
}

}  // namespace trainsim::detail
