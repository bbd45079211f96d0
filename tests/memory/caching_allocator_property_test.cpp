// Randomized invariants of the caching-allocator replay
// (core/src/memory/caching_allocator.h) over every option combination:
// reserved >= allocated after every event; allocated is the sum of the live
// blocks, requested the sum of the live requests; each block holds its
// rounded request with the waste should_split allows; the segments add up to
// reserved; freeing everything leaves only whole cached segments (no inactive
// split bytes) and emptying the cache leaves nothing reserved.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "memory/caching_allocator.h"

namespace trainsim {
namespace {

constexpr int64_t MiB = kAllocMiB;

struct Case {
  std::string name;
  AllocatorOptions options;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const int64_t capacity : {int64_t{1} << 40, 768 * MiB}) {
    const std::string tight = capacity < (int64_t{1} << 40) ? " tight" : "";
    AllocatorOptions base;
    base.capacity_bytes = capacity;
    out.push_back({"default" + tight, base});
    AllocatorOptions split = base;
    split.max_split_size_bytes = 64 * MiB;
    out.push_back({"max_split_size" + tight, split});
    AllocatorOptions roundup = base;
    roundup.roundup_power2_divisions = 4;
    out.push_back({"roundup_power2_divisions" + tight, roundup});
    AllocatorOptions expandable = base;
    expandable.expandable_segments = true;
    out.push_back({"expandable" + tight, expandable});
    AllocatorOptions both = expandable;
    both.max_split_size_bytes = 64 * MiB;
    out.push_back({"expandable+max_split" + tight, both});
  }
  return out;
}

// Sizes from 1 B to 1 MiB (small pool), to 10 MiB (20 MiB segments) and to
// 200 MiB (own segments, oversize with max_split_size).
int64_t random_size(std::mt19937_64& rng) {
  const auto band = std::uniform_int_distribution<int>(0, 9)(rng);
  const int64_t top = band < 5 ? MiB : band < 8 ? 10 * MiB : 200 * MiB;
  return std::uniform_int_distribution<int64_t>(1, top)(rng);
}

void check_consistent(const CachingAllocatorSim& sim,
                      const std::vector<std::pair<int64_t, int64_t>>& live,
                      const AllocatorOptions& options, bool check_segments) {
  const AllocatorStats& s = sim.stats();
  ASSERT_GE(s.reserved_bytes, s.allocated_bytes);
  ASSERT_LE(s.reserved_bytes, options.capacity_bytes);
  ASSERT_GE(s.peak_reserved_bytes, s.peak_allocated_bytes);
  int64_t blocks = 0;
  int64_t requested = 0;
  for (const auto& [id, size] : live) {
    const int64_t block = sim.block_bytes(id);
    const int64_t rounded = CachingAllocatorSim::round_size(size, options.roundup_power2_divisions);
    ASSERT_GE(block, rounded);
    // Small pool and expandable blocks split down to the 512 B-multiple
    // request; large ones keep at most 1 MiB, oversize ones < 20 MiB.
    if (rounded <= kAllocSmallRequestMaxBytes || options.expandable_segments) {
      ASSERT_EQ(block, rounded);
    } else {
      ASSERT_LT(block - rounded, options.max_non_split_rounding_bytes);
    }
    blocks += block;
    requested += size;
  }
  ASSERT_EQ(s.allocated_bytes, blocks);
  ASSERT_EQ(s.requested_bytes, requested);
  ASSERT_EQ(s.allocations, static_cast<int64_t>(live.size()));
  if (!check_segments) return;
  int64_t reserved = 0;
  int64_t allocated = 0;
  for (const SegmentInfo& seg : sim.segments()) {
    reserved += seg.reserved_bytes;
    allocated += seg.allocated_bytes;
  }
  ASSERT_EQ(s.reserved_bytes, reserved);
  ASSERT_EQ(s.allocated_bytes, allocated);
}

TEST(CachingAllocatorProperties, InvariantsHoldOnRandomTraces) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(seed);
      std::mt19937_64 rng(seed);
      CachingAllocatorSim sim(c.options);
      std::vector<std::pair<int64_t, int64_t>> live;  // (id, requested size)
      int64_t next_id = 0;
      int64_t ooms = 0;
      for (int step = 0; step < 3000; ++step) {
        const bool alloc = live.empty() || std::uniform_int_distribution<int>(0, 99)(rng) < 55;
        if (alloc) {
          const int64_t size = random_size(rng);
          if (sim.allocate(next_id, size)) {
            live.emplace_back(next_id, size);
          } else {
            ++ooms;
          }
          ++next_id;
        } else {
          // Mostly LIFO, sometimes any live allocation.
          const bool lifo = std::uniform_int_distribution<int>(0, 3)(rng) != 0;
          const size_t pick = lifo ? live.size() - 1
                                   : std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng);
          sim.free(live[pick].first);
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(pick));
        }
        check_consistent(sim, live, c.options, step % 50 == 0);
        if (::testing::Test::HasFatalFailure()) return;
      }
      EXPECT_EQ(sim.stats().num_ooms, ooms);
      if (c.options.capacity_bytes < (int64_t{1} << 40)) {
        EXPECT_GT(ooms, 0) << "the tight capacity should be exercised";
      }
      // Free everything: only cached memory is left, and each cudaMalloc
      // segment is one whole free block again.
      for (const auto& entry : live) sim.free(entry.first);
      const AllocatorStats& s = sim.stats();
      EXPECT_EQ(s.allocated_bytes, 0);
      EXPECT_EQ(s.requested_bytes, 0);
      EXPECT_EQ(s.inactive_split_bytes, 0);
      EXPECT_EQ(s.inactive_split_blocks, 0);
      int64_t cached = 0;
      for (const SegmentInfo& seg : sim.segments()) {
        EXPECT_EQ(seg.allocated_bytes, 0);
        cached += seg.reserved_bytes;
      }
      EXPECT_EQ(s.reserved_bytes, cached);
      sim.empty_cache();
      EXPECT_EQ(sim.stats().reserved_bytes, 0);
      EXPECT_EQ(sim.stats().segments, 0);
      // An expandable range created for a mapping that then failed (capacity)
      // was never mapped, so release_blocks, which visits mapped free blocks,
      // keeps its address space, as upstream; it holds no memory.
      for (const SegmentInfo& seg : sim.segments()) EXPECT_EQ(seg.reserved_bytes, 0);
      if (c.options.capacity_bytes >= (int64_t{1} << 40)) {
        EXPECT_EQ(sim.stats().expandable_ranges, 0);
      }
    }
  }
}

