#include "time/schedule_runner.h"

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "trainsim/issue.h"

namespace trainsim {
namespace {

bool is_transfer(const Action& a) {
  return a.kind == ActionKind::kSend || a.kind == ActionKind::kRecv;
}

const char* short_name(ActionKind kind) {
  static const char* kNames[] = {"F", "B", "W", "BW", "F&B", "send", "recv"};
  return kNames[static_cast<int>(kind)];
}

std::string describe(int32_t rank, size_t index, const Action& a) {
  return "rank " + std::to_string(rank) + " action " + std::to_string(index) + " (" +
         short_name(a.kind) + " micro-batch " + std::to_string(a.micro_batch) + " chunk " +
         std::to_string(a.chunk) + ")";
}

// Replays the orders (see schedule_runner.h). With input == nullptr every pass
// and transfer takes no time: the dry run of check_schedule_orders().
class Engine {
 public:
  Engine(const ScheduleOrders& orders, const ScheduleRunInput* input)
      : o_(orders),
        in_(input),
        num_keys_(static_cast<size_t>(orders.num_micro_batches) * static_cast<size_t>(orders.pp) *
                  static_cast<size_t>(orders.num_chunks)),
        slot_v_(static_cast<size_t>(orders.pp) * static_cast<size_t>(orders.num_chunks), -1),
        slot_route_(slot_v_.size(), -1),
        f_end_(num_keys_, -1.0),
        b_end_(num_keys_, -1.0),
        f_waiter_(num_keys_, -1),
        b_waiter_(num_keys_, -1),
        pending_(static_cast<size_t>(orders.num_transfers), {-1, 0}),
        ranks_(static_cast<size_t>(orders.pp)) {
    const int32_t v_count = o_.num_virtual_stages;
    for (size_t i = 0; i < o_.route_stages.size(); ++i) {
      const StageSlot& s = o_.route_stages[i];
      const auto slot = static_cast<size_t>(s.rank * o_.num_chunks + s.chunk);
      slot_v_[slot] = static_cast<int32_t>(i) % v_count;
      slot_route_[slot] = static_cast<int32_t>(i) / v_count;
    }
  }

  // Empty on success, else why the replay stopped.
  std::string run(ScheduleRun* out) {
    out_ = out;
    if (out_ != nullptr && in_->record_timeline) out_->timeline.resize(ranks_.size());
    for (int32_t r = o_.pp - 1; r >= 0; --r) runnable_.push_back(r);
    while (!runnable_.empty() && failure_.empty()) {
      const int32_t r = runnable_.back();
      runnable_.pop_back();
      advance(r);
    }
    if (!failure_.empty()) return failure_;
    for (int32_t r = 0; r < o_.pp; ++r) {
      const RankState& me = ranks_[static_cast<size_t>(r)];
      const auto& list = o_.actions[static_cast<size_t>(r)];
      if (me.blocked || me.pos < list.size()) {
        const size_t at = me.blocked ? me.bundle_pos : me.pos;
        return "pipeline schedule deadlocked: " + describe(r, at, list[at]) + " never runs";
      }
    }
    if (out_ != nullptr) fill(*out_);
    return {};
  }

 private:
  enum class Readiness { kReady, kBlocked, kDeadlock };

  struct RankState {
    size_t pos = 0;         // next action
    size_t bundle_pos = 0;  // first action of the bundle it waits in
    double clock_s = 0.0;
    double start_s = -1.0;  // first pass
    double busy_s = 0.0;
    bool blocked = false;  // in a posted bundle with unmatched transfers
    int32_t open = 0;      // unmatched transfers of that bundle
    double post_s = 0.0;
    double bundle_end_s = 0.0;
  };

  size_t key(int32_t mb, int32_t rank, int32_t chunk) const {
    return (static_cast<size_t>(mb) * static_cast<size_t>(o_.pp) + static_cast<size_t>(rank)) *
               static_cast<size_t>(o_.num_chunks) +
           static_cast<size_t>(chunk);
  }
  int32_t route_of(int32_t mb) const {
    return o_.route_of_micro_batch.empty() ? 0 : o_.route_of_micro_batch[static_cast<size_t>(mb)];
  }
  const StageSlot& stage(int32_t route, int32_t v) const {
    return o_.route_stages[static_cast<size_t>(route * o_.num_virtual_stages + v)];
  }
  double link_s(int32_t link) const {
    if (in_ == nullptr || in_->link_p2p_s.empty()) return 0.0;
    return in_->link_p2p_s[static_cast<size_t>(link)];
  }
  // Latency of the hop after `from`: nothing with explicit transfers or on one rank.
  double hop_s(const StageSlot& from) const {
    return o_.explicit_p2p || from.link_to_next < 0 ? 0.0 : link_s(from.link_to_next);
  }

