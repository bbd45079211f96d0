// ZB-V orders: a port of the greedy V-schedule generator the zero-bubble runtime
// uses for --zero-bubble-v-schedule (sail-sg/zero-bubble-pipeline-parallelism,
// megatron/core/pipeline_parallel/zerobubble/scheduler/zbv.py,
// PipelineGraph.try_v_schedule and create_schedule). Each rank holds virtual
// stages r and 2 pp - 1 - r (the V of arXiv:2401.10241, ZB-V, and arXiv:2405.15362,
// V-ZB). The generator plans with uniform representative times and the memory
// limit of 1F1B (2 pp chunk activations, i.e. pp micro-batches), fills bubbles
// with pending W passes, retries with the stage bubbles it found as an allowance
// while that lowers the largest bubble, and keeps the best of the four
// (fill_b, fill_f) variants.
//
// In the port "chunk" keeps zbv.py's meaning: the n-th leg of a pass type, so
// F chunk 0 is model chunk 0 but B and W chunk 0 are model chunk 1 (create_schedule
// flips them). Two Python details are kept on purpose: a condition reading
// end_time[fa_id] with fa_id = -1 reads the last node (Python's end_time[-1]),
// and ties keep the first variant. Where Python would raise (an assertion in a
// retry or a variant) the port drops that plan and keeps the others; the
// retries are capped at kMaxRetries (each one strictly lowers the largest
// bubble, so the cap is not reached in practice).
#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "time/schedule_orders.h"
#include "trainsim/issue.h"

namespace trainsim::detail {
namespace {

constexpr int kMaxRetries = 64;

struct Greedy {
  int32_t S = 0, M = 0;
  double cost[3] = {1.0, 1.0, 1.0};  // F, B, W
  double mem[3] = {1.0, 0.0, 0.0};
  double comm = 0.0, max_mem = 0.0;
  bool fill_f = true, fill_b = true;
  std::vector<double> approved;  // empty: none

  std::vector<int32_t> count;  // [stage * 6 + cat * 2 + chunk]
  std::vector<double> end, cur, used, bubble;
  std::vector<std::deque<int32_t>> pending_w;  // [stage] chunk of each B awaiting its W
  std::vector<std::vector<int32_t>> schedule;  // [stage] packed cat * 2 + chunk, micro << 3
  std::string failure;

  size_t id(int32_t cat, int32_t chunk, int32_t stage, int32_t micro) const {
    return static_cast<size_t>(((cat * 2 + chunk) * S + stage) * M + micro);
  }
  int32_t& cnt(int32_t stage, int32_t slot) { return count[static_cast<size_t>(stage * 6 + slot)]; }
  double end_at(int64_t fa_id) const {  // Python's end_time[-1] is the last node
    return fa_id >= 0 ? end[static_cast<size_t>(fa_id)] : end.back();
  }
  double max_bubble(int32_t stage) const {
    double b = *std::max_element(bubble.begin(), bubble.end());
    if (stage >= 0 && !approved.empty()) {
      b = std::max(b, *std::max_element(approved.begin(), approved.end()) -
                          approved[static_cast<size_t>(stage)]);
    }
    return b;
  }
  bool fail(const char* what) {
    if (failure.empty()) failure = what;
    return false;
  }

  bool put(int32_t cat, int32_t chunk, int32_t stage) {
    const auto s = static_cast<size_t>(stage);
    const double no_bubble = cur[s] + cost[cat];
    double t = no_bubble;
    const int32_t n = cnt(stage, cat * 2 + chunk);
    if (n >= M) return fail("zero_bubble_v generator: a pass count overflowed");
    if (used[s] + mem[cat] > max_mem) return fail("zero_bubble_v generator: memory limit exceeded");
    if (cat > 0 || chunk > 0) {
      const int32_t last = cat * 2 + chunk - 1;
      const size_t dep = cat < 2 ? id(last / 2, last % 2, stage, n) : id(1, chunk, stage, n);
      if (end[dep] < 0.0) return fail("zero_bubble_v generator: a pass ran before its own input");
    }
    const int32_t other = chunk == 1 ? stage + 1 : stage - 1;
    if (cat < 2 && other >= 0 && other < S) {
      const double dep = end[id(cat, chunk, other, n)];
      if (dep < 0.0) return fail("zero_bubble_v generator: a pass ran before its neighbour's");
      t = std::max(t, dep + comm + cost[cat]);
    }
    if (cnt(stage, 0) > 0) bubble[s] += t - no_bubble;
    end[id(cat, chunk, stage, n)] = t;
    cur[s] = t;
    used[s] += mem[cat];
    schedule[s].push_back((n << 3) | (cat * 2 + chunk));
    if (cat == 1) pending_w[s].push_back(chunk);
    ++cnt(stage, cat * 2 + chunk);
    return true;
  }
  bool put_w(int32_t stage) {
    auto& queue = pending_w[static_cast<size_t>(stage)];
    if (queue.empty()) return fail("zero_bubble_v generator: no W to place");
    const int32_t chunk = queue.front();
    queue.pop_front();
    return put(2, chunk, stage);
  }
  // Places W passes that fit before the pass waiting on fa_id, then maybe one more.
  bool fill_before(int32_t stage, int64_t fa_id, bool extra) {
    const auto s = static_cast<size_t>(stage);
    while (!pending_w[s].empty() && fa_id >= 0 && end_at(fa_id) + comm >= cur[s] + cost[2]) {
      if (!put_w(stage)) return false;
    }
    if (!pending_w[s].empty() && end_at(fa_id) + comm - cur[s] > max_bubble(stage) - bubble[s] &&
        extra) {
      return put_w(stage);
    }
    return true;
  }

