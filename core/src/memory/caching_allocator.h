// Deterministic replay of PyTorch's CUDA caching allocator, one device, one
// stream: a trace of allocations and frees in, the allocator's statistics
// (torch.cuda.memory_stats) out, so reserved memory and fragmentation follow
// the allocator's rules instead of a constant factor over allocated memory.
//
// Source: pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp, read at commit
// eb42ad6eca0ce61e7c581212b4bf32f991425571 (class DeviceCachingAllocator),
// with c10/core/AllocatorConfig.cpp (PYTORCH_CUDA_ALLOC_CONF parsing) and the
// later upstream changes noted where they differ (max_non_split_rounding_mb;
// PR #134338: release_available_cached_blocks skips expandable blocks).
// Function names in the comments are DeviceCachingAllocator's.
//
// Modelled: round_size (512 B multiples, roundup_power2_divisions), get_pool
// (small <= 1 MiB), get_allocation_size (2 MiB / 20 MiB / 2 MiB-rounded
// segments), get_free_block (best fit by (size, address), max_split_size and
// max_non_split_rounding bounds), should_split, alloc_found_block, free_block
// and try_merge_blocks (neighbours within one segment only), the malloc retry
// ladder (alloc_block, release_available_cached_blocks, release_cached_blocks
// and a counted retry, then OOM), expandable segments (find_expandable_block,
// map_block, unmap_block) and the statistics those functions keep.
// Not modelled: streams (record_stream's deferred frees: every free completes
// at once), CUDA graph private pools, garbage_collection_threshold, free-memory
// callbacks, and real device addresses: segments get increasing addresses from
// a bump pointer, so only ties between equal-size free blocks can order
// differently from a real run. capacity_bytes stands for the memory the
// allocator may reserve (device memory less the CUDA context and non-PyTorch
// use); cudaMalloc and cuMemCreate fail exactly past it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "memory/caching_allocator_detail.h"

namespace trainsim {

inline constexpr int64_t kAllocMiB = 1024 * 1024;
// Constants at the top of CUDACachingAllocator.cpp.
inline constexpr int64_t kAllocMinBlockBytes = 512;              // kMinBlockSize
inline constexpr int64_t kAllocSmallRequestMaxBytes = 1 * kAllocMiB;  // kSmallSize
inline constexpr int64_t kAllocSmallSegmentBytes = 2 * kAllocMiB;     // kSmallBuffer
inline constexpr int64_t kAllocLargeSegmentBytes = 20 * kAllocMiB;    // kLargeBuffer
inline constexpr int64_t kAllocMinLargeAllocBytes = 10 * kAllocMiB;   // kMinLargeAlloc
inline constexpr int64_t kAllocLargeRoundBytes = 2 * kAllocMiB;       // kRoundLarge

// PYTORCH_CUDA_ALLOC_CONF, as parsed by AllocatorConfig::parseArgs.
struct AllocatorOptions {
  bool expandable_segments = false;  // expandable_segments:True
  std::optional<int64_t>
      max_split_size_bytes;  // max_split_size_mb * MiB (>= 20 MiB); unset: unlimited
  int64_t max_non_split_rounding_bytes = kAllocLargeSegmentBytes;  // max_non_split_rounding_mb
  // roundup_power2_divisions:N (0 or a power of two; 0 and 1 leave 512 B
  // rounding). PyTorch also takes one value per power-of-two interval from
  // 1 MiB to 64 GiB; the single value is the form that sets all sixteen.
  int64_t roundup_power2_divisions = 0;
  int64_t capacity_bytes = int64_t{1} << 50;  // what cudaMalloc / cuMemCreate may hand out in all
  int64_t timeline_points = 0;                // replay(): at most this many timeline points
};

struct AllocEvent {
  int64_t id = 0;          // names the allocation; may be reused once freed
  int64_t size_bytes = 0;  // the request (allocs); ignored for frees
  bool is_free = false;
};

// Where reserved memory first reached its maximum over event boundaries.
struct PeakReservedMoment {
  int64_t event_index = -1;  // count of allocate/free calls before it, i.e. the event's index
  int64_t reserved_bytes = 0;
  int64_t allocated_bytes = 0;
  int64_t fragmentation_bytes() const { return reserved_bytes - allocated_bytes; }
};

// DeviceStats' aggregate figures. allocated counts whole blocks (a block that
// is not split keeps its remainder), as torch.cuda.memory_allocated() does;
// with one stream and no record_stream, active_bytes equals allocated_bytes.
struct AllocatorStats {
  int64_t allocated_bytes = 0;  // allocated_bytes.current
  int64_t peak_allocated_bytes = 0;
  int64_t requested_bytes = 0;  // requested_bytes: the callers' sizes before rounding
  int64_t peak_requested_bytes = 0;
  int64_t reserved_bytes = 0;  // reserved_bytes: cudaMalloc'ed segments and mapped pages
  int64_t peak_reserved_bytes = 0;
  int64_t allocations = 0;  // allocation.current: live blocks handed out
  int64_t peak_allocations = 0;
  int64_t segments = 0;  // segment.current: cudaMalloc'ed segments (expandable ranges not counted)
  int64_t peak_segments = 0;
  int64_t expandable_ranges = 0;     // live ExpandableSegments (virtual ranges)
  int64_t inactive_split_bytes = 0;  // free blocks of split segments (not expandable)
  int64_t peak_inactive_split_bytes = 0;
  int64_t inactive_split_blocks = 0;
  int64_t num_device_alloc = 0;   // cudaMalloc calls and page mappings
  int64_t num_device_free = 0;    // cudaFree calls and page unmappings
  int64_t num_alloc_retries = 0;  // allocations that needed release_cached_blocks
  int64_t num_ooms = 0;
  PeakReservedMoment at_peak_reserved;
};

struct SegmentInfo {  // one cudaMalloc'ed segment or one expandable range
  int64_t address = 0;
  int64_t reserved_bytes = 0;  // segment size, or mapped bytes of an expandable range
  int64_t allocated_bytes = 0;
  bool is_small = false;
  bool is_expandable = false;
};

class CachingAllocatorSim {
 public:
  explicit CachingAllocatorSim(const AllocatorOptions& options);
  CachingAllocatorSim(const CachingAllocatorSim&) = delete;
  CachingAllocatorSim& operator=(const CachingAllocatorSim&) = delete;