  double pass_s(int32_t r, const Action& a) const {
    if (in_ == nullptr) return 0.0;
    const auto& costs = in_->passes[static_cast<size_t>(r)];
    const PassCosts& p = costs[static_cast<size_t>(a.chunk)];
    switch (a.kind) {
      case ActionKind::kForward:
        return p.forward_s;
      case ActionKind::kBackward:
        return p.backward_s;
      case ActionKind::kWeight:
        return p.weight_s;
      case ActionKind::kBackwardWeight:
        return p.backward_s + p.weight_s;
      case ActionKind::kOverlapped: {
        const PassCosts& b = costs[static_cast<size_t>(a.backward_chunk)];
        if (in_->overlapped_s.empty()) return p.forward_s + b.backward_s + b.weight_s;
        return in_->overlapped_s[static_cast<size_t>(r)]
                                [static_cast<size_t>(a.chunk * o_.num_chunks + a.backward_chunk)];
      }
      default:
        return 0.0;
    }
  }

  // Waits for ends[k] (+ latency); a pass of rank r never waits for its own rank.
  Readiness wait_for(std::vector<double>& ends, std::vector<int32_t>& waiters, size_t k,
                     int32_t owner, int32_t r, double latency_s, double& t) {
    if (ends[k] >= 0.0) {
      t = std::max(t, ends[k] + latency_s);
      return Readiness::kReady;
    }
    if (owner == r) return Readiness::kDeadlock;  // comes later in its own order
    if (waiters[k] >= 0 && waiters[k] != r) {
      failure_ = "pipeline schedule: two ranks wait for the same pass";
      return Readiness::kDeadlock;
    }
    waiters[k] = r;
    return Readiness::kBlocked;
  }

  // The (micro-batch, chunk) exists and the chunk lies on the micro-batch's route.
  bool placed(int32_t r, int32_t mb, int32_t chunk) const {
    if (mb < 0 || mb >= o_.num_micro_batches || chunk < 0 || chunk >= o_.num_chunks) return false;
    const auto slot = static_cast<size_t>(r * o_.num_chunks + chunk);
    return slot_v_[slot] >= 0 && slot_route_[slot] == route_of(mb);
  }

  bool in_range(int32_t r, const Action& a) const {
    if (is_transfer(a)) {
      return a.transfer >= 0 && a.transfer < o_.num_transfers && a.link >= 0 && a.link < o_.pp;
    }
    return placed(r, a.micro_batch, a.chunk) &&
           (a.kind != ActionKind::kOverlapped ||
            placed(r, a.backward_micro_batch, a.backward_chunk));
  }

  // The backward half of a (mb, chunk) on rank r: after its own F and the next B.
  Readiness backward_ready(int32_t r, int32_t mb, int32_t chunk, double& t) {
    Readiness s = wait_for(f_end_, f_waiter_, key(mb, r, chunk), r, r, 0.0, t);
    const int32_t v = slot_v_[static_cast<size_t>(r * o_.num_chunks + chunk)];
    if (s != Readiness::kReady || v + 1 >= o_.num_virtual_stages) return s;
    const int32_t route = route_of(mb);
    const StageSlot& next = stage(route, v + 1);
    return wait_for(b_end_, b_waiter_, key(mb, next.rank, next.chunk), next.rank, r,
                    hop_s(stage(route, v)), t);
  }

  Readiness ready(int32_t r, const Action& a, double& t) {
    t = ranks_[static_cast<size_t>(r)].clock_s;
    const bool pair = a.kind == ActionKind::kOverlapped;
    if (a.kind == ActionKind::kForward || pair) {
      const int32_t v = slot_v_[static_cast<size_t>(r * o_.num_chunks + a.chunk)];
      if (v > 0) {
        const StageSlot& prev = stage(route_of(a.micro_batch), v - 1);
        const Readiness s = wait_for(f_end_, f_waiter_, key(a.micro_batch, prev.rank, prev.chunk),
                                     prev.rank, r, hop_s(prev), t);
        if (s != Readiness::kReady) return s;
      }
      if (!pair) return Readiness::kReady;
      return backward_ready(r, a.backward_micro_batch, a.backward_chunk, t);
    }
    if (a.kind == ActionKind::kWeight) {
      return wait_for(b_end_, b_waiter_, key(a.micro_batch, r, a.chunk), r, r, 0.0, t);
    }
    return backward_ready(r, a.micro_batch, a.chunk, t);
  }

