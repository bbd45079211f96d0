// Megatron-LM's 1F1B and interleaved 1F1B as orders for schedule_runner.h, with
// its blocking p2p as explicit transfers. They are the op lists of the replays
// in pipeline_1f1b.cpp (build_ops, notes/time-spec.md section 6.2) and
// pipeline_interleaved.cpp (ProgramBuilder, time-spec section 6.3), so
// run_schedule() gives simulate_pipeline()'s times (schedule_runner_test.cpp
// checks it on random inputs). Sources, megatron/core/pipeline_parallel/schedules.py:
// forward_backward_pipelining_without_interleaving (warm-up pp - r - 1),
// forward_backward_pipelining_with_interleaving, get_schedule_table,
// get_pp_rank_microbatches, recv_tensor_from_previous_stage;
// forward_backward_no_pipelining for pp == 1.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "time/schedule_orders.h"

namespace trainsim::detail {
namespace {

constexpr int32_t kNone = -1;

// A transfer is named by its direction, destination virtual stage and
// micro-batch (time-spec 6.3); with vpp == 1 the virtual stage is the rank.
struct TransferRef {
  int32_t id = kNone;
  int32_t link = 0;
  int32_t micro_batch = 0;
  int32_t chunk = 0;  // of the virtual stage on this end
  bool send = false;
};

class MegatronBuilder {
 public:
  MegatronBuilder(ScheduleOrders& orders, int32_t vpp, bool explicit_p2p)
      : o_(orders),
        pp_(orders.pp),
        vpp_(vpp),
        m_(orders.num_micro_batches),
        num_v_(pp_ * vpp),
        num_steps_(m_ * vpp),
        explicit_(explicit_p2p) {
    // get_schedule_table with groups of pp micro-batches (schedule_supported()).
    for (int32_t lo = 0; lo < m_; lo += pp_) {
      const int32_t hi = std::min(m_, lo + pp_);
      for (int32_t c = 0; c < vpp_; ++c) {
        for (int32_t mb = lo; mb < hi; ++mb) {
          table_mb_.push_back(mb);
          table_chunk_.push_back(c);
        }
      }
    }
    o_.explicit_p2p = explicit_p2p;
    o_.num_transfers = explicit_p2p ? 2 * num_v_ * m_ : 0;
  }

  void build_1f1b(int32_t r);
  void build_interleaved(int32_t r);

 private:
  struct Ref {
    int32_t mb;
    int32_t v;  // virtual stage: chunk * pp + rank
  };

  Ref forward_ref(int32_t k) const { return {table_mb_[k], table_chunk_[k] * pp_ + rank_}; }
  Ref backward_ref(int32_t k) const {
    return {table_mb_[k], (vpp_ - 1 - table_chunk_[k]) * pp_ + rank_};
  }

  int32_t id(bool gradient, int32_t dst_v, int32_t mb) const {
    return ((gradient ? num_v_ : 0) + dst_v) * m_ + mb;
  }
  // Activations go v -> v + 1 over link v % pp, gradients v + 1 -> v over the same link.
  TransferRef send_next(const Ref& x) const {
    return {id(false, x.v + 1, x.mb), x.v % pp_, x.mb, x.v / pp_, true};
  }
  TransferRef recv_prev(const Ref& x) const {
    return {id(false, x.v, x.mb), (x.v - 1) % pp_, x.mb, x.v / pp_, false};
  }
  TransferRef send_prev(const Ref& x) const {
    return {id(true, x.v - 1, x.mb), (x.v - 1) % pp_, x.mb, x.v / pp_, true};
  }
  TransferRef recv_next(const Ref& x) const {
    return {id(true, x.v, x.mb), x.v % pp_, x.mb, x.v / pp_, false};
  }

  void pass(ActionKind kind, const Ref& x) {
    Action a;
    a.kind = kind;
    a.micro_batch = x.mb;
    a.chunk = x.v / pp_;
    out_->push_back(a);
  }