TEST(CachingAllocatorProperties, ReplayMatchesStepwiseSimulationAndTimeline) {
  std::mt19937_64 rng(42);
  std::vector<AllocEvent> trace;
  std::vector<int64_t> live;
  for (int64_t id = 0; id < 2000; ++id) {
    trace.push_back({id, random_size(rng), false});
    live.push_back(id);
    while (!live.empty() && std::uniform_int_distribution<int>(0, 1)(rng) == 0) {
      trace.push_back({live.back(), 0, true});
      live.pop_back();
    }
  }
  AllocatorOptions options;
  options.timeline_points = 64;
  const AllocatorReplay r = replay(trace, options);
  EXPECT_FALSE(r.oom);
  EXPECT_EQ(r.events_replayed, static_cast<int64_t>(trace.size()));
  ASSERT_FALSE(r.timeline.empty());
  EXPECT_LE(r.timeline.size(), 64U);
  EXPECT_EQ(r.timeline.back().event_index, static_cast<int64_t>(trace.size()) - 1);
  int64_t max_reserved = 0;
  int64_t max_allocated = 0;
  for (const TimelinePoint& p : r.timeline) {
    EXPECT_GE(p.reserved_bytes, p.allocated_bytes);
    max_reserved = std::max(max_reserved, p.reserved_bytes);
    max_allocated = std::max(max_allocated, p.allocated_bytes);
  }
  // Peaks are reached at event boundaries here (no OOM path), so the
  // per-bucket maxima keep them.
  EXPECT_EQ(max_reserved, r.stats.peak_reserved_bytes);
  EXPECT_EQ(max_allocated, r.stats.peak_allocated_bytes);
  EXPECT_EQ(r.stats.at_peak_reserved.reserved_bytes, r.stats.peak_reserved_bytes);
  EXPECT_GE(r.stats.at_peak_reserved.fragmentation_bytes(), 0);

  CachingAllocatorSim sim(options);
  for (const AllocEvent& e : trace) {
    if (e.is_free) {
      sim.free(e.id);
    } else {
      ASSERT_TRUE(sim.allocate(e.id, e.size_bytes));
    }
  }
  EXPECT_EQ(sim.stats().reserved_bytes, r.stats.reserved_bytes);
  EXPECT_EQ(sim.stats().peak_reserved_bytes, r.stats.peak_reserved_bytes);
  EXPECT_EQ(sim.stats().num_device_alloc, r.stats.num_device_alloc);
}

}  // namespace
}  // namespace trainsim