  void finish(std::vector<double>& ends, std::vector<int32_t>& waiters, size_t k, double end_s) {
    ends[k] = end_s;
    if (waiters[k] >= 0) runnable_.push_back(waiters[k]);
    waiters[k] = -1;
  }

  void record(int32_t r, const Action& a, double start_s, double end_s) {
    if (out_ == nullptr || !in_->record_timeline) return;
    const bool pair = a.kind == ActionKind::kOverlapped;
    out_->timeline[static_cast<size_t>(r)].push_back(
        {a.kind, a.micro_batch, a.chunk, pair ? a.backward_micro_batch : -1,
         pair ? a.backward_chunk : -1, start_s, end_s});
  }

  // Runs the compute action at r's head; false when it must wait.
  bool run_pass(int32_t r, const Action& a) {
    double start_s = 0.0;
    const Readiness s = ready(r, a, start_s);
    if (s == Readiness::kDeadlock && failure_.empty()) {
      failure_ =
          "pipeline schedule deadlocked: " + describe(r, ranks_[static_cast<size_t>(r)].pos, a) +
          " waits for a pass later in its own order";
    }
    if (s != Readiness::kReady) return false;
    RankState& me = ranks_[static_cast<size_t>(r)];
    const double duration_s = pass_s(r, a);
    const double end_s = start_s + duration_s;
    if (a.kind == ActionKind::kForward || a.kind == ActionKind::kOverlapped) {
      finish(f_end_, f_waiter_, key(a.micro_batch, r, a.chunk), end_s);
    }
    if (a.kind == ActionKind::kBackward || a.kind == ActionKind::kBackwardWeight) {
      finish(b_end_, b_waiter_, key(a.micro_batch, r, a.chunk), end_s);
    }
    if (a.kind == ActionKind::kOverlapped) {
      finish(b_end_, b_waiter_, key(a.backward_micro_batch, r, a.backward_chunk), end_s);
    }
    if (me.start_s < 0.0) me.start_s = start_s;
    me.clock_s = end_s;
    me.busy_s += duration_s;
    record(r, a, start_s, end_s);
    return true;
  }

  // Posts the bundle of transfers at r's head (time-spec 6.3 semantics, see the
  // header); false when some transfer still waits for its other end.
  bool post_bundle(int32_t r) {
    RankState& me = ranks_[static_cast<size_t>(r)];
    const auto& list = o_.actions[static_cast<size_t>(r)];
    me.bundle_pos = me.pos;
    me.post_s = me.bundle_end_s = me.clock_s;
    me.open = 0;
    do {
      const Action& a = list[me.pos];
      auto& [peer, peer_pos] = pending_[static_cast<size_t>(a.transfer)];
      if (peer < 0) {
        peer = r;
        peer_pos = me.pos++;
        ++me.open;
        continue;
      }
      RankState& other = ranks_[static_cast<size_t>(peer)];
      const Action& b = o_.actions[static_cast<size_t>(peer)][peer_pos];
      if (peer == r || other.open <= 0 || b.kind == a.kind) {
        failure_ = "pipeline schedule: transfer " + std::to_string(a.transfer) + " of " +
                   describe(r, me.pos, a) + " has no matching other end";
        return false;
      }
      const double start_s = std::max(me.post_s, other.post_s);
      const double end_s = start_s + link_s(a.link);
      me.bundle_end_s = std::max(me.bundle_end_s, end_s);
      other.bundle_end_s = std::max(other.bundle_end_s, end_s);
      if (end_s > start_s) {
        record(r, a, start_s, end_s);
        record(peer, b, start_s, end_s);
      }
      if (--other.open == 0) runnable_.push_back(peer);
      peer = -1;
      ++me.pos;
    } while (me.pos < list.size() && is_transfer(list[me.pos]) && list[me.pos].joined);
    if (me.open > 0) {
      me.blocked = true;
      return false;
    }
    me.clock_s = std::max(me.clock_s, me.bundle_end_s);
    return true;
  }

