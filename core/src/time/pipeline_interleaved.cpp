// Interleaved 1F1B (arXiv:2104.04473 section 2.2.2) as run by Megatron-LM
// forward_backward_pipelining_with_interleaving
// (megatron/core/pipeline_parallel/schedules.py) with blocking batched p2p:
// - get_schedule_table: groups of G micro-batches, each group runs through every
//   virtual chunk in turn;
// - get_pp_rank_microbatches: warm-up (pp - r - 1) * 2 + (vpp - 1) * G, capped at
//   m * vpp;
// - recv_tensor_from_previous_stage: the leading stage receives nothing for its
//   first pp - 1 steps nor when the aligned step on the ending stage is its last
//   chunk.
// The job lists and the event replay follow notes/time-spec.md section 6.3 (from
// SimuMax's blocking interleaved path): after each compute step a rank posts a
// bundle of sends/recvs that completes when all of them have met their peers; a
// transfer ends at max(both post times) + p2p.
// With overlap_p2p (Megatron-LM's default, --no-overlap-p2p-communication turns it
// off) the steady phase posts its transfers without waiting and a pass waits only
// for the receive carrying its input; warm-up and cool-down stay blocking
// (overlap_p2p_comm_warmup_flush, off by default, is not modelled).
// With EP overlap (ScheduleInput::merged_saving_s) the warm-up runs one forward more
// and each steady-state step's forward and backward run as one merged step
// (schedules.py combined_1f1b_schedule_for_interleaved_pipelining), with the same
// transfers after it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "time/pipeline_schedule.h"
#include "trainsim/issue.h"

namespace trainsim::detail {
namespace {

// Sizes and Megatron's schedule table (get_schedule_table): step k runs
// micro-batch table_mb[k] on chunk table_chunk[k].
struct Layout {
  explicit Layout(const ScheduleInput& input)
      : pp(static_cast<int32_t>(input.phases.size())),
        vpp(static_cast<int32_t>(input.phases.front().size())),
        m(static_cast<int32_t>(input.num_micro_batches)),
        group(static_cast<int32_t>(input.microbatch_group_size == 0 ? pp
                                                                    : input.microbatch_group_size)),
        num_virtual_stages(pp * vpp),
        num_steps(m * vpp),
        merged(!input.merged_saving_s.empty()),
        async(input.overlap_p2p) {
    // Transfer ids (2 * pp * vpp * m of them) are packed into 30 bits, see program.
    TRAINSIM_CHECK(int64_t{2} * pp * vpp * input.num_micro_batches < (int64_t{1} << 30),
                   "interleaved pipeline schedule: too many micro-batches for 30-bit transfer ids");
    table_mb.reserve(static_cast<size_t>(num_steps));
    table_chunk.reserve(static_cast<size_t>(num_steps));
    for (int32_t lo = 0; lo < m; lo += group) {
      const int32_t hi = std::min(m, lo + group);
      for (int32_t c = 0; c < vpp; ++c) {
        for (int32_t mb = lo; mb < hi; ++mb) {
          table_mb.push_back(mb);
          table_chunk.push_back(c);
        }
      }
    }
  }

  // A transfer is named by its direction, destination virtual stage and micro-batch
  // (time-spec 6.3); source and destination ranks follow from the virtual stage.
  uint32_t transfer_id(bool gradient, int32_t dst_v, int32_t mb) const {
    return static_cast<uint32_t>(((gradient ? num_virtual_stages : 0) + dst_v) * m + mb);
  }
  size_t num_ids() const { return 2 * static_cast<size_t>(num_virtual_stages) * m; }