  // One batch_isend_irecv; entries with id kNone are left out.
  void bundle(std::initializer_list<TransferRef> transfers) {
    if (!explicit_) return;
    bool first = true;
    for (const TransferRef& t : transfers) {
      if (t.id == kNone) continue;
      Action a;
      a.kind = t.send ? ActionKind::kSend : ActionKind::kRecv;
      a.joined = !first;
      a.micro_batch = t.micro_batch;
      a.chunk = t.chunk;
      a.transfer = t.id;
      a.link = t.link;
      out_->push_back(a);
      first = false;
    }
  }

  // Megatron recv_tensor_from_previous_stage (only the boolean).
  bool need_recv(int32_t k, bool forward) const {
    const bool leading = forward ? rank_ == 0 : rank_ == pp_ - 1;
    if (!leading) return true;
    if (k < pp_ - 1) return false;
    const int32_t c = table_chunk_[(k - (pp_ - 1)) % num_steps_];
    return (forward ? c : vpp_ - 1 - c) != (forward ? vpp_ - 1 : 0);
  }

  ScheduleOrders& o_;
  const int32_t pp_, vpp_, m_, num_v_, num_steps_;
  const bool explicit_;
  std::vector<int32_t> table_mb_, table_chunk_;
  int32_t rank_ = 0;
  std::vector<Action>* out_ = nullptr;
};

// pipeline_1f1b.cpp build_ops: warm-up, steady F/B pairs whose transfers go
// send-then-recv on odd ranks and recv-then-send on even ones, cool-down.
void MegatronBuilder::build_1f1b(int32_t r) {
  rank_ = r;
  out_ = &o_.actions[static_cast<size_t>(r)];
  out_->reserve(static_cast<size_t>(explicit_ ? 6 * m_ + 2 : 2 * m_));
  const int32_t warmup = std::min(pp_ - r - 1, m_);
  const int32_t steady = m_ - warmup;
  const bool has_prev = r > 0;
  const bool has_next = r < pp_ - 1;
  auto recv_activation = [&](int32_t mb) {
    if (has_prev) bundle({recv_prev({mb, r})});
  };
  auto send_activation = [&](int32_t mb) {
    if (has_next) bundle({send_next({mb, r})});
  };
  auto recv_gradient = [&](int32_t mb) {
    if (has_next) bundle({recv_next({mb, r})});
  };
  auto send_gradient = [&](int32_t mb) {
    if (has_prev) bundle({send_prev({mb, r})});
  };
  auto in_parity_order = [&](auto&& send, auto&& recv) {
    if (r % 2 == 1) {
      send();
      recv();
    } else {
      recv();
      send();
    }
  };
  int32_t fwd = 0;
  int32_t bwd = 0;
  for (int32_t j = 0; j < warmup; ++j, ++fwd) {
    recv_activation(fwd);
    pass(ActionKind::kForward, {fwd, r});
    send_activation(fwd);
  }
  for (int32_t j = 0; j < steady; ++j, ++bwd) {
    if (j == 0) recv_activation(fwd);
    pass(ActionKind::kForward, {fwd, r});
    in_parity_order([&] { send_activation(fwd); }, [&] { recv_gradient(bwd); });
    ++fwd;
    pass(ActionKind::kBackwardWeight, {bwd, r});
    if (j == steady - 1) {
      send_gradient(bwd);
    } else {
      in_parity_order([&] { send_gradient(bwd); }, [&] { recv_activation(fwd); });
    }
  }
  for (int32_t j = 0; j < warmup; ++j, ++bwd) {
    recv_gradient(bwd);
    pass(ActionKind::kBackwardWeight, {bwd, r});
    send_gradient(bwd);
  }
}

// pipeline_interleaved.cpp ProgramBuilder::build_rank: after each compute step a
// bundle of the transfers Megatron posts there.
void MegatronBuilder::build_interleaved(int32_t r) {
  rank_ = r;
  out_ = &o_.actions[static_cast<size_t>(r)];
  out_->reserve(static_cast<size_t>(explicit_ ? 6 * num_steps_ + 2 : 2 * num_steps_));
  const TransferRef none;
  const int32_t warmup = std::min((pp_ - r - 1) * 2 + (vpp_ - 1) * pp_, num_steps_);
  const int32_t steady = num_steps_ - warmup;
  const int32_t last_v = num_v_ - 1;
  const bool first_rank = r == 0;
  const bool last_rank = r == pp_ - 1;
  if (!first_rank && forward_ref(0).v > 0) bundle({recv_prev(forward_ref(0))});
  for (int32_t k = 0; k < warmup; ++k) {
    const Ref f = forward_ref(k);
    pass(ActionKind::kForward, f);
    const bool recv = need_recv(k, true) && k != num_steps_ - 1;
    TransferRef rp = none, sn = none, rn = none;
    if (k + 1 < num_steps_ && (recv || (steady == 0 && first_rank)) && forward_ref(k + 1).v > 0) {
      rp = recv_prev(forward_ref(k + 1));
    }
    if (f.v < last_v) sn = send_next(f);
    if (k == warmup - 1 && steady > 0 && !last_rank && backward_ref(0).v < last_v) {
      rn = recv_next(backward_ref(0));
    }
    bundle({rp, sn, rn});
  }
  if (steady == 0 && !last_rank && backward_ref(0).v < last_v) bundle({recv_next(backward_ref(0))});
  for (int32_t j = 0; j < steady; ++j) {
    const int32_t fk = j + warmup;
    const Ref f = forward_ref(fk);
    const Ref b = backward_ref(j);
    pass(ActionKind::kForward, f);
    pass(ActionKind::kBackwardWeight, b);
    const bool recv_f = need_recv(fk, true) && j != steady - 1;
    const bool recv_b = need_recv(j, false);
    TransferRef sp = none, rp = none, sn = none, rn = none;
    if (b.v > 0) sp = send_prev(b);
    if (fk + 1 < num_steps_ && recv_f && forward_ref(fk + 1).v > 0)
      rp = recv_prev(forward_ref(fk + 1));
    if (f.v < last_v) sn = send_next(f);
    if (j + 1 < num_steps_ && recv_b && backward_ref(j + 1).v < last_v) {
      rn = recv_next(backward_ref(j + 1));
    }
    bundle({sp, rp, sn, rn});
  }
  for (int32_t k = steady; k < num_steps_; ++k) {
    const Ref b = backward_ref(k);
    pass(ActionKind::kBackwardWeight, b);
    const bool recv = need_recv(k, false) && k != num_steps_ - 1;
    TransferRef sp = none, rn = none;
    if (b.v > 0) sp = send_prev(b);
    if (k + 1 < num_steps_ && (recv || (steady == 0 && last_rank)) &&
        backward_ref(k + 1).v < last_v) {
      rn = recv_next(backward_ref(k + 1));
    }
    bundle({sp, rn});
  }
}

}  // namespace

ScheduleOrders megatron_orders(int32_t pp, int32_t vpp, int32_t m, bool explicit_p2p) {
  ScheduleOrders orders = megatron_placement(pp, vpp, m);
  if (pp == 1) {  // forward_backward_no_pipelining: every chunk forward, then backward
    std::vector<Action>& list = orders.actions[0];
    for (int32_t mb = 0; mb < m; ++mb) {
      for (int32_t c = 0; c < vpp; ++c) list.push_back({ActionKind::kForward, false, c, mb});
      for (int32_t c = vpp - 1; c >= 0; --c) {
        list.push_back({ActionKind::kBackwardWeight, false, c, mb});
      }
    }
    return orders;
  }
  MegatronBuilder builder(orders, vpp, explicit_p2p);
  for (int32_t r = 0; r < pp; ++r) {
    if (vpp == 1) {
      builder.build_1f1b(r);
    } else {
      builder.build_interleaved(r);
    }
  }
  return orders;
}

}  // namespace trainsim::detail
