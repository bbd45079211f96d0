// Live activation bytes of one micro-batch through a block of ops (a layer,
// a uniform-recompute group of layers, the embedding or the head), walked in
// execution order: forward (ops store their cache, or a recomputed segment's
// first op stores its input), then backward in reverse, replaying each
// recomputed segment's forward just before its backward
// (Megatron's CheckpointFunction, megatron/core/tensor_parallel/random.py).
// Each candidate is the live bytes plus the running op's working set.
#pragma once

#include <cstdint>
#include <vector>

#include "model/op.h"

namespace trainsim {

enum class WalkPhase : uint8_t { kForward, kBackward, kRecomputeForward, kRecomputeBackward };

struct WalkPoint {
  double bytes = 0.0;      ///< relative to the live bytes when the block starts
  double transient = 0.0;  ///< the running op's working set (part of bytes)
  int32_t op = -1;     ///< index into the block's ops (-1: after the last op)
  WalkPhase phase = WalkPhase::kForward;
};

struct BlockWalk {
  double stored_bytes = 0.0;  ///< kept from the block's forward until its backward
  WalkPoint forward_peak{-1.0, 0.0, -1, WalkPhase::kForward};  ///< max over the forward pass
  WalkPoint backward_peak;    ///< max over backward and recompute
};

BlockWalk walk_block(const OpList& ops);

// 1 where op i starts a recomputed segment (the op whose input is the
// checkpoint): recomputed, and its predecessor is not, ends a segment, or it is
// a layer input. The allocation trace (memory/allocation_trace.h) follows the
// walk with it.
std::vector<char> recompute_segment_starts(const OpList& ops);

}  // namespace trainsim
