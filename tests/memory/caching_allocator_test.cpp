// The caching-allocator replay on hand-built traces. Every expected number is
// derived in the comments from the rules of pytorch/pytorch
// c10/cuda/CUDACachingAllocator.cpp (DeviceCachingAllocator; see
// core/src/memory/caching_allocator.h): round_size, get_allocation_size,
// get_free_block, should_split, free_block, the malloc retry ladder and the
// expandable-segment functions.
#include "memory/caching_allocator.h"

#include <gtest/gtest.h>

#include <vector>

#include "trainsim/issue.h"

namespace trainsim {
namespace {

constexpr int64_t MiB = kAllocMiB;

TEST(CachingAllocator, RoundSizeAndAllocationSize) {
  // round_size: under 512 B -> 512 B, else the next multiple of 512 B.
  EXPECT_EQ(CachingAllocatorSim::round_size(1, 0), 512);
  EXPECT_EQ(CachingAllocatorSim::round_size(512, 0), 512);
  EXPECT_EQ(CachingAllocatorSim::round_size(513, 0), 1024);
  // roundup_power2_divisions:4 applies above 4 * 512 B: 1200 KiB lies in
  // [1 MiB, 2 MiB), cut into 256 KiB steps -> 1.25 MiB. 1200 B is not above
  // 4 * 512 B, so it gets 512 B rounding, 1536 B (the docs' "1200 -> 1280"
  // example shows roundup_power2_next_division without that floor).
  EXPECT_EQ(CachingAllocatorSim::round_size(1200 * 1024, 4), 1280 * 1024);
  EXPECT_EQ(CachingAllocatorSim::round_size(1200, 4), 1536);
  EXPECT_EQ(CachingAllocatorSim::round_size(4 * MiB, 4), 4 * MiB);  // powers of two stay
  EXPECT_EQ(CachingAllocatorSim::round_size(5 * MiB + 1, 4), 6 * MiB);
  EXPECT_EQ(CachingAllocatorSim::round_size(5 * MiB + 1, 1), 5 * MiB + 512);  // 1 division: off
  // get_allocation_size: <= 1 MiB -> 2 MiB; < 10 MiB -> 20 MiB; else 2 MiB-rounded.
  EXPECT_EQ(CachingAllocatorSim::allocation_size(1 * MiB), 2 * MiB);
  EXPECT_EQ(CachingAllocatorSim::allocation_size(1 * MiB + 512), 20 * MiB);
  EXPECT_EQ(CachingAllocatorSim::allocation_size(10 * MiB - 512), 20 * MiB);
  EXPECT_EQ(CachingAllocatorSim::allocation_size(10 * MiB), 10 * MiB);
  EXPECT_EQ(CachingAllocatorSim::allocation_size(10 * MiB + 512), 12 * MiB);
}

TEST(CachingAllocator, SmallAllocationsShareTwoMiBSegments) {
  CachingAllocatorSim sim(AllocatorOptions{});
  // 1000 B -> 1024 B: a new 2 MiB small segment, split (remainder >= 512 B).
  ASSERT_TRUE(sim.allocate(1, 1000));
  EXPECT_EQ(sim.stats().reserved_bytes, 2 * MiB);
  EXPECT_EQ(sim.stats().allocated_bytes, 1024);
  EXPECT_EQ(sim.stats().requested_bytes, 1000);
  // 4 KiB and then 1 MiB (still small: <= kSmallSize) come out of the remainder
  // 2 MiB - 5 KiB >= 1 MiB: no new segment.
  ASSERT_TRUE(sim.allocate(2, 4096));
  ASSERT_TRUE(sim.allocate(3, 1 * MiB));
  EXPECT_EQ(sim.stats().segments, 1);
  EXPECT_EQ(sim.stats().reserved_bytes, 2 * MiB);
  // The remainder is now 2 MiB - 5 KiB - 1 MiB < 1 MiB: a second segment.
  ASSERT_TRUE(sim.allocate(4, 1 * MiB));
  EXPECT_EQ(sim.stats().segments, 2);
  EXPECT_EQ(sim.stats().reserved_bytes, 4 * MiB);
  EXPECT_EQ(sim.stats().allocated_bytes, 5120 + 2 * MiB);
  // inactive_split: the first segment's free tail (1 MiB - 5 KiB) plus the
  // second's (1 MiB).
  EXPECT_EQ(sim.stats().inactive_split_bytes, (1 * MiB - 5120) + 1 * MiB);
  EXPECT_EQ(sim.stats().inactive_split_blocks, 2);
  // Freeing 2 and 3 merges them with the tail: one free block, whole except 1024 B.
  sim.free(2);
  sim.free(3);
  EXPECT_EQ(sim.stats().inactive_split_bytes, (2 * MiB - 1024) + 1 * MiB);
  EXPECT_EQ(sim.stats().inactive_split_blocks, 2);
}

TEST(CachingAllocator, MidSizeRequestsShareATwentyMiBSegment) {
  CachingAllocatorSim sim(AllocatorOptions{});
  // 5 MiB is large (> 1 MiB) and < 10 MiB: a 20 MiB segment, split (15 MiB > 1 MiB left).
  ASSERT_TRUE(sim.allocate(1, 5 * MiB));
  EXPECT_EQ(sim.stats().reserved_bytes, 20 * MiB);
  EXPECT_EQ(sim.block_bytes(1), 5 * MiB);
  // The second 5 MiB splits the 15 MiB remainder, leaving 10 MiB.
  ASSERT_TRUE(sim.allocate(2, 5 * MiB));
  EXPECT_EQ(sim.stats().segments, 1);
  EXPECT_EQ(sim.stats().reserved_bytes, 20 * MiB);
  EXPECT_EQ(sim.stats().allocated_bytes, 10 * MiB);
  // 9.5 MiB takes the 10 MiB remainder whole: 0.5 MiB is not > 1 MiB, so no
  // split, and allocated counts the whole block.
  ASSERT_TRUE(sim.allocate(3, 9 * MiB + MiB / 2));
  EXPECT_EQ(sim.block_bytes(3), 10 * MiB);
  EXPECT_EQ(sim.stats().allocated_bytes, 20 * MiB);
  EXPECT_EQ(sim.stats().requested_bytes, 19 * MiB + MiB / 2);
  EXPECT_EQ(sim.stats().reserved_bytes, 20 * MiB);
}

TEST(CachingAllocator, LargeRequestsGetTwoMiBRoundedSegments) {
  CachingAllocatorSim sim(AllocatorOptions{});
  // 12 MiB (>= 10 MiB): a segment of exactly 12 MiB, nothing left to split.
  ASSERT_TRUE(sim.allocate(1, 12 * MiB));
  EXPECT_EQ(sim.stats().reserved_bytes, 12 * MiB);
  EXPECT_EQ(sim.block_bytes(1), 12 * MiB);
  // 12 MiB + 1 B -> 12 MiB + 512 B -> a 14 MiB segment; 2 MiB - 512 B > 1 MiB
  // remains, so it splits and the block is the rounded request.
  ASSERT_TRUE(sim.allocate(2, 12 * MiB + 1));
  EXPECT_EQ(sim.stats().reserved_bytes, 26 * MiB);
  EXPECT_EQ(sim.block_bytes(2), 12 * MiB + 512);
  EXPECT_EQ(sim.stats().inactive_split_bytes, 2 * MiB - 512);
}

TEST(CachingAllocator, GrowingRequestsFragmentAcrossSegments) {
  // Event 0: 12 MiB segment. Event 1: freed and cached. Event 2: 14 MiB does
  // not fit the cached 12 MiB block and segments never merge: a new 14 MiB
  // segment, 26 MiB reserved for 14 MiB allocated.
  const std::vector<AllocEvent> trace = {{1, 12 * MiB, false}, {1, 0, true}, {2, 14 * MiB, false}};
  const AllocatorReplay r = replay(trace, AllocatorOptions{});
  EXPECT_EQ(r.stats.reserved_bytes, 26 * MiB);
  EXPECT_EQ(r.stats.allocated_bytes, 14 * MiB);
  EXPECT_EQ(r.stats.segments, 2);
  EXPECT_EQ(r.stats.at_peak_reserved.event_index, 2);
  EXPECT_EQ(r.stats.at_peak_reserved.reserved_bytes, 26 * MiB);
  EXPECT_EQ(r.stats.at_peak_reserved.fragmentation_bytes(), 12 * MiB);
  EXPECT_EQ(r.stats.num_device_alloc, 2);
}

TEST(CachingAllocator, BestFitTakesTheSmallestAdequateBlock) {
  CachingAllocatorSim sim(AllocatorOptions{});
  // Three cached whole segments of 12, 16 and 14 MiB.
  ASSERT_TRUE(sim.allocate(1, 12 * MiB));
  ASSERT_TRUE(sim.allocate(2, 16 * MiB));
  ASSERT_TRUE(sim.allocate(3, 14 * MiB));
  for (const int64_t id : {1, 2, 3}) sim.free(id);
  // 13 MiB: the 14 MiB block (1 MiB left is not > 1 MiB: no split).
  ASSERT_TRUE(sim.allocate(4, 13 * MiB));
  EXPECT_EQ(sim.block_bytes(4), 14 * MiB);
  // 11 MiB: the 12 MiB block; 15 MiB: the 16 MiB block. Nothing new reserved.
  ASSERT_TRUE(sim.allocate(5, 11 * MiB));
  EXPECT_EQ(sim.block_bytes(5), 12 * MiB);
  ASSERT_TRUE(sim.allocate(6, 15 * MiB));
  EXPECT_EQ(sim.block_bytes(6), 16 * MiB);
  EXPECT_EQ(sim.stats().reserved_bytes, 42 * MiB);
  EXPECT_EQ(sim.stats().num_device_alloc, 3);
}

TEST(CachingAllocator, MaxSplitSizeKeepsOversizeBlocksWhole) {
  AllocatorOptions options;
  options.max_split_size_bytes = 40 * MiB;
  CachingAllocatorSim sim(options);
  ASSERT_TRUE(sim.allocate(1, 100 * MiB));  // a 100 MiB segment (oversize: >= 40 MiB)
  sim.free(1);
  // 30 MiB < 40 MiB may not take an oversize block: a new 30 MiB segment.
  ASSERT_TRUE(sim.allocate(2, 30 * MiB));
  EXPECT_EQ(sim.stats().reserved_bytes, 130 * MiB);
  // 90 MiB >= 40 MiB takes the 100 MiB block (100 < 90 + 20) unsplit.
  ASSERT_TRUE(sim.allocate(3, 90 * MiB));
  EXPECT_EQ(sim.block_bytes(3), 100 * MiB);
  EXPECT_EQ(sim.stats().reserved_bytes, 130 * MiB);
  sim.free(3);
  // 70 MiB would waste >= 20 MiB (max_non_split_rounding) of the 100 MiB block: new segment.
  ASSERT_TRUE(sim.allocate(4, 70 * MiB));
  EXPECT_EQ(sim.stats().reserved_bytes, 200 * MiB);

  // Without max_split_size, 30 MiB splits the cached 100 MiB block instead.
  CachingAllocatorSim unlimited(AllocatorOptions{});
  ASSERT_TRUE(unlimited.allocate(1, 100 * MiB));
  unlimited.free(1);
  ASSERT_TRUE(unlimited.allocate(2, 30 * MiB));
  EXPECT_EQ(unlimited.stats().reserved_bytes, 100 * MiB);
  EXPECT_EQ(unlimited.block_bytes(2), 30 * MiB);
}

TEST(CachingAllocator, OutOfMemoryReleasesCachedSegmentsAndRetries) {
  AllocatorOptions options;
  options.capacity_bytes = 64 * MiB;
  CachingAllocatorSim sim(options);
  ASSERT_TRUE(sim.allocate(1, 40 * MiB));
  sim.free(1);  // 40 MiB cached
  // 50 MiB: no cached fit; cudaMalloc fails (40 + 50 > 64); no max_split_size,
  // so release_cached_blocks frees the 40 MiB segment and the counted retry
  // succeeds.
  ASSERT_TRUE(sim.allocate(2, 50 * MiB));
  EXPECT_EQ(sim.stats().reserved_bytes, 50 * MiB);
  EXPECT_EQ(sim.stats().peak_reserved_bytes, 50 * MiB);
  EXPECT_EQ(sim.stats().num_alloc_retries, 1);
  EXPECT_EQ(sim.stats().num_device_free, 1);
  EXPECT_EQ(sim.stats().num_ooms, 0);
  // 20 MiB more cannot fit next to the live 50 MiB even with the cache empty.
  EXPECT_FALSE(sim.allocate(3, 20 * MiB));
  EXPECT_EQ(sim.stats().num_ooms, 1);
  EXPECT_EQ(sim.stats().num_alloc_retries, 2);

  const std::vector<AllocEvent> trace = {
      {1, 40 * MiB, false}, {1, 0, true}, {2, 50 * MiB, false}, {3, 20 * MiB, false}, {2, 0, true}};
  const AllocatorReplay r = replay(trace, options);
  EXPECT_TRUE(r.oom);
  EXPECT_EQ(r.oom_event_index, 3);
  EXPECT_EQ(r.oom_request_bytes, 20 * MiB);
  EXPECT_EQ(r.events_replayed, 4);
}

TEST(CachingAllocator, MaxSplitSizeReleasesOneOversizeBlockFirst) {
  AllocatorOptions options;
  options.capacity_bytes = 100 * MiB;
  options.max_split_size_bytes = 40 * MiB;
  CachingAllocatorSim sim(options);
  ASSERT_TRUE(sim.allocate(1, 50 * MiB));
  ASSERT_TRUE(sim.allocate(2, 44 * MiB));
  sim.free(1);
  sim.free(2);  // cached: 44 and 50 MiB, both oversize
  // 30 MiB may not use them; cudaMalloc fails (94 + 30 > 100);
  // release_available_cached_blocks frees the smallest oversize block of at
  // least max(30, 40) MiB, the 44 MiB one, and the uncounted retry fits.
  ASSERT_TRUE(sim.allocate(3, 30 * MiB));
  EXPECT_EQ(sim.stats().reserved_bytes, 80 * MiB);
  EXPECT_EQ(sim.stats().num_device_free, 1);
  EXPECT_EQ(sim.stats().num_alloc_retries, 0);
}

TEST(CachingAllocator, ExpandableSegmentsReserveAboutWhatIsAllocated) {
  // Ten growing requests, each freed before the next: 100, 102, ..., 118 MiB.
  std::vector<AllocEvent> trace;
  for (int64_t k = 0; k < 10; ++k) {
    trace.push_back({k, (100 + 2 * k) * MiB, false});
    trace.push_back({k, 0, true});
  }
  // cudaMalloc segments: none fits the next request, so all ten stay cached:
  // 100 + 102 + ... + 118 = 1090 MiB reserved for a peak of 118 MiB.
  const AllocatorReplay plain = replay(trace, AllocatorOptions{});
  EXPECT_EQ(plain.stats.peak_allocated_bytes, 118 * MiB);
  EXPECT_EQ(plain.stats.reserved_bytes, 1090 * MiB);
  // Expandable: one range per pool; each request maps 20 MiB pages at the end
  // of the one free block, which absorbs them: ceil(118 / 20) * 20 = 120 MiB.
  AllocatorOptions expandable;
  expandable.expandable_segments = true;
  const AllocatorReplay grown = replay(trace, expandable);
  EXPECT_EQ(grown.stats.peak_allocated_bytes, 118 * MiB);
  EXPECT_EQ(grown.stats.reserved_bytes, 120 * MiB);
  EXPECT_EQ(grown.stats.segments, 0);  // mapped pages are not counted as segments
  EXPECT_EQ(grown.stats.expandable_ranges, 1);
}

TEST(CachingAllocator, ExpandableBestFitPrefersBlocksThatCannotGrow) {
  AllocatorOptions options;
  options.expandable_segments = true;
  CachingAllocatorSim sim(options);
  ASSERT_TRUE(sim.allocate(1, 10 * MiB));  // maps page [0, 20): 1 = [0, 10), free [10, 20)
  ASSERT_TRUE(sim.allocate(2, 2 * MiB));   // 2 = [10, 12), free tail [12, 20) of 8 MiB
  sim.free(1);                             // free [0, 10): 10 MiB, hemmed in by 2
  // 7 MiB: lower_bound finds the 8 MiB tail, but it can grow into unmapped
  // pages, so get_free_block moves on to the 10 MiB block: 7 = [0, 7).
  ASSERT_TRUE(sim.allocate(3, 7 * MiB));
  EXPECT_EQ(sim.stats().reserved_bytes, 20 * MiB);
  // 9 MiB now fits neither the 3 MiB piece nor the 8 MiB tail: the tail maps
  // one more 20 MiB page.
  ASSERT_TRUE(sim.allocate(4, 9 * MiB));
  EXPECT_EQ(sim.stats().reserved_bytes, 40 * MiB);
  EXPECT_EQ(sim.stats().num_device_alloc, 2);
}

TEST(CachingAllocator, ExpandableOutOfMemoryUnmapsFreePages) {
  AllocatorOptions options;
  options.expandable_segments = true;
  options.capacity_bytes = 100 * MiB;
  CachingAllocatorSim sim(options);
  ASSERT_TRUE(sim.allocate(1, 30 * MiB));  // maps [0, 40): 1 = [0, 30), free [30, 40)
  ASSERT_TRUE(sim.allocate(2, 30 * MiB));  // maps [40, 60), merges: 2 = [30, 60)
  EXPECT_EQ(sim.stats().reserved_bytes, 60 * MiB);
  sim.free(1);  // free [0, 30), next to live 2
  // 50 MiB: needs 3 new pages after 2 (60 + 60 > 100 fails). release_cached_blocks
  // unmaps the whole page [0, 20) of the free block ([20, 30) stays mapped),
  // reserved 40 MiB; the counted retry maps [60, 120): 100 MiB.
  ASSERT_TRUE(sim.allocate(3, 50 * MiB));
  EXPECT_EQ(sim.stats().reserved_bytes, 100 * MiB);
  EXPECT_EQ(sim.stats().allocated_bytes, 80 * MiB);
  EXPECT_EQ(sim.stats().num_alloc_retries, 1);
  EXPECT_EQ(sim.stats().num_device_free, 1);
  // Freeing all and emptying the cache unmaps every page and drops the range.
  sim.free(2);
  sim.free(3);
  sim.empty_cache();
  EXPECT_EQ(sim.stats().reserved_bytes, 0);
  EXPECT_EQ(sim.stats().expandable_ranges, 0);
}

TEST(CachingAllocator, ZeroByteRequestsTakeNoBlock) {
  CachingAllocatorSim sim(AllocatorOptions{});
  ASSERT_TRUE(sim.allocate(7, 0));
  EXPECT_EQ(sim.stats().reserved_bytes, 0);
  EXPECT_EQ(sim.block_bytes(7), 0);
  sim.free(7);
  EXPECT_THROW(sim.free(7), InternalError);
}

TEST(CachingAllocator, InvalidTracesThrowInternalError) {
  EXPECT_THROW(replay({{1, 0, true}}, AllocatorOptions{}), InternalError);  // unknown id
  EXPECT_THROW(replay({{1, 4096, false}, {1, 0, true}, {1, 0, true}}, AllocatorOptions{}),
               InternalError);                                                // double free
  EXPECT_THROW(replay({{1, -1, false}}, AllocatorOptions{}), InternalError);  // negative size
  EXPECT_THROW(replay({{1, 4096, false}, {1, 4096, false}}, AllocatorOptions{}), InternalError);
  AllocatorOptions bad;
  bad.roundup_power2_divisions = 3;
  EXPECT_THROW(CachingAllocatorSim{bad}, InternalError);
  bad = AllocatorOptions{};
  bad.max_split_size_bytes = 10 * MiB;  // PyTorch's minimum is 20 MiB
  EXPECT_THROW(CachingAllocatorSim{bad}, InternalError);
}

}  // namespace
}  // namespace trainsim