  // malloc(): false when the request cannot be served (out of memory); the
  // cache released on the way stays released, as in the real allocator.
  // A live id, or a negative size, throws InternalError. Zero bytes take no
  // block (NativeCachingAllocator::allocate skips malloc for size 0).
  bool allocate(int64_t id, int64_t size_bytes);
  // free(): the id must be live, else InternalError.
  void free(int64_t id);
  // emptyCache(): release_cached_blocks.
  void empty_cache();
  // A fresh allocator under `options` (every block, segment and statistic
  // dropped), keeping the arena's, the id map's and the sets' capacity: the
  // stages of a pipeline replay one after another without regrowing them.
  void reset(const AllocatorOptions& options);

  const AllocatorStats& stats() const { return stats_; }
  int64_t block_bytes(int64_t id) const;  // size of the block serving a live id
  std::vector<SegmentInfo> segments() const;

  // round_size with roundup_power2_next_division; get_allocation_size.
  static int64_t round_size(int64_t size_bytes, int64_t roundup_power2_divisions);
  static int64_t allocation_size(int64_t rounded_bytes);

 private:
  using Block = caching_allocator_detail::SimBlock;
  using PoolKind = caching_allocator_detail::PoolKind;

  int32_t new_block(const Block& init);
  void recycle_block(int32_t index);
  caching_allocator_detail::SizeSet& free_set(PoolKind pool) {
    return free_[static_cast<int>(pool)];
  }
  caching_allocator_detail::AddressSet& unmapped_set(PoolKind pool) {
    return unmapped_[static_cast<int>(pool)];
  }
  void insert_free(int32_t index);
  void erase_free(int32_t index);
  int64_t max_split() const;

  // caching_allocator.cpp
  int32_t get_free_block(PoolKind pool, int64_t size);
  int32_t alloc_block(PoolKind pool, int64_t size, int64_t alloc_size, bool is_retry);
  bool should_split(const Block& block, int64_t size) const;
  int32_t alloc_found_block(int32_t index, int64_t size, int64_t requested, bool split);
  void free_block(int32_t index);
  int64_t try_merge_blocks(int32_t dst, int32_t src);
  bool release_available_cached_blocks(PoolKind pool, int64_t size);
  void release_cached_blocks();
  void release_blocks(PoolKind pool);
  void release_block(int32_t index);
  void note_reserved(int64_t delta);
  void finish_event();

  // caching_allocator_expandable.cpp
  int32_t try_allocate_expandable_block(PoolKind pool, int64_t size);
  int32_t find_expandable_block(PoolKind pool, int64_t size);
  bool map_block(int32_t index, int64_t size);
  void unmap_block(int32_t index);
  void release_expandable_segment(int32_t index);
  int64_t expandable_size(int32_t index) const;

  AllocatorOptions options_;
  AllocatorStats stats_;
  int64_t events_ = 0;
  int64_t next_address_ = int64_t{1} << 32;  // bump pointer for new segments
  std::vector<Block> blocks_;
  std::vector<int32_t> spare_blocks_;
  std::vector<int32_t> scratch_;  // release_blocks' to_unmap, reused
  std::vector<int32_t> released_;  // release_blocks' walk over a pool, reused
  std::vector<caching_allocator_detail::ExpandableRange> ranges_;
  caching_allocator_detail::IdMap live_;
  caching_allocator_detail::NodePool node_pool_;  // declared before the sets that use it
  caching_allocator_detail::SizeSet free_[2];
  caching_allocator_detail::AddressSet unmapped_[2];
};

struct TimelinePoint {      // maxima over the events since the previous point
  int64_t event_index = 0;  // last event covered
  int64_t allocated_bytes = 0;
  int64_t reserved_bytes = 0;
};

struct AllocatorReplay {
  AllocatorStats stats;
  int64_t events_replayed = 0;  // stops at the first OOM
  bool oom = false;
  int64_t oom_event_index = -1;
  int64_t oom_request_bytes = 0;
  std::vector<TimelinePoint> timeline;  // options.timeline_points > 0 only
};

// Replays the events in order. Freeing an id that is not live, allocating a
// live id or a negative size throws InternalError (callers produce valid
// traces). O(E log F) for E events and F cached free blocks.
AllocatorReplay replay(const std::vector<AllocEvent>& events, const AllocatorOptions& options);

}  // namespace trainsim
