// Non-interleaved 1F1B (PipeDream-Flush, arXiv:2104.04473 section 2.2.1) as run by
// Megatron-LM forward_backward_pipelining_without_interleaving
// (megatron/core/pipeline_parallel/schedules.py): rank r does
// min(pp - r - 1, m) warm-up forwards, m - warm-up steady forward/backward pairs,
// then the remaining backwards. Transfers are blocking send/recv pairs; in the
// steady phase the two transfers between F and B go send-then-recv on odd ranks
// and recv-then-send on even ranks (the order SimuMax uses to stay deadlock-free).
// Replay per notes/time-spec.md section 6.2: a matched pair moves both ranks to
// max(ready) + max(durations).
//
// One deliberate difference from SimuMax: SimuMax drops a transfer whose phase
// time is 0, which also drops the data dependency. Here every transfer between
// neighbouring stages exists and synchronizes, so zero p2p time still yields the
// (m + pp - 1) pipeline. With positive interior p2p times (always the case in
// SimuMax) both give the same result.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "time/pipeline_schedule.h"
#include "trainsim/issue.h"

namespace trainsim::detail {
namespace {

enum class OpKind : uint8_t { kForward, kBackward, kSend, kRecv };
enum class Direction : uint8_t { kActivation, kGradient };  // activations go to r + 1

struct Op {  // 8 bytes: the peer and the duration follow from kind and direction
  OpKind kind;
  Direction direction;  // transfers only
  int32_t micro_batch;
};

bool is_compute(const Op& op) {
  return op.kind == OpKind::kForward || op.kind == OpKind::kBackward;
}

int32_t peer_of(const Op& op, int32_t rank) {
  const bool toward_next = (op.direction == Direction::kActivation) == (op.kind == OpKind::kSend);
  return toward_next ? rank + 1 : rank - 1;
}

double duration_s(const Op& op, const PhaseTimes& phase, const StageP2pTimes& p2p) {
  const bool activation = op.direction == Direction::kActivation;
  switch (op.kind) {
    case OpKind::kForward:
      return phase.forward_s;
    case OpKind::kBackward:
      return phase.backward_s;
    case OpKind::kSend:
      return activation ? p2p.forward_send_s : p2p.backward_send_s;
    case OpKind::kRecv:
      return activation ? p2p.forward_recv_s : p2p.backward_recv_s;
  }
  return 0.0;
}

// The op list of rank r (time-spec 6.2).
std::vector<Op> build_ops(int32_t pp, int32_t m, int32_t r) {
  const int32_t warmup = std::min(pp - r - 1, m);
  const int32_t steady = m - warmup;
  std::vector<Op> ops;
  ops.reserve(6 * static_cast<size_t>(m));
  const bool has_prev = r > 0;
  const bool has_next = r < pp - 1;
  auto compute = [&](OpKind kind, int32_t mb) {
    ops.push_back({kind, Direction::kActivation, mb});
  };
  auto recv_activation = [&](int32_t mb) {
    if (has_prev) ops.push_back({OpKind::kRecv, Direction::kActivation, mb});
  };
  auto send_activation = [&](int32_t mb) {
    if (has_next) ops.push_back({OpKind::kSend, Direction::kActivation, mb});
  };
  auto recv_gradient = [&](int32_t mb) {
    if (has_next) ops.push_back({OpKind::kRecv, Direction::kGradient, mb});
  };
  auto send_gradient = [&](int32_t mb) {
    if (has_prev) ops.push_back({OpKind::kSend, Direction::kGradient, mb});
  };
  auto pair = [&](auto&& send, auto&& recv) {
    if (r % 2 == 1) {
      send();
      recv();
    } else {
      recv();
      send();
    }
  };
  int32_t fwd_mb = 0;
  int32_t bwd_mb = 0;
  for (int32_t j = 0; j < warmup; ++j, ++fwd_mb) {
    recv_activation(fwd_mb);
    compute(OpKind::kForward, fwd_mb);
    send_activation(fwd_mb);
  }
  for (int32_t j = 0; j < steady; ++j, ++bwd_mb) {
    if (j == 0) recv_activation(fwd_mb);
    compute(OpKind::kForward, fwd_mb);
    pair([&] { send_activation(fwd_mb); }, [&] { recv_gradient(bwd_mb); });
    ++fwd_mb;
    compute(OpKind::kBackward, bwd_mb);
    if (j == steady - 1) {
      send_gradient(bwd_mb);
    } else {
      pair([&] { send_gradient(bwd_mb); }, [&] { recv_activation(fwd_mb); });
    }
  }
  for (int32_t j = 0; j < warmup; ++j, ++bwd_mb) {
    recv_gradient(bwd_mb);
    compute(OpKind::kBackward, bwd_mb);
    send_gradient(bwd_mb);
  }
  return ops;
}

EventKind event_kind(OpKind kind) {
  switch (kind) {
    case OpKind::kForward:
      return EventKind::kForward;
    case OpKind::kBackward:
      return EventKind::kBackward;
    case OpKind::kSend:
      return EventKind::kSend;
    case OpKind::kRecv:
      return EventKind::kRecv;
  }
  return EventKind::kForward;
}

// The other end of op's transfer (the peer's op names the same tensor).
bool matches(const Op& op, const Op& peer_op) {
  return !is_compute(peer_op) && peer_op.kind != op.kind && peer_op.direction == op.direction &&
         peer_op.micro_batch == op.micro_batch;
}

}  // namespace

ScheduleResult simulate_1f1b(const ScheduleInput& input) {
  const auto pp = static_cast<int32_t>(input.phases.size());
  TRAINSIM_CHECK(input.num_micro_batches < (int64_t{1} << 31), "1F1B: too many micro-batches");
  const auto m = static_cast<int32_t>(input.num_micro_batches);
  const bool record = input.record_timeline;
  std::vector<std::vector<Op>> ops(static_cast<size_t>(pp));
  std::vector<StageP2pTimes> p2p(static_cast<size_t>(pp));
  for (int32_t r = 0; r < pp; ++r) {
    ops[r] = build_ops(pp, m, r);
    if (!input.p2p.empty()) p2p[r] = input.p2p[r];
  }
  std::vector<size_t> pos(static_cast<size_t>(pp), 0);
  std::vector<double> clock_s(static_cast<size_t>(pp), 0.0);
  ScheduleResult result;
  if (record) {
    result.timeline.resize(static_cast<size_t>(pp));
    for (int32_t r = 0; r < pp; ++r) result.timeline[r].reserve(ops[r].size());
  }
  // Each rank's clock sees a fixed sequence of updates, so the processing order
  // does not change the result (time-spec 6.2). A rank runs until its head is a
  // transfer whose peer is not there yet; the peer completes the pair on arrival
  // and wakes it.
  std::vector<int32_t> runnable;
  runnable.reserve(2 * static_cast<size_t>(pp));
  for (int32_t r = pp - 1; r >= 0; --r) runnable.push_back(r);
  while (!runnable.empty()) {
    const int32_t r = runnable.back();
    runnable.pop_back();
    const PhaseTimes& phase = input.phases[r][0];
    while (pos[r] < ops[r].size()) {
      const Op& op = ops[r][pos[r]];
      const double op_s = duration_s(op, phase, p2p[r]);
      if (is_compute(op)) {
        const double start_s = clock_s[r];
        clock_s[r] += op_s;
        if (record)
          result.timeline[r].push_back(
              {event_kind(op.kind), op.micro_batch, 0, start_s, clock_s[r]});
        ++pos[r];
        continue;
      }
      const int32_t p = peer_of(op, r);
      if (pos[p] == ops[p].size() || !matches(op, ops[p][pos[p]])) break;
      const Op& peer_op = ops[p][pos[p]];
      const double start_s = std::max(clock_s[r], clock_s[p]);
      const double end_s =
          start_s + std::max(op_s, duration_s(peer_op, input.phases[p][0], p2p[p]));
      clock_s[r] = clock_s[p] = end_s;
      if (record && end_s > start_s) {
        result.timeline[r].push_back({event_kind(op.kind), op.micro_batch, 0, start_s, end_s});
        result.timeline[p].push_back(
            {event_kind(peer_op.kind), peer_op.micro_batch, 0, start_s, end_s});
      }
      ++pos[r];
      ++pos[p];
      runnable.push_back(p);
    }
  }
  for (int32_t r = 0; r < pp; ++r) {
    TRAINSIM_CHECK(pos[r] == ops[r].size(), "1F1B replay deadlocked");
  }
  result.stage_finish_s = std::move(clock_s);
  result.makespan_s = *std::max_element(result.stage_finish_s.begin(), result.stage_finish_s.end());
  return result;
}

}  // namespace trainsim::detail
