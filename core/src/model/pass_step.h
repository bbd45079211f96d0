// One pass of a pipeline rank's order: what the time model's schedule
// generators (time/schedule_orders.h) run and the memory model's allocation
// trace (memory/allocation_trace.h) replays, so both follow one order.
#pragma once

#include <cstdint>

namespace trainsim {

enum class PassKind : uint8_t {
  kForward,         ///< F
  kBackward,        ///< B: input gradient only (its W runs later)
  kWeight,          ///< W: the weight gradient of an earlier B
  kBackwardWeight,  ///< BW: the whole backward (what Megatron-LM runs)
};

struct PassStep {
  PassKind kind = PassKind::kForward;
  int32_t chunk = 0;        ///< local virtual chunk
  int32_t micro_batch = 0;  ///< 0-based within the step
};

}  // namespace trainsim
