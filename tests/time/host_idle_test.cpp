// The GPU's wait for the host over a pass (time/host_time.h host_idle_s),
// against closed forms of a producer (the host, h per launch) feeding a
// consumer (the GPU) that runs each kernel once it is issued.
#include <gtest/gtest.h>

#include <vector>

#include "test_util.h"
#include "time/host_time.h"

namespace trainsim {
namespace {

HostSpec host_with(double launch_s, double sync_s) {
  HostSpec host;
  host.launch_s = launch_s;
  host.sync_s = sync_s;
  return host;
}

// An op of `launches` eager launches (host.launch_s each) and `gpu_s` of GPU work.
HostItem eager(double launches, double gpu_s, bool sync_after, const HostSpec& host) {
  return {launches, gpu_s, sync_after, launches * host.launch_s};
}

TEST(HostIdleTest, WithoutASyncTheHostMayRunAheadSoOnlyItsExcessIsIdle) {
  const HostSpec host = host_with(10e-6, 40e-6);
  // 30 launches (300 us of host) over 200 us of GPU: 100 us idle, whatever the order.
  const std::vector<HostItem> items{eager(10, 150e-6, false, host), eager(20, 50e-6, false, host)};
  EXPECT_NEAR(host_idle_s(items, host), 100e-6, 1e-12);
  const std::vector<HostItem> gpu_bound{eager(10, 500e-6, false, host), eager(20, 500e-6, false, host)};
  EXPECT_EQ(host_idle_s(gpu_bound, host), 0.0);
}

TEST(HostIdleTest, AfterASyncTheGpuWaitsForTheFirstLaunch) {
  const HostSpec host = host_with(10e-6, 40e-6);
  // Each kernel (100 us) outlasts a launch: the GPU waits for the first only.
  const std::vector<HostItem> items{eager(1, 100e-6, true, host), eager(4, 400e-6, false, host),
                                    eager(2, 200e-6, false, host)};
  EXPECT_NEAR(host_idle_s(items, host), 40e-6 + 10e-6, 1e-12);
}

TEST(HostIdleTest, AHostBoundOpAfterASyncRunsAtTheLaunchRate) {
  const HostSpec host = host_with(30e-6, 0.0);
  // m = 16 kernels of g = 20 us after the sync, h = 30 us each: the last kernel is
  // issued at 16 h and ends g later; the GPU was busy 16 g, so it idled 16 (h - g) + g.
  const std::vector<HostItem> items{eager(1, 50e-6, true, host), eager(16, 16 * 20e-6, false, host)};
  EXPECT_NEAR(host_idle_s(items, host), 16 * (30e-6 - 20e-6) + 20e-6, 1e-12);
  // A long GPU op behind it hides nothing already lost, and its own launch (issued at
  // 17 h = 510 us, after the 16th kernel ended at 16 h + g = 500 us) adds h - g more.
  const std::vector<HostItem> with_tail{eager(1, 50e-6, true, host), eager(16, 16 * 20e-6, false, host),
                                        eager(1, 5e-3, false, host)};
  EXPECT_NEAR(host_idle_s(with_tail, host), 17 * (30e-6 - 20e-6) + 20e-6, 1e-12);
}

TEST(HostIdleTest, EachSyncStartsAStretchOfItsOwn) {
  const HostSpec host = host_with(10e-6, 40e-6);
  // Host-bound before the first sync (3 launches over 5 us of GPU: 25 us), then two
  // syncs, each followed by a GPU-bound op (one launch waited on).
  const std::vector<HostItem> items{
      eager(2, 4e-6, false, host), eager(1, 1e-6, true, host), eager(1, 1e-3, false, host),
      eager(1, 1e-6, true, host),  eager(1, 1e-3, false, host)};
  EXPECT_NEAR(host_idle_s(items, host), 25e-6 + 2 * (40e-6 + 10e-6), 1e-12);
}

TEST(HostIdleTest, NeverNegativeAndNoMoreThanTheSerialSum) {
  // Property over random passes: 0 <= idle <= host time + syncs (GPU and host never
  // overlapping at all is the worst case).
  uint64_t state = 12345;
  const auto next = [&state] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53);
  };
  for (int trial = 0; trial < 500; ++trial) {
    const HostSpec host = host_with(next() * 50e-6, next() * 100e-6);
    std::vector<HostItem> items(1 + static_cast<size_t>(next() * 20));
    double launches = 0.0;
    int syncs = 0;
    for (HostItem& item : items) {
      const double n = static_cast<double>(static_cast<int>(next() * 20));
      const double gpu_s = next() * 1e-3;
      item = eager(n, gpu_s, next() < 0.2, host);
      launches += item.launches;
      syncs += item.sync_after ? 1 : 0;
    }
    const double idle = host_idle_s(items, host);
    EXPECT_GE(idle, 0.0);
    EXPECT_LE(idle, launches * host.launch_s + syncs * host.sync_s + 1e-12);
  }
}

}  // namespace
}  // namespace trainsim
