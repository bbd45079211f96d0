#include "memory/pass_order.h"

#include <algorithm>

namespace trainsim {
namespace {

// get_pp_rank_microbatches: the forwards rank `stage` runs before its first
// backward, capped at the total (as the activation walk, stage_memory.cpp,
// and the time replay do; older Megatron-LM ran every forward first when
// m == pp, the current one does not).
int64_t warmup_steps(int64_t pp, int64_t vpp, int64_t m, int64_t stage, int64_t group) {
  const int64_t total = m * vpp;
  if (vpp == 1) return std::min(pp - stage - 1, total);
  return std::min((pp - stage - 1) * 2 + (vpp - 1) * group, total);
}

}  // namespace

std::vector<PassStep> megatron_pass_order(int64_t pp, int64_t vpp, int64_t m, int64_t stage,
                                          int64_t group) {
  // get_schedule_table: micro-batches in groups, each group through every chunk.
  std::vector<PassStep> table;
  table.reserve(static_cast<size_t>(m * vpp));
  for (int64_t low = 0; low < m; low += group) {
    const int64_t high = std::min(m, low + group);
    for (int64_t chunk = 0; chunk < vpp; ++chunk) {
      for (int64_t mb = low; mb < high; ++mb) {
        table.push_back({PassKind::kForward, static_cast<int32_t>(chunk), static_cast<int32_t>(mb)});
      }
    }
  }
  auto backward = [&](int64_t k) {
    PassStep step = table[static_cast<size_t>(k)];
    step.kind = PassKind::kBackwardWeight;
    step.chunk = static_cast<int32_t>(vpp - 1) - step.chunk;
    return step;
  };
  const auto total = static_cast<int64_t>(table.size());
  const int64_t warmup = warmup_steps(pp, vpp, m, stage, group);
  std::vector<PassStep> order;
  order.reserve(static_cast<size_t>(2 * total));
  for (int64_t k = 0; k < warmup; ++k) order.push_back(table[static_cast<size_t>(k)]);
  for (int64_t k = 0; k < total - warmup; ++k) {
    order.push_back(table[static_cast<size_t>(k + warmup)]);
    order.push_back(backward(k));
  }
  for (int64_t k = total - warmup; k < total; ++k) order.push_back(backward(k));
  return order;
}

int64_t compressed_micro_batches(int64_t pp, int64_t vpp, int64_t m, int64_t stage,
                                 int64_t cycles) {
  if (vpp == 1) {
    // Warm-up forwards, then `cycles` forward/backward pairs.
    return std::min(m, std::max<int64_t>(pp - stage - 1, 0) + cycles);
  }
  // Interleaved: a cycle is a group of pp micro-batches (pp * vpp forward steps,
  // micro-batch ids shifted by pp). Keep whole groups plus m's partial last group
  // so the cool-down is the same.
  const int64_t warmup = (pp - stage - 1) * 2 + (vpp - 1) * pp;
  const int64_t warmup_groups = (warmup + pp * vpp - 1) / (pp * vpp);
  const int64_t kept = (warmup_groups + cycles + 1) * pp + m % pp;
  return m <= kept ? m : kept;
}

}  // namespace trainsim