  void advance(int32_t r) {
    RankState& me = ranks_[static_cast<size_t>(r)];
    if (me.blocked) {
      if (me.open > 0) return;
      me.blocked = false;
      me.clock_s = std::max(me.clock_s, me.bundle_end_s);
    }
    const auto& list = o_.actions[static_cast<size_t>(r)];
    while (me.pos < list.size()) {
      const Action& a = list[me.pos];
      if (!in_range(r, a)) {
        failure_ = "pipeline schedule: " + describe(r, me.pos, a) + " is out of range";
        return;
      }
      if (is_transfer(a)) {
        if (!post_bundle(r)) return;
        continue;
      }
      if (!run_pass(r, a)) return;
      ++me.pos;
    }
  }

  void fill(ScheduleRun& out) const {
    const auto pp = static_cast<size_t>(o_.pp);
    out.start_s.resize(pp);
    out.finish_s.resize(pp);
    out.busy_s.resize(pp);
    out.idle_s.resize(pp);
    for (size_t r = 0; r < pp; ++r) {
      const RankState& me = ranks_[r];
      out.start_s[r] = std::max(me.start_s, 0.0);
      out.finish_s[r] = me.clock_s;
      out.busy_s[r] = me.busy_s;
      out.makespan_s = std::max(out.makespan_s, me.clock_s);
      out.max_span_s = std::max(out.max_span_s, me.clock_s - out.start_s[r]);
    }
    for (size_t r = 0; r < pp; ++r) out.idle_s[r] = out.makespan_s - out.busy_s[r];
    for (auto& events : out.timeline) {
      std::stable_sort(events.begin(), events.end(),
                       [](const RunEvent& x, const RunEvent& y) { return x.start_s < y.start_s; });
    }
  }

  const ScheduleOrders& o_;
  const ScheduleRunInput* in_;
  ScheduleRun* out_ = nullptr;
  size_t num_keys_;
  std::vector<int32_t> slot_v_;        // [rank * num_chunks + chunk] -> virtual stage, -1 unused
  std::vector<int32_t> slot_route_;    // [rank * num_chunks + chunk] -> route
  std::vector<double> f_end_, b_end_;  // [key]; < 0: not run yet
  std::vector<int32_t> f_waiter_, b_waiter_;         // [key] rank blocked on it, -1 none
  std::vector<std::pair<int32_t, size_t>> pending_;  // [transfer] first poster, its action
  std::vector<RankState> ranks_;
  std::vector<int32_t> runnable_;
  std::string failure_;
};

}  // namespace

namespace detail {

std::string dry_run_schedule(const ScheduleOrders& orders) {
  return Engine(orders, nullptr).run(nullptr);
}

}  // namespace detail

ScheduleRun run_schedule(const ScheduleOrders& orders, const ScheduleRunInput& input) {
  const std::string shape = detail::check_schedule_shape(orders);
  TRAINSIM_CHECK(shape.empty(), "pipeline schedule: " + shape);
  const auto pp = static_cast<size_t>(orders.pp);
  const auto chunks = static_cast<size_t>(orders.num_chunks);
  TRAINSIM_CHECK(input.passes.size() == pp, "pipeline schedule: passes must have pp rows");
  for (const auto& row : input.passes) {
    TRAINSIM_CHECK(row.size() == chunks, "pipeline schedule: passes must have num_chunks columns");
  }
  TRAINSIM_CHECK(input.overlapped_s.empty() || input.overlapped_s.size() == pp,
                 "pipeline schedule: overlapped_s must be empty or have pp rows");
  for (const auto& row : input.overlapped_s) {
    TRAINSIM_CHECK(row.size() == chunks * chunks,
                   "pipeline schedule: overlapped_s rows need num_chunks^2 entries");
  }
  TRAINSIM_CHECK(input.link_p2p_s.empty() || input.link_p2p_s.size() == pp,
                 "pipeline schedule: link_p2p_s must be empty or have pp entries");
  ScheduleRun run;
  const std::string failure = Engine(orders, &input).run(&run);
  TRAINSIM_CHECK(failure.empty(), failure);
  run.activations = activation_peaks(orders, input.weight_kept_fraction);
  return run;
}

}  // namespace trainsim
