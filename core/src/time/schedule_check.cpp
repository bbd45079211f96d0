// check_schedule_orders, activation_peaks and the two small cost models of
// schedule_runner.h.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "time/schedule_runner.h"
#include "trainsim/issue.h"

namespace trainsim {
namespace {

std::string str(int64_t value) { return std::to_string(value); }

}  // namespace

namespace detail {

std::string check_schedule_shape(const ScheduleOrders& o) {
  if (o.pp < 1 || o.num_chunks < 1 || o.num_micro_batches < 1 || o.num_virtual_stages < 1 ||
      o.num_transfers < 0) {
    return "sizes must be positive";
  }
  if (int64_t{o.pp} * o.num_chunks * o.num_micro_batches > (int64_t{1} << 28)) {
    return "more than 2^28 passes";
  }
  if (o.actions.size() != static_cast<size_t>(o.pp)) return "expected one action list per rank";
  if (o.route_stages.empty() || o.route_stages.size() % o.num_virtual_stages != 0) {
    return "route_stages must hold whole routes";
  }
  const auto routes = static_cast<int32_t>(o.route_stages.size()) / o.num_virtual_stages;
  if (!o.route_of_micro_batch.empty() &&
      o.route_of_micro_batch.size() != static_cast<size_t>(o.num_micro_batches)) {
    return "route_of_micro_batch needs one entry per micro-batch";
  }
  for (const int32_t route : o.route_of_micro_batch) {
    if (route < 0 || route >= routes) return "route " + str(route) + " does not exist";
  }
  std::vector<char> used(static_cast<size_t>(o.pp) * static_cast<size_t>(o.num_chunks), 0);
  for (const StageSlot& s : o.route_stages) {
    if (s.rank < 0 || s.rank >= o.pp || s.chunk < 0 || s.chunk >= o.num_chunks ||
        s.link_to_next < -1 || s.link_to_next >= o.pp) {
      return "a stage slot is out of range";
    }
    char& slot = used[static_cast<size_t>(s.rank * o.num_chunks + s.chunk)];
    if (slot != 0) {
      return "rank " + str(s.rank) + " chunk " + str(s.chunk) + " holds two virtual stages";
    }
    slot = 1;
  }
  return {};
}

}  // namespace detail

namespace {

// Where each pass of each (micro-batch, rank, chunk) sits in its rank's order.
struct PassPositions {
  explicit PassPositions(size_t keys) : f(keys, -1), b(keys, -1), w(keys, -1), bw(keys, -1) {}
  std::vector<int64_t> f, b, w, bw;  // -1: absent
};

std::string check_actions(const ScheduleOrders& o) {
  std::vector<int32_t> slot_route(static_cast<size_t>(o.pp) * static_cast<size_t>(o.num_chunks),
                                  -1);
  for (size_t i = 0; i < o.route_stages.size(); ++i) {
    const StageSlot& s = o.route_stages[i];
    slot_route[static_cast<size_t>(s.rank * o.num_chunks + s.chunk)] =
        static_cast<int32_t>(i) / o.num_virtual_stages;
  }
  const size_t keys = slot_route.size() * static_cast<size_t>(o.num_micro_batches);
  PassPositions at(keys);
  std::vector<int32_t> sends(static_cast<size_t>(o.num_transfers), -1);
  std::vector<int32_t> recvs(static_cast<size_t>(o.num_transfers), -1);
  std::string failure;
  auto place = [&](std::vector<int64_t>& table, int32_t r, int32_t mb, int32_t chunk, int64_t pos,
                   const char* what) {
    if (mb < 0 || mb >= o.num_micro_batches || chunk < 0 || chunk >= o.num_chunks) {
      failure = "rank " + str(r) + " action " + str(pos) + ": micro-batch or chunk out of range";
      return;
    }
    const auto slot = static_cast<size_t>(r * o.num_chunks + chunk);
    const int32_t route = o.route_of_micro_batch.empty() ? 0 : o.route_of_micro_batch[mb];
    if (slot_route[slot] != route) {
      failure = "rank " + str(r) + " action " + str(pos) + ": chunk " + str(chunk) +
                " is not on the route of micro-batch " + str(mb);
      return;
    }
    int64_t& entry =
        table[slot * static_cast<size_t>(o.num_micro_batches) + static_cast<size_t>(mb)];
    if (entry >= 0) {
      failure = "rank " + str(r) + " runs " + what + " of micro-batch " + str(mb) + " chunk " +
                str(chunk) + " twice";
      return;
    }
    entry = pos;
  };
  for (int32_t r = 0; r < o.pp && failure.empty(); ++r) {
    const auto& list = o.actions[static_cast<size_t>(r)];
    for (size_t i = 0; i < list.size() && failure.empty(); ++i) {
      const Action& a = list[i];
      const auto pos = static_cast<int64_t>(i);
      switch (a.kind) {
        case ActionKind::kForward:
          place(at.f, r, a.micro_batch, a.chunk, pos, "F");
          break;
        case ActionKind::kBackward:
          place(at.b, r, a.micro_batch, a.chunk, pos, "B");
          break;
        case ActionKind::kWeight:
          place(at.w, r, a.micro_batch, a.chunk, pos, "W");
          break;
        case ActionKind::kBackwardWeight:
          place(at.bw, r, a.micro_batch, a.chunk, pos, "BW");
          break;
        case ActionKind::kOverlapped:
          place(at.f, r, a.micro_batch, a.chunk, pos, "F");
          if (failure.empty()) place(at.bw, r, a.backward_micro_batch, a.backward_chunk, pos, "BW");
          break;
        case ActionKind::kSend:
        case ActionKind::kRecv: {
          if (!o.explicit_p2p) return "transfer actions need explicit_p2p";
          if (a.transfer < 0 || a.transfer >= o.num_transfers || a.link < 0 || a.link >= o.pp) {
            return "rank " + str(r) + " action " + str(pos) + ": transfer or link out of range";
          }
          if (a.joined && (i == 0 || (list[i - 1].kind != ActionKind::kSend &&
                                      list[i - 1].kind != ActionKind::kRecv))) {
            return "rank " + str(r) + " action " + str(pos) + ": joined transfer opens no bundle";
          }
          auto& side = a.kind == ActionKind::kSend ? sends : recvs;
          if (side[static_cast<size_t>(a.transfer)] >= 0) {
            return "transfer " + str(a.transfer) + " has two ends of one kind";
          }
          side[static_cast<size_t>(a.transfer)] = r;
          break;
        }
      }
    }
  }
  if (!failure.empty()) return failure;
  for (size_t t = 0; t < sends.size(); ++t) {
    if (sends[t] < 0 && recvs[t] < 0) continue;  // ids may be left unused
    if (sends[t] < 0 || recvs[t] < 0 || sends[t] == recvs[t]) {
      return "transfer " + str(static_cast<int64_t>(t)) + " needs a send and a recv on two ranks";
    }
  }
  for (size_t k = 0; k < keys; ++k) {
    const bool unused = slot_route[k / static_cast<size_t>(o.num_micro_batches)] < 0;
    const auto mb = static_cast<int32_t>(k % static_cast<size_t>(o.num_micro_batches));
    const int32_t route = o.route_of_micro_batch.empty() ? 0 : o.route_of_micro_batch[mb];
    if (unused || slot_route[k / static_cast<size_t>(o.num_micro_batches)] != route) continue;
    const bool whole = at.bw[k] >= 0 && at.b[k] < 0 && at.w[k] < 0;
    const bool split = at.bw[k] < 0 && at.b[k] >= 0 && at.w[k] >= 0;
    const auto slot = static_cast<int64_t>(k / static_cast<size_t>(o.num_micro_batches));
    const std::string where = "micro-batch " + str(mb) + " on rank " + str(slot / o.num_chunks) +
                              " chunk " + str(slot % o.num_chunks);
    if (at.f[k] < 0 || !(whole || split)) {
      return where + " needs one F and either one BW or one B and one W";
    }
    const int64_t backward = whole ? at.bw[k] : at.b[k];
    if (backward <= at.f[k] || (split && at.w[k] <= at.b[k])) {
      return where + ": its passes must run in the order F, B, W";
    }
  }
  return {};
}

}  // namespace

std::string check_schedule_orders(const ScheduleOrders& orders) {
  std::string failure = detail::check_schedule_shape(orders);
  if (failure.empty()) failure = check_actions(orders);
  if (failure.empty()) failure = detail::dry_run_schedule(orders);
  return failure;
}

std::vector<ActivationPeak> activation_peaks(
    const ScheduleOrders& orders, double weight_kept_fraction,
    const std::vector<std::vector<double>>& chunk_weights,
    const std::vector<std::vector<PassOverBytes>>& pass_bytes) {
  const auto chunks = static_cast<size_t>(orders.num_chunks);
  TRAINSIM_CHECK(chunk_weights.empty() || chunk_weights.size() == orders.actions.size(),
                 "activation peaks: chunk_weights must be empty or have one row per rank");
  std::vector<ActivationPeak> peaks(orders.actions.size());
  for (size_t r = 0; r < orders.actions.size(); ++r) {
    std::vector<double> weight(chunks, 1.0);
    if (!chunk_weights.empty()) {
      TRAINSIM_CHECK(chunk_weights[r].size() == chunks,
                     "activation peaks: chunk_weights rows need num_chunks entries");
      weight = chunk_weights[r];
    }
    TRAINSIM_CHECK(pass_bytes.empty() || (pass_bytes.size() == orders.actions.size() &&
                                          pass_bytes[r].size() == chunks),
                   "activation peaks: pass_bytes must have [rank][chunk] entries");
    std::vector<int32_t> alive(chunks, 0), waiting(chunks, 0);
    ActivationPeak& peak = peaks[r];
    peak.in_flight_per_chunk.assign(chunks, 0);
    peak.waiting_per_chunk.assign(chunks, 0);
    peak.max_in_flight_per_chunk.assign(chunks, 0);
    double live = 0.0;
    auto at = [&](int32_t chunk) {
      TRAINSIM_CHECK(chunk >= 0 && static_cast<size_t>(chunk) < chunks,
                     "activation peaks: chunk out of range");
      return static_cast<size_t>(chunk);
    };
    // The running pass on top of what is live (its own micro-batch counted in alive).
    auto running = [&](size_t c, bool backward) {
      if (pass_bytes.empty()) return;
      const double bytes = live + (backward ? pass_bytes[r][c].backward : pass_bytes[r][c].forward);
      if (peak.running_chunk < 0 || bytes > peak.peak_bytes) {
        peak.peak_bytes = bytes;
        peak.peak_alive = alive;
        peak.peak_waiting = waiting;
        peak.running_chunk = static_cast<int32_t>(c);
        peak.running_backward = backward;
      }
    };
    // An F start is the only event that adds memory, so peaks happen right after one.
    auto forward = [&](int32_t chunk) {
      const size_t c = at(chunk);
      live += weight[c];
      ++alive[c];
      running(c, false);
      peak.max_in_flight_per_chunk[c] = std::max(peak.max_in_flight_per_chunk[c], alive[c]);
      if (live > peak.live + 1e-12 * std::max(1.0, peak.live)) {
        peak.live = live;
        peak.in_flight_per_chunk = alive;
        peak.waiting_per_chunk = waiting;
      }
    };
    for (const Action& a : orders.actions[r]) {
      switch (a.kind) {
        case ActionKind::kForward:
          forward(a.chunk);
          break;
        case ActionKind::kBackward:
          running(at(a.chunk), true);
          live -= weight[at(a.chunk)] * (1.0 - weight_kept_fraction);
          --alive[at(a.chunk)];
          ++waiting[at(a.chunk)];
          break;
        case ActionKind::kWeight:
          live -= weight[at(a.chunk)] * weight_kept_fraction;
          --waiting[at(a.chunk)];
          break;
        case ActionKind::kBackwardWeight:
          running(at(a.chunk), true);
          live -= weight[at(a.chunk)];
          --alive[at(a.chunk)];
          break;
        case ActionKind::kOverlapped:  // the F's activation exists before the BW frees its own
          forward(a.chunk);
          running(at(a.backward_chunk), true);
          live -= weight[at(a.backward_chunk)];
          --alive[at(a.backward_chunk)];
          break;
        case ActionKind::kSend:
        case ActionKind::kRecv:
          break;
      }
    }
    for (size_t c = 0; c < chunks; ++c) {
      peak.in_flight += peak.in_flight_per_chunk[c];
      peak.waiting_for_weight += peak.waiting_per_chunk[c];
    }
  }
  return peaks;
}

std::vector<PassStep> rank_pass_steps(const std::vector<Action>& actions) {
  std::vector<PassStep> steps;
  steps.reserve(actions.size());
  for (const Action& a : actions) {
    switch (a.kind) {
      case ActionKind::kForward:
        steps.push_back({PassKind::kForward, a.chunk, a.micro_batch});
        break;
      case ActionKind::kBackward:
        steps.push_back({PassKind::kBackward, a.chunk, a.micro_batch});
        break;
      case ActionKind::kWeight:
        steps.push_back({PassKind::kWeight, a.chunk, a.micro_batch});
        break;
      case ActionKind::kBackwardWeight:
        steps.push_back({PassKind::kBackwardWeight, a.chunk, a.micro_batch});
        break;
      case ActionKind::kOverlapped:  // as activation_peaks(): the F first
        steps.push_back({PassKind::kForward, a.chunk, a.micro_batch});
        steps.push_back({PassKind::kBackwardWeight, a.backward_chunk, a.backward_micro_batch});
        break;
      case ActionKind::kSend:
      case ActionKind::kRecv:
        break;
    }
  }
  return steps;
}

double weight_kept_fraction(int64_t hidden_size, int64_t num_heads, int64_t seq_len) {
  TRAINSIM_CHECK(hidden_size > 0 && num_heads >= 0 && seq_len >= 0,
                 "weight_kept_fraction: sizes must be positive");
  const auto h = static_cast<double>(hidden_size);
  const double scores = 5.0 * static_cast<double>(num_heads) * static_cast<double>(seq_len);
  return 32.0 * h / (34.0 * h + scores);
}

double overlapped_pair_s(double forward_s, double forward_comm_s, double backward_s,
                         double backward_comm_s) {
  const double compute_s = (forward_s - forward_comm_s) + (backward_s - backward_comm_s);
  return std::max(compute_s, forward_comm_s + backward_comm_s);
}

}  // namespace trainsim
