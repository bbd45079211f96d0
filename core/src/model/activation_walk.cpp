#include "model/activation_walk.h"

#include <cstddef>
#include <vector>

namespace trainsim {
namespace {

void consider(WalkPoint& peak, double live, double transient, int32_t op, WalkPhase phase) {
  if (live + transient > peak.bytes) peak = {live + transient, transient, op, phase};
}

}  // namespace

// A recomputed op starts a segment when its predecessor is not recomputed, ends
// a segment, or when it is a layer input (a checkpoint boundary).
std::vector<char> recompute_segment_starts(const OpList& ops) {
  std::vector<char> first(ops.size(), 0);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (!ops[i].recompute) continue;
    first[i] = i == 0 || !ops[i - 1].recompute || ops[i - 1].segment_end || ops[i].segment_start;
  }
  return first;
}

BlockWalk walk_block(const OpList& ops) {
  BlockWalk walk;
  const std::vector<char> first = recompute_segment_starts(ops);
  std::vector<double> stored(ops.size(), 0.0);
  double live = 0.0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    consider(walk.forward_peak, live, op.fwd_peak_bytes, static_cast<int32_t>(i),
             WalkPhase::kForward);
    if (!op.recompute) {
      stored[i] = op.cache_bytes;
    } else if (first[i]) {
      stored[i] = op.offload_input ? 0.0 : op.input_bytes;  // the checkpoint
    }
    live += stored[i];
  }
  consider(walk.forward_peak, live, 0.0, -1, WalkPhase::kForward);
  walk.stored_bytes = live;
  walk.backward_peak = {-1.0, 0.0, -1, WalkPhase::kBackward};
  for (std::size_t end = ops.size(); end > 0;) {
    const std::size_t i = end - 1;
    if (!ops[i].recompute) {
      consider(walk.backward_peak, live, ops[i].bwd_peak_bytes, static_cast<int32_t>(i),
               WalkPhase::kBackward);
      live -= stored[i];
      end = i;
      continue;
    }
    std::size_t start = i;
    while (!first[start]) --start;
    for (std::size_t j = start; j <= i; ++j) {  // recompute forward of the segment
      consider(walk.backward_peak, live, ops[j].fwd_peak_bytes, static_cast<int32_t>(j),
               WalkPhase::kRecomputeForward);
      if (j != start) {
        stored[j] = ops[j].cache_bytes;
        live += stored[j];
      }
    }
    consider(walk.backward_peak, live, 0.0, static_cast<int32_t>(i), WalkPhase::kRecomputeForward);
    for (std::size_t j = i + 1; j-- > start;) {  // then its backward
      consider(walk.backward_peak, live, ops[j].bwd_peak_bytes, static_cast<int32_t>(j),
               WalkPhase::kRecomputeBackward);
      live -= stored[j];
    }
    end = start;
  }
  if (walk.backward_peak.bytes < 0.0) walk.backward_peak = {};
  return walk;
}

}  // namespace trainsim