  const int32_t pp, vpp, m, group, num_virtual_stages, num_steps;
  const bool merged;  ///< EP overlap: one more warm-up forward, steady steps merged
  const bool async;   ///< overlap_p2p: steady-phase transfers posted without waiting
  std::vector<int32_t> table_mb, table_chunk;
};

// A rank's job list as a stream of 32-bit words, so a replay touches little memory:
//   forward / backward of schedule step k:  tag | k
//   merged forward fk and backward bk:      tag | fk, then the word bk
//   bundle of n transfers:                  tag | n, then n words (id << 1) | is_send
//   the same posted without waiting:        tag | kAsync | n, then the n words
//   wait for a posted receive to arrive:    tag | kWait | 1, then its word
namespace program {
constexpr uint32_t kTagShift = 30;
constexpr uint32_t kForward = 0u << kTagShift;
constexpr uint32_t kBackward = 1u << kTagShift;
constexpr uint32_t kBundle = 2u << kTagShift;
constexpr uint32_t kMerged = 3u << kTagShift;
constexpr uint32_t kTagMask = 3u << kTagShift;
constexpr uint32_t kNoTransfer = ~0u;
constexpr uint32_t kAsync = 1u << 29;
constexpr uint32_t kWait = 1u << 28;
constexpr uint32_t kCountMask = kWait - 1;
}  // namespace program

// Builds the job lists of every rank (time-spec 6.3).
class ProgramBuilder {
 public:
  explicit ProgramBuilder(const Layout& layout) : l_(layout) {}

  std::vector<std::vector<uint32_t>> build() {
    std::vector<std::vector<uint32_t>> programs(static_cast<size_t>(l_.pp));
    for (int32_t r = 0; r < l_.pp; ++r) {
      out_ = &programs[r];
      out_->reserve(7 * static_cast<size_t>(l_.num_steps) + 4);
      build_rank(r);
    }
    return programs;
  }

 private:
  struct Ref {
    int32_t k;  // schedule step
    int32_t mb;
    int32_t v;  // virtual stage chunk * pp + rank
  };

  Ref forward_ref(int32_t k) const {
    return {k, l_.table_mb[k], l_.table_chunk[k] * l_.pp + rank_};
  }
  Ref backward_ref(int32_t k) const {
    return {k, l_.table_mb[k], (l_.vpp - 1 - l_.table_chunk[k]) * l_.pp + rank_};
  }

  int32_t chunk_id(int32_t k, bool forward) const {
    const int32_t c = l_.table_chunk[k % l_.num_steps];
    return forward ? c : l_.vpp - 1 - c;
  }

  // Megatron recv_tensor_from_previous_stage (only the boolean).
  bool need_recv(int32_t k, bool forward) const {
    const bool leading = forward ? rank_ == 0 : rank_ == l_.pp - 1;
    if (!leading) return true;
    if (k < l_.pp - 1) return false;
    return chunk_id(k - (l_.pp - 1), forward) != (forward ? l_.vpp - 1 : 0);
  }

  uint32_t word(bool gradient, int32_t dst_v, int32_t mb, bool is_send) const {
    return (l_.transfer_id(gradient, dst_v, mb) << 1) | (is_send ? 1u : 0u);
  }
  uint32_t send_next(const Ref& x) const { return word(false, x.v + 1, x.mb, true); }
  uint32_t recv_prev(const Ref& x) const { return word(false, x.v, x.mb, false); }
  uint32_t send_prev(const Ref& x) const { return word(true, x.v - 1, x.mb, true); }
  uint32_t recv_next(const Ref& x) const { return word(true, x.v, x.mb, false); }

  void compute(uint32_t tag, const Ref& x) { out_->push_back(tag | static_cast<uint32_t>(x.k)); }

  void bundle(std::initializer_list<uint32_t> transfers, uint32_t flags = 0) {
    const size_t header = out_->size();
    out_->push_back(program::kBundle | flags);
    for (const uint32_t t : transfers) {
      if (t != program::kNoTransfer) out_->push_back(t);
    }
    const size_t count = out_->size() - header - 1;
    if (count == 0) {
      out_->pop_back();
    } else {
      (*out_)[header] |= static_cast<uint32_t>(count);
    }
  }

  // overlap_p2p: posts the transfers without waiting; a receive among them is
  // waited for (wait()) just before the pass that consumes it.
  void post(std::initializer_list<uint32_t> transfers) { bundle(transfers, program::kAsync); }
  void wait(uint32_t& pending) {
    if (pending == program::kNoTransfer) return;
    out_->push_back(program::kBundle | program::kWait | 1u);
    out_->push_back(pending);
    pending = program::kNoTransfer;
  }

