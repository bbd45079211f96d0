#include "time/host_time.h"

#include <algorithm>

namespace trainsim {
namespace {

// GPU idle in a stretch that starts with the host at the GPU's side (just
// after a sync): the latest end over every op's first and last kernel.
double after_sync_idle_s(std::span<const HostItem> items, const HostSpec& host) {
  double gpu_total_s = 0.0;
  for (const HostItem& item : items) gpu_total_s += item.gpu_s;
  double end_s = gpu_total_s;
  double host_before_s = 0.0;
  double gpu_before_s = 0.0;
  for (const HostItem& item : items) {
    if (item.launches > 0.0) {
      const double gpu_after_s = gpu_total_s - gpu_before_s - item.gpu_s;
      const double per_kernel_gpu_s = item.gpu_s / item.launches;
      // The op's first kernel comes from its (eager) host call; native loops follow it.
      const double first_s = std::min(host.launch_s, item.host_s) + item.gpu_s;
      const double last_s = item.host_s + per_kernel_gpu_s;
      end_s = std::max(end_s, host_before_s + std::max(first_s, last_s) + gpu_after_s);
    }
    host_before_s += item.host_s;
    gpu_before_s += item.gpu_s;
  }
  return end_s - gpu_total_s;
}

}  // namespace

double host_idle_s(std::span<const HostItem> items, const HostSpec& host) {
  size_t begin = 0;
  while (begin < items.size() && !items[begin].sync_after) ++begin;
  // Before (and including) the first sync: the host may be ahead.
  HostStretch first;
  for (size_t i = 0; i < items.size() && i <= begin; ++i) {
    first.gpu_s += items[i].gpu_s;
    first.host_s += items[i].host_s;
  }
  double idle_s = std::max(0.0, first.host_s - first.gpu_s);
  // Each later stretch runs from one sync to the next (or the end of the pass).
  while (begin < items.size()) {
    idle_s += host.sync_s;
    size_t end = begin + 1;
    while (end < items.size() && !items[end].sync_after) ++end;
    const size_t last = std::min(end + 1, items.size());  // the next sync op is in the stretch
    idle_s += after_sync_idle_s(items.subspan(begin + 1, last - begin - 1), host);
    begin = end;
  }
  return idle_s;
}

}  // namespace trainsim
