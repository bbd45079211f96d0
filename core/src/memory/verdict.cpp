#include "memory/verdict.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "memory/outside_memory.h"
#include "trainsim/units.h"

namespace trainsim {
namespace {

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", bytes / kGiB);
  return text;
}

// The largest consumers of a stage at its peak: allocated parts, the
// allocator's fragmentation and the terms outside it.
std::string largest_consumers(const StageMemory& s) {
  std::vector<std::pair<std::string, double>> parts = {
      {"activations", s.activations_bytes},     {"optimizer states", s.optimizer_bytes},
      {"weights", s.parameters_bytes},          {"gradients", s.gradients_bytes},
      {"working set of the peak op", s.transient_bytes},
      {"buffers and workspaces", s.buffers_bytes},
      {"reserved but unallocated", s.fragmentation_bytes},
  };
  for (const MemoryTerm& t : s.outside) parts.emplace_back(t.name, t.bytes);
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (size_t i = 0; i < std::min<size_t>(3, parts.size()); ++i) {
    if (parts[i].second <= 0.0) break;
    text += (i == 0 ? "" : ", ") + parts[i].first + " " + gib(parts[i].second);
  }
  return text;
}

std::string describe_stage(const StageMemory& s, double usable) {
  std::string text = "stage " + std::to_string(s.stage) + " needs " + gib(s.device_bytes) +
                     " (allocator reserved " + gib(s.reserved_bytes) + ", of which " +
                     gib(s.fragmentation_bytes) + " reserved but unallocated at its peak, + " +
                     gib(s.outside_allocator_bytes) + " outside PyTorch's allocator) of " +
                     gib(usable) + " usable; largest: " + largest_consumers(s);
  if (!s.peak_op.empty()) text += "; allocated memory peaks at " + s.peak_op;
  return text;
}

}  // namespace

MemoryVerdict memory_verdict(const Config& config, const std::vector<StageMemory>& stages,
                             double headroom_fraction, bool describe) {
  MemoryVerdict v;
  v.usable_bytes = usable_capacity_bytes(config.system.gpu);
  v.headroom_fraction = headroom_fraction;
  bool first = true;
  for (const StageMemory& s : stages) {
    const double margin = v.usable_bytes - s.device_bytes;
    if (first || margin < v.margin_bytes) {
      v.margin_bytes = margin;
      v.device_bytes = s.device_bytes;
      v.stage = s.stage;
      first = false;
    }
  }
  const double headroom = headroom_fraction * v.usable_bytes;
  bool oom = false, tight = false;
  for (const StageMemory& s : stages) {
    const double margin = v.usable_bytes - s.device_bytes;
    // Host memory (optimizer and activation CPU offload): the stage's pinned host bytes against its GPU's
    // share of the node's host memory (system.host.memory_gib_per_gpu).
    const double host_capacity = config.system.host.memory_bytes;
    const bool host_oom = s.host_bytes > 0.0 && s.host_bytes > host_capacity;
    if (host_oom && describe) {
      v.reasons.push_back("stage " + std::to_string(s.stage) + " needs " + gib(s.host_bytes) +
                          " of pinned host memory for its offloaded optimizer states and activations, above the " +
                          gib(host_capacity) + " of host memory per GPU");
    }
    oom = oom || host_oom;
    const bool stage_oom = margin < 0.0 || s.allocator.out_of_memory;
    const bool stage_tight = !stage_oom && (margin < headroom || s.allocator.alloc_retries > 0);
    oom = oom || stage_oom;
    tight = tight || stage_tight;
    if (!describe || (!stage_oom && !stage_tight)) continue;
    std::string reason = describe_stage(s, v.usable_bytes);
    if (stage_oom && margin >= 0.0) {
      reason += "; the allocator cannot serve it inside the capacity (fragmentation)";
    } else if (stage_tight && margin >= headroom) {
      reason += "; the allocator had to empty its cache " + std::to_string(s.allocator.alloc_retries) +
                " time(s) to fit";
    } else if (stage_tight) {
      reason += "; inside the " + std::to_string(static_cast<int>(headroom_fraction * 100.0 + 0.5)) +
                "% headroom (" + gib(headroom) + ")";
    }
    v.reasons.push_back(std::move(reason));
  }
  v.status = oom ? "out_of_memory" : tight ? "tight" : "fits";
  return v;
}

}  // namespace trainsim