  // The four transfers of one steady-phase step (forward f, backward b): send the gradient
  // back, receive the next forward's input, send the activation on, receive the next
  // backward's gradient (schedules.py p2p_communication.send_forward_backward_recv_*).
  struct StepTransfers {
    uint32_t sp, rp, sn, rn;
  };
  StepTransfers steady_transfers(const Ref& f, const Ref& b, bool last) const;

  void build_rank(int32_t r);
  void steady_step_async(const Ref& f, const Ref& b, bool last, uint32_t& pending_rp,
                         uint32_t& pending_rn);

  const Layout& l_;
  int32_t rank_ = 0;
  std::vector<uint32_t>* out_ = nullptr;
};

void ProgramBuilder::build_rank(int32_t r) {
  using program::kNoTransfer;
  rank_ = r;
  const int32_t num_steps = l_.num_steps;
  // get_pp_rank_microbatches: one extra warm-up forward with overlap_moe_expert_parallel_comm.
  const int32_t warmup =
      std::min((l_.pp - r - 1) * 2 + (l_.vpp - 1) * l_.group + (l_.merged ? 1 : 0), num_steps);
  const int32_t steady = num_steps - warmup;
  const int32_t last_v = l_.num_virtual_stages - 1;
  uint32_t pending_rp = kNoTransfer, pending_rn = kNoTransfer;  // posted receives (overlap_p2p)
  const bool first_rank = r == 0;
  const bool last_rank = r == l_.pp - 1;
  if (!first_rank && forward_ref(0).v > 0) bundle({recv_prev(forward_ref(0))});
  for (int32_t k = 0; k < warmup; ++k) {
    const Ref f = forward_ref(k);
    compute(program::kForward, f);
    const bool has_next_step = k + 1 < num_steps;
    const bool recv = need_recv(k, true) && k != num_steps - 1;
    uint32_t rp = kNoTransfer, sn = kNoTransfer, rn = kNoTransfer;
    if (has_next_step && (recv || (steady == 0 && first_rank)) && forward_ref(k + 1).v > 0) {
      rp = recv_prev(forward_ref(k + 1));
    }
    if (f.v < last_v) sn = send_next(f);
    if (k == warmup - 1 && steady > 0 && !last_rank && backward_ref(0).v < last_v) {
      rn = recv_next(backward_ref(0));
    }
    if (l_.async) {  // schedules.py: the warm-up's last step posts the first gradient's receive
      bundle({rp, sn});
      post({rn});
      pending_rn = rn;
    } else {
      bundle({rp, sn, rn});
    }
  }
  if (steady == 0 && !last_rank && backward_ref(0).v < last_v) bundle({recv_next(backward_ref(0))});
  for (int32_t j = 0; j < steady; ++j) {
    const Ref f = forward_ref(j + warmup);
    const Ref b = backward_ref(j);
    if (l_.async) {
      steady_step_async(f, b, j == steady - 1, pending_rp, pending_rn);
      continue;
    }
    if (l_.merged) {
      compute(program::kMerged, f);
      out_->push_back(static_cast<uint32_t>(b.k));
    } else {
      compute(program::kForward, f);
      compute(program::kBackward, b);
    }
    const StepTransfers t = steady_transfers(f, b, j == steady - 1);
    bundle({t.sp, t.rp, t.sn, t.rn});
  }
  for (int32_t k = steady; k < num_steps; ++k) {
    const Ref b = backward_ref(k);
    wait(pending_rn);
    compute(program::kBackward, b);
    const bool has_next_step = k + 1 < num_steps;
    const bool recv = need_recv(k, false) && k != num_steps - 1;
    uint32_t sp = kNoTransfer, rn = kNoTransfer;
    if (b.v > 0) sp = send_prev(b);
    if (has_next_step && (recv || (steady == 0 && last_rank)) && backward_ref(k + 1).v < last_v) {
      rn = recv_next(backward_ref(k + 1));
    }
    bundle({sp, rn});
  }
}

// A steady-phase step under overlap_p2p (schedules.py pp_pre_forward, pp_post_forward,
// pp_pre_backward, pp_post_backward): wait for the forward's input, run it, post its send
// and the next forward's receive; the same for the backward. A merged step (EP overlap)
// waits for both inputs first and posts all four transfers after.
ProgramBuilder::StepTransfers ProgramBuilder::steady_transfers(const Ref& f, const Ref& b,
                                                               bool last) const {
  using program::kNoTransfer;
  const int32_t last_v = l_.num_virtual_stages - 1;
  const int32_t fk = f.k;
  const int32_t bk = b.k;
  StepTransfers t{kNoTransfer, kNoTransfer, kNoTransfer, kNoTransfer};
  if (b.v > 0) t.sp = send_prev(b);
  if (fk + 1 < l_.num_steps && need_recv(fk, true) && !last && forward_ref(fk + 1).v > 0) {
    t.rp = recv_prev(forward_ref(fk + 1));
  }
  if (f.v < last_v) t.sn = send_next(f);
  if (bk + 1 < l_.num_steps && need_recv(bk, false) && backward_ref(bk + 1).v < last_v) {
    t.rn = recv_next(backward_ref(bk + 1));
  }
  return t;
}

void ProgramBuilder::steady_step_async(const Ref& f, const Ref& b, bool last, uint32_t& pending_rp,
                                       uint32_t& pending_rn) {
  const auto [sp, rp, sn, rn] = steady_transfers(f, b, last);
  wait(pending_rp);
  if (l_.merged) {
    wait(pending_rn);
    compute(program::kMerged, f);
    out_->push_back(static_cast<uint32_t>(b.k));
    post({sn, rp, sp, rn});
  } else {
    compute(program::kForward, f);
    post({sn, rp});
    wait(pending_rn);
    compute(program::kBackward, b);
    post({sp, rn});
  }
  pending_rp = rp;
  pending_rn = rn;
}

// Timeline event of one side of a transfer; micro-batch and local chunk come from its id.
TimelineEvent transfer_event(const Layout& l, uint32_t id, bool is_send, double start_s,
                             double end_s) {
  const auto mb = static_cast<int32_t>(id % static_cast<uint32_t>(l.m));
  const auto stage_index = static_cast<int32_t>(id / static_cast<uint32_t>(l.m));
  const bool gradient = stage_index >= l.num_virtual_stages;
  const int32_t dst_v = stage_index - (gradient ? l.num_virtual_stages : 0);
  const int32_t own_v = is_send ? dst_v + (gradient ? 1 : -1) : dst_v;
  return {is_send ? EventKind::kSend : EventKind::kRecv, mb, own_v / l.pp, start_s, end_s};
}

// Replay state of one rank.
struct RankState {
  size_t pos = 0;  // next word of its program
  double clock_s = 0.0;
  bool blocked = false;  // asleep in a posted bundle, or (overlap_p2p) on a wait
  int32_t open = 0;      // unmatched transfers of that bundle
  double post_s = 0.0;   // when the bundle was posted: ready time of its transfers
  double bundle_end_s = 0.0;
  double p2p_wait_s = 0.0;  // overlap_p2p: waits on transfers, each up to one transfer
};

// overlap_p2p: what the replay knows of each transfer id. Before both sides posted,
// time_s is the first post's time; after, the transfer's end.
enum class TransferState : uint8_t { kNone, kPostedBlocking, kPostedAsync, kDone };

}  // namespace

ScheduleResult simulate_interleaved(const ScheduleInput& input) {
  constexpr int32_t kNobody = -1;
  const Layout layout(input);
  const std::vector<std::vector<uint32_t>> programs = ProgramBuilder(layout).build();
  const auto pp = static_cast<size_t>(layout.pp);
  const double p2p_s = input.interleaved_p2p_s;
  const bool record = input.record_timeline;

  std::vector<RankState> ranks(pp);
  std::vector<double> saved(pp, 0.0);
  std::vector<int32_t> waiting(layout.num_ids(), kNobody);  // rank that posted the id first
  // overlap_p2p only (empty otherwise): per id its state and time; after the match,
  // waiting[id] names the rank asleep on its wait, if any.
  std::vector<TransferState> state(layout.async ? layout.num_ids() : 0, TransferState::kNone);
  std::vector<double> time_s(layout.async ? layout.num_ids() : 0, 0.0);
  ScheduleResult result;
  if (record) {
    result.timeline.resize(pp);
    for (size_t r = 0; r < pp; ++r) result.timeline[r].reserve(programs[r].size());
  }
  // Time-spec 6.3 pops ranks from a heap keyed by their clocks. A bundle always
  // ends at max(its post time, the end of each of its transfers), and a transfer
  // ends at max(both post times) + p2p, so the processing order cannot change any
  // time; a plain worklist gives the same values. A rank runs until a bundle
  // still has unmatched transfers; the peer that matches the last one wakes it.
  std::vector<int32_t> runnable;
  runnable.reserve(2 * pp);
  for (size_t r = pp; r-- > 0;) runnable.push_back(static_cast<int32_t>(r));
  while (!runnable.empty()) {
    const auto r = static_cast<size_t>(runnable.back());
    runnable.pop_back();
    RankState& me = ranks[r];
    const std::vector<uint32_t>& prog = programs[r];
    if (me.blocked) {
      if (me.open > 0) continue;
      me.blocked = false;
      me.p2p_wait_s += std::min(std::max(0.0, me.bundle_end_s - me.clock_s), p2p_s);
      me.clock_s = std::max(me.clock_s, me.bundle_end_s);
    }
    while (me.pos < prog.size()) {
      const uint32_t head = prog[me.pos++];
      const uint32_t tag = head & program::kTagMask;
      const auto arg = static_cast<int32_t>(head & ~program::kTagMask);
      if (tag == program::kMerged) {
        const auto bk = static_cast<int32_t>(prog[me.pos++]);
        const int32_t f_chunk = layout.table_chunk[arg];
        const int32_t b_chunk = layout.vpp - 1 - layout.table_chunk[bk];
        const double saving_s = input.merged_saving_s[r][static_cast<size_t>(f_chunk * layout.vpp + b_chunk)];
        const double forward_s = input.phases[r][f_chunk].forward_s;
        const double backward_s = input.phases[r][b_chunk].backward_s;
        const double start_s = me.clock_s;
        me.clock_s += forward_s + backward_s - saving_s;
        saved[r] += saving_s;
        if (record) {  // the step shown as its forward then its backward, in proportion
          const double split_s =
              start_s + (forward_s + backward_s > 0.0 ? forward_s / (forward_s + backward_s) : 0.0) *
                            (me.clock_s - start_s);
          result.timeline[r].push_back({EventKind::kForward, layout.table_mb[arg], f_chunk, start_s, split_s});
          result.timeline[r].push_back({EventKind::kBackward, layout.table_mb[bk], b_chunk, split_s, me.clock_s});
        }
        continue;
      }
      if (tag != program::kBundle) {
        const bool forward = tag == program::kForward;
        const int32_t table_chunk = layout.table_chunk[arg];
        const int32_t chunk = forward ? table_chunk : layout.vpp - 1 - table_chunk;
        const PhaseTimes& phase = input.phases[r][chunk];
        const double start_s = me.clock_s;
        me.clock_s += forward ? phase.forward_s : phase.backward_s;
        if (record) {
          result.timeline[r].push_back({forward ? EventKind::kForward : EventKind::kBackward,
                                        layout.table_mb[arg], chunk, start_s, me.clock_s});
        }
        continue;
      }
      const auto count = static_cast<int32_t>(static_cast<uint32_t>(arg) & program::kCountMask);
      if ((static_cast<uint32_t>(arg) & program::kWait) != 0) {
        const uint32_t id = prog[me.pos] >> 1;
        if (state[id] != TransferState::kDone) {  // asleep until the sender posts
          TRAINSIM_CHECK(state[id] == TransferState::kPostedAsync && waiting[id] == static_cast<int32_t>(r),
                         "interleaved pipeline replay waits for a receive it never posted");
          me.pos -= 1;
          me.open = 0;
          me.bundle_end_s = me.clock_s;
          me.blocked = true;
          break;
        }
        me.pos += 1;
        me.p2p_wait_s += std::min(std::max(0.0, time_s[id] - me.clock_s), p2p_s);
        me.clock_s = std::max(me.clock_s, time_s[id]);
        continue;
      }
      const bool async = (static_cast<uint32_t>(arg) & program::kAsync) != 0;
      me.post_s = me.bundle_end_s = me.clock_s;
      me.open = async ? 0 : count;
      for (size_t end = me.pos + static_cast<size_t>(count); me.pos < end; ++me.pos) {
        const uint32_t id = prog[me.pos] >> 1;
        const int32_t peer_rank = waiting[id];
        if (peer_rank == kNobody) {
          waiting[id] = static_cast<int32_t>(r);
          if (layout.async) {
            state[id] = async ? TransferState::kPostedAsync : TransferState::kPostedBlocking;
            time_s[id] = me.clock_s;
          }
          continue;
        }
        TRAINSIM_CHECK(static_cast<size_t>(peer_rank) != r,
                       "interleaved pipeline replay matched a transfer with itself");
        waiting[id] = kNobody;
        RankState& peer = ranks[static_cast<size_t>(peer_rank)];
        const bool peer_async = layout.async && state[id] == TransferState::kPostedAsync;
        const double start_s = std::max(me.post_s, layout.async ? time_s[id] : peer.post_s);
        const double end_s = start_s + p2p_s;
        if (layout.async) {
          state[id] = TransferState::kDone;
          time_s[id] = end_s;
        }
        if (!async) {
          --me.open;
          me.bundle_end_s = std::max(me.bundle_end_s, end_s);
        }
        if (record && end_s > start_s) {
          const bool is_send = (prog[me.pos] & 1u) != 0;
          result.timeline[r].push_back(transfer_event(layout, id, is_send, start_s, end_s));
          result.timeline[peer_rank].push_back(
              transfer_event(layout, id, !is_send, start_s, end_s));
        }
        if (!peer_async) {
          peer.bundle_end_s = std::max(peer.bundle_end_s, end_s);
          if (--peer.open == 0) runnable.push_back(peer_rank);
        } else if (peer.blocked && peer.open == 0) {
          // An asynchronous poster asleep on a wait: it re-runs the wait, which passes
          // when this was its transfer and sleeps again otherwise.
          runnable.push_back(peer_rank);
        }
      }
      if (me.open > 0) {  // sleep until the peer of the last open transfer arrives
        me.blocked = true;
        break;
      }
      if (async) continue;
      me.p2p_wait_s += std::min(std::max(0.0, me.bundle_end_s - me.clock_s), p2p_s);
      me.clock_s = std::max(me.clock_s, me.bundle_end_s);
    }
  }
  result.stage_finish_s.resize(pp);
  result.stage_saved_s = saved;
  for (size_t r = 0; r < pp; ++r) {
    TRAINSIM_CHECK(ranks[r].pos == programs[r].size() && !ranks[r].blocked,
                   "interleaved pipeline replay deadlocked");
    result.stage_finish_s[r] = ranks[r].clock_s;
  }
  if (layout.async) {
    TRAINSIM_CHECK(std::all_of(waiting.begin(), waiting.end(), [](int32_t w) { return w == kNobody; }),
                   "interleaved pipeline replay left a transfer unmatched");
    for (const RankState& rank : ranks) result.stage_p2p_wait_s.push_back(rank.p2p_wait_s);
  }
  if (record) {
    // Only the transfers of one bundle can be out of start order: insertion sort.
    for (auto& events : result.timeline) {
      for (size_t i = 1; i < events.size(); ++i) {
        for (size_t j = i; j > 0 && events[j].start_s < events[j - 1].start_s; --j) {
          std::swap(events[j], events[j - 1]);
        }
      }
    }
  }
  result.makespan_s = *std::max_element(result.stage_finish_s.begin(), result.stage_finish_s.end());
  return result;
}

}  // namespace trainsim::detail
