// Will it run out of memory? For every stage, device bytes = the allocator's
// peak reserved bytes (from the replay) + memory outside the allocator, against
// the usable capacity (what PyTorch reports as the device's total memory):
//   out_of_memory  device > usable, or the replayed allocator failed an
//                  allocation inside the usable capacity
//   tight          it fits, but the margin is under headroom x usable, or the
//                  allocator had to empty its cache to get there (slow steps,
//                  and one more fragment away from failing)
//   fits           otherwise
// The stage with the least margin decides; the reasons name it, its largest
// consumers and the op at its peak.
#pragma once

#include <vector>

#include "trainsim/result.h"
#include "trainsim/spec.h"

namespace trainsim {

// The default headroom of the verdict and of the search (README "Will it fit"):
// what the estimate's own uncertainty (allocated memory within ~2% of real runs,
// assumed NCCL and context figures) leaves unknown on an 80 GB GPU, about 4 GiB.
inline constexpr double kDefaultMemoryHeadroom = 0.05;

MemoryVerdict memory_verdict(const Config& config, const std::vector<StageMemory>& stages,
                             double headroom_fraction, bool describe);

}  // namespace trainsim