  bool warm_up();
  bool steady();
  bool run();
};

bool Greedy::warm_up() {
  for (int32_t i = 0; i < S; ++i) {
    if (!put(0, 0, i)) return false;
  }
  for (int32_t i = S - 1; i >= 0; --i) {
    if (i == S - 1) {
      if (!put(0, 1, i)) return false;
      continue;
    }
    const double limit = end[id(0, 1, i + 1, 0)] + comm;
    const auto s = static_cast<size_t>(i);
    while (used[s] + mem[0] * (2 + i * 2) <= max_mem && cur[s] + cost[0] <= limit &&
           cnt(i, 0) < M) {
      for (int32_t j = 0; j <= i; ++j) {
        if (!put(0, 0, j)) return false;
      }
    }
    if (!put(0, 1, i)) return false;
  }
  int32_t chunk = 0;
  int32_t idle_sweeps = 0;  // Python would spin forever; two empty sweeps mean it would
  for (int32_t i = 1; i < S; ++i) {
    while (cnt(i, 0) + cnt(i, 1) < cnt(i - 1, 0) + cnt(i - 1, 1) ||
           (cnt(i, 1) <= cnt(i - 1, 1) && cnt(i - 1, 1) < M)) {
      bool placed = false;
      for (int32_t j = S - 1; j >= i; --j) {
        if (cnt(j, chunk) >= M) continue;
        if (!put(0, chunk, j)) return false;
        placed = true;
      }
      idle_sweeps = placed ? 0 : idle_sweeps + 1;
      if (idle_sweeps == 2) return fail("zero_bubble_v generator: the warm-up stalled");
      chunk = 1 - chunk;
    }
  }
  return true;
}

bool Greedy::steady() {
  for (int32_t round = 0; round < 2 * M; ++round) {
    for (int32_t i = 0; i < S; ++i) {
      while (used[static_cast<size_t>(i)] + mem[1] > max_mem) {
        if (!put_w(i)) return false;
      }
    }
    std::vector<std::pair<int32_t, int32_t>> order;  // B1 ranks high to low, then B0 ranks
    std::vector<int32_t> b0;
    for (int32_t i = 0; i < S; ++i) {
      if (cnt(i, 3) >= cnt(i, 2)) {
        b0.push_back(i);
      } else if (i == S - 1 || end[id(1, 1, i + 1, cnt(i, 3))] >= 0.0 || cnt(i, 2) >= M) {
        order.emplace_back(i, 1);
      } else {
        b0.push_back(i);
      }
    }
    std::reverse(order.begin(), order.end());
    for (const int32_t i : b0) order.emplace_back(i, 0);
    for (const auto& [i, chunk] : order) {
      int64_t fa_id = -1;
      if (chunk == 1 && i < S - 1) fa_id = static_cast<int64_t>(id(1, 1, i + 1, cnt(i, 3)));
      if (chunk == 0 && i > 0) fa_id = static_cast<int64_t>(id(1, 0, i - 1, cnt(i, 2)));
      if (!fill_before(i, fa_id, chunk == 1 || fill_b) || !put(1, chunk, i)) return false;
    }
    for (int32_t i = 0; i < S; ++i) {
      if (cnt(i, 1) >= M) continue;
      int32_t item = -1;
      if (cnt(i, 1) >= cnt(i, 0)) {
        item = 0;
      } else if (i == S - 1 || end[id(0, 1, i + 1, cnt(i, 1))] >= 0.0) {
        item = 1;
      } else if (cnt(i, 0) < M && (i == 0 || end[id(0, 0, i - 1, cnt(i, 0))] >= 0.0)) {
        item = 0;
      }
      if (item < 0) continue;
      while (used[static_cast<size_t>(i)] + mem[0] > max_mem) {
        if (!put_w(i)) return false;
      }
      int64_t fa_id = -1;
      if (item == 0 && i > 0) fa_id = static_cast<int64_t>(id(0, 0, i - 1, cnt(i, 0)));
      if (item == 1 && i < S - 1) fa_id = static_cast<int64_t>(id(0, 1, i + 1, cnt(i, 1)));
      if (!fill_before(i, fa_id, fill_f) || !put(0, item, i)) return false;
    }
  }
  for (int32_t i = 0; i < S; ++i) {
    while (!pending_w[static_cast<size_t>(i)].empty()) {
      if (!put_w(i)) return false;
    }
  }
  return true;
}

bool Greedy::run() {
  const auto stages = static_cast<size_t>(S);
  count.assign(stages * 6, 0);
  end.assign(static_cast<size_t>(6) * stages * static_cast<size_t>(M), -1.0);
  cur.assign(stages, 0.0);
  used.assign(stages, 0.0);
  bubble.assign(stages, 0.0);
  pending_w.assign(stages, {});
  schedule.assign(stages, {});
  for (auto& list : schedule) list.reserve(6 * static_cast<size_t>(M));
  failure.clear();
  return warm_up() && steady();
}

// try_v_schedule with its retries: returns the best successful plan (or the failure).
Greedy try_v_schedule(Greedy g) {
  if (!g.run()) return g;
  for (int retry = 0; retry < kMaxRetries; ++retry) {
    const double best = g.max_bubble(-1);
    const double allowed =
        g.approved.empty() ? -1.0 : *std::max_element(g.approved.begin(), g.approved.end());
    if (allowed >= 0.0 && best >= allowed) break;
    Greedy next = g;
    next.approved = g.bubble;
    if (!next.run() || next.max_bubble(-1) >= best) break;
    g = std::move(next);
  }
  return g;
}

}  // namespace

ScheduleOrders zero_bubble_v_orders(int32_t pp, int32_t m, const OrderOptions& options) {
  Greedy base;
  base.S = pp;
  base.M = m;
  base.cost[0] = options.forward_s;
  base.cost[1] = options.backward_s;
  base.cost[2] = options.weight_s;
  base.comm = options.p2p_s;
  // runtime.py: f_mem = 34h + 5as, w_mem = -32h, b_mem = -f_mem - w_mem, in units of f_mem;
  // zbv.py PipelineGraph: max_mem = f_mem * n_stage * 2.
  base.mem[1] = -(1.0 - options.weight_kept_fraction);
  base.mem[2] = -options.weight_kept_fraction;
  base.max_mem = 2.0 * pp;
  Greedy best;
  bool found = false;
  std::string failure;
  for (const bool fill_b : {true, false}) {
    for (const bool fill_f : {true, false}) {
      Greedy g = base;
      g.fill_b = fill_b;
      g.fill_f = fill_f;
      g = try_v_schedule(std::move(g));
      if (!g.failure.empty()) {
        failure = g.failure;
        continue;
      }
      if (!found || g.max_bubble(-1) < best.max_bubble(-1)) best = std::move(g);
      found = true;
    }
  }
  if (!found && options.weight_kept_fraction < 1.0) {
    // With a small kept share every variant can run out of W passes to free
    // memory with (Python raises there); planning as if a B freed nothing until
    // its W never does (schedule_orders_test.cpp checks random costs and shares).
    OrderOptions conservative = options;
    conservative.weight_kept_fraction = 1.0;
    return zero_bubble_v_orders(pp, m, conservative);
  }
  TRAINSIM_CHECK(found, failure);
  ScheduleOrders orders = v_placement(pp, m);
  for (size_t s = 0; s < best.schedule.size(); ++s) {
    for (const int32_t packed : best.schedule[s]) {
      const int32_t cat = (packed & 7) / 2;
      const int32_t chunk = (packed & 7) % 2;
      const ActionKind kind = cat == 0   ? ActionKind::kForward
                              : cat == 1 ? ActionKind::kBackward
                                         : ActionKind::kWeight;
      orders.actions[s].push_back({kind, false, cat == 0 ? chunk : 1 - chunk, packed >> 3});
    }
  }
  return orders;
}

}  // namespace trainsim::detail
