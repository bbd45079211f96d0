// malloc and free paths of the caching-allocator replay (caching_allocator.h).
// Each function follows the DeviceCachingAllocator method of the same name in
// pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (commit eb42ad6e).
#include "memory/caching_allocator.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "trainsim/issue.h"

namespace trainsim {

using caching_allocator_detail::AddressKey;
using caching_allocator_detail::AddressSet;
using caching_allocator_detail::kNoBlock;
using caching_allocator_detail::kZeroSizeBlock;
using caching_allocator_detail::SizeKey;
using caching_allocator_detail::SizeSet;

namespace {

constexpr int64_t kLowestAddress = std::numeric_limits<int64_t>::min();

// increase_stat: current and its high-water mark.
void increase(int64_t& current, int64_t& peak, int64_t amount) {
  current += amount;
  peak = std::max(peak, current);
}

void check_options(const AllocatorOptions& options) {
  // AllocatorConfig::parseMaxSplitSize / parseMaxNonSplitRoundingSize reject
  // values under kLargeBuffer; parseRoundUpPower2Divisions wants powers of two.
  TRAINSIM_CHECK(
      !options.max_split_size_bytes || *options.max_split_size_bytes >= kAllocLargeSegmentBytes,
      "caching allocator: max_split_size must be at least 20 MiB");
  TRAINSIM_CHECK(options.max_non_split_rounding_bytes >= kAllocLargeSegmentBytes,
                 "caching allocator: max_non_split_rounding must be at least 20 MiB");
  TRAINSIM_CHECK(options.roundup_power2_divisions == 0 ||
                     (options.roundup_power2_divisions > 0 &&
                      std::has_single_bit(static_cast<uint64_t>(options.roundup_power2_divisions))),
                 "caching allocator: roundup_power2_divisions must be 0 or a power of two");
  TRAINSIM_CHECK(options.capacity_bytes > 0 && options.capacity_bytes <= (int64_t{1} << 50),
                 "caching allocator: capacity must be in (0, 2^50] bytes");
}

}  // namespace

CachingAllocatorSim::CachingAllocatorSim(const AllocatorOptions& options)
    : options_(options),
      free_{caching_allocator_detail::make_set<SizeSet>(node_pool_),
            caching_allocator_detail::make_set<SizeSet>(node_pool_)},
      unmapped_{caching_allocator_detail::make_set<AddressSet>(node_pool_),
                caching_allocator_detail::make_set<AddressSet>(node_pool_)} {
  check_options(options);
  blocks_.reserve(256);
}

void CachingAllocatorSim::reset(const AllocatorOptions& options) {
  check_options(options);
  options_ = options;
  stats_ = AllocatorStats{};
  events_ = 0;
  next_address_ = int64_t{1} << 32;
  blocks_.clear();
  spare_blocks_.clear();
  scratch_.clear();
  released_.clear();
  ranges_.clear();
  live_.clear();
  for (int pool = 0; pool < 2; ++pool) {
    free_[pool].clear();
    unmapped_[pool].clear();
  }
}

// round_size: under 512 B -> 512 B; with N > 1 divisions and size > 512 * N,
// roundup_power2_next_division (the power-of-two interval holding the size cut
// into N steps); otherwise the next multiple of 512 B. PyTorch at eb42ad6e
// tested `divisions > 0`, which returned sizes unrounded for N = 1; later
// versions test `divisions > 1`, as here. The docs' example (1200 B -> 1280 B
// with 4 divisions) is roundup_power2_next_division alone: round_size only
// applies it above 512 * N bytes, so 1200 B becomes 1536 B.
int64_t CachingAllocatorSim::round_size(int64_t size_bytes, int64_t divisions) {
  if (size_bytes < kAllocMinBlockBytes) return kAllocMinBlockBytes;
  if (divisions > 1 && size_bytes > kAllocMinBlockBytes * divisions) {
    const auto size = static_cast<uint64_t>(size_bytes);
    if (std::has_single_bit(size)) return size_bytes;
    const uint64_t floor = std::bit_floor(size);
    const uint64_t step = floor >> std::countr_zero(static_cast<uint64_t>(divisions));
    const uint64_t down = size & ~(step - 1);
    return static_cast<int64_t>(down == size ? size : down + step);
  }
  return kAllocMinBlockBytes * ((size_bytes + kAllocMinBlockBytes - 1) / kAllocMinBlockBytes);
}

// get_allocation_size: the cudaMalloc size when no cached block fits.
int64_t CachingAllocatorSim::allocation_size(int64_t rounded_bytes) {
  if (rounded_bytes <= kAllocSmallRequestMaxBytes) return kAllocSmallSegmentBytes;
  if (rounded_bytes < kAllocMinLargeAllocBytes) return kAllocLargeSegmentBytes;
  return kAllocLargeRoundBytes *
         ((rounded_bytes + kAllocLargeRoundBytes - 1) / kAllocLargeRoundBytes);
}

int64_t CachingAllocatorSim::max_split() const {
  return options_.max_split_size_bytes.value_or(std::numeric_limits<int64_t>::max());
}

int32_t CachingAllocatorSim::new_block(const Block& init) {
  if (!spare_blocks_.empty()) {
    const int32_t index = spare_blocks_.back();
    spare_blocks_.pop_back();
    blocks_[index] = init;
    return index;
  }
  blocks_.push_back(init);
  return static_cast<int32_t>(blocks_.size() - 1);
}

void CachingAllocatorSim::recycle_block(int32_t index) {
  blocks_[index].size_bytes = -1;  // marks the slot as unused for segments()
  spare_blocks_.push_back(index);
}

void CachingAllocatorSim::insert_free(int32_t index) {
  const Block& b = blocks_[index];
  free_set(b.pool).insert(SizeKey{b.size_bytes, b.address, index});
}

void CachingAllocatorSim::erase_free(int32_t index) {
  const Block& b = blocks_[index];
  free_set(b.pool).erase(SizeKey{b.size_bytes, b.address, index});
}

void CachingAllocatorSim::note_reserved(int64_t delta) {
  increase(stats_.reserved_bytes, stats_.peak_reserved_bytes, delta);
}

void CachingAllocatorSim::finish_event() {
  if (stats_.reserved_bytes > stats_.at_peak_reserved.reserved_bytes) {
    stats_.at_peak_reserved = {events_, stats_.reserved_bytes, stats_.allocated_bytes};
  }
  ++events_;
}

// malloc: round, pick the pool, reuse a cached block or get a new one through
// the retry ladder, then split the block if should_split says so.
bool CachingAllocatorSim::allocate(int64_t id, int64_t size_bytes) {
  TRAINSIM_CHECK(size_bytes >= 0, "caching allocator: negative request size");
  TRAINSIM_CHECK(live_.find(id) == kNoBlock, "caching allocator: allocation id is already live");
  if (size_bytes == 0) {
    live_.insert(id, kZeroSizeBlock);
    finish_event();
    return true;
  }
  const int64_t size = round_size(size_bytes, options_.roundup_power2_divisions);
  const PoolKind pool =
      size <= kAllocSmallRequestMaxBytes ? PoolKind::kSmall : PoolKind::kLarge;  // get_pool
  const int64_t alloc_size = allocation_size(size);

  int32_t block = get_free_block(pool, size);
  if (block == kNoBlock) block = alloc_block(pool, size, alloc_size, false);
  // "Free enough available cached blocks to satisfy alloc and retry alloc."
  if (block == kNoBlock && release_available_cached_blocks(pool, size)) {
    block = alloc_block(pool, size, alloc_size, false);
  }
  // "Free all non-split cached blocks and retry alloc."
  if (block == kNoBlock) {
    release_cached_blocks();
    block = alloc_block(pool, size, alloc_size, true);
  }
  if (block == kNoBlock) {
    ++stats_.num_ooms;
    finish_event();
    return false;
  }
  live_.insert(id, alloc_found_block(block, size, size_bytes, should_split(blocks_[block], size)));
  finish_event();
  return true;
}

// get_free_block: the smallest cached block of at least `size` (lower_bound
// on (size, address)), with the max_split_size rules: a request under the
// limit never takes an oversize block, and a request at or over it takes one
// only if that wastes less than max_non_split_rounding (kLargeBuffer, 20 MiB,
// at eb42ad6e; configurable later).
int32_t CachingAllocatorSim::get_free_block(PoolKind pool, int64_t size) {
  SizeSet& set = free_set(pool);
  auto it = set.lower_bound(SizeKey{size, kLowestAddress, kNoBlock});
  if (it == set.end()) return kNoBlock;
  if (blocks_[it->block].expandable()) {
    // A block that can grow into unmapped pages counts with that room, so the
    // walk moves on while the next candidate could grow less.
    auto next = std::next(it);
    while (blocks_[it->block].expandable() && next != set.end() &&
           expandable_size(next->block) < expandable_size(it->block)) {
      it = next++;
    }
  }
  const int64_t limit = max_split();
  if (size < limit && it->size_bytes >= limit) return kNoBlock;
  if (size >= limit && it->size_bytes >= size + options_.max_non_split_rounding_bytes)
    return kNoBlock;
  const int32_t index = it->block;
  set.erase(it);
  return index;
}

// alloc_block: a new cudaMalloc segment of get_allocation_size bytes, or with
// expandable segments more mapped pages (try_allocate_expandable_block).
int32_t CachingAllocatorSim::alloc_block(PoolKind pool, int64_t size, int64_t alloc_size,
                                         bool is_retry) {
  if (is_retry) ++stats_.num_alloc_retries;
  if (options_.expandable_segments) return try_allocate_expandable_block(pool, size);
  if (stats_.reserved_bytes + alloc_size > options_.capacity_bytes)
    return kNoBlock;  // cudaMalloc fails
  Block segment;
  segment.address = next_address_;
  segment.size_bytes = alloc_size;
  segment.pool = pool;
  next_address_ += alloc_size;
  const int32_t index = new_block(segment);
  increase(stats_.segments, stats_.peak_segments, 1);
  note_reserved(alloc_size);
  ++stats_.num_device_alloc;
  return index;
}

// should_split: the small pool and expandable segments split whenever 512 B
// remain; the large pool only for requests under max_split_size that leave
// more than kSmallSize (1 MiB).
bool CachingAllocatorSim::should_split(const Block& block, int64_t size) const {
  const int64_t remaining = block.size_bytes - size;
  if (block.pool == PoolKind::kSmall || options_.expandable_segments) {
    return remaining >= kAllocMinBlockBytes;
  }
  return size < max_split() && remaining > kAllocSmallRequestMaxBytes;
}

// alloc_found_block: the front `size` bytes become the allocation, the rest
// stays cached in the pool; inactive_split tracks free pieces of split
// cudaMalloc segments (expandable blocks are left out, as upstream).
int32_t CachingAllocatorSim::alloc_found_block(int32_t index, int64_t size, int64_t requested,
                                               bool split) {
  const bool already_split = blocks_[index].is_split();
  const bool expandable = blocks_[index].expandable();
  int32_t served = index;
  if (split) {
    Block front = blocks_[index];
    front.size_bytes = size;
    front.next = index;
    served = new_block(front);
    if (front.prev != kNoBlock) blocks_[front.prev].next = served;
    Block& rest = blocks_[index];
    rest.prev = served;
    rest.address += size;
    rest.size_bytes -= size;
    insert_free(index);
    if (already_split && !expandable) {
      stats_.inactive_split_bytes -= size;
    } else if (!expandable) {
      increase(stats_.inactive_split_bytes, stats_.peak_inactive_split_bytes, rest.size_bytes);
      ++stats_.inactive_split_blocks;
    }
  } else if (already_split && !expandable) {
    stats_.inactive_split_bytes -= blocks_[index].size_bytes;
    --stats_.inactive_split_blocks;
  }
  Block& b = blocks_[served];
  b.allocated = true;
  b.requested_bytes = requested;
  increase(stats_.allocated_bytes, stats_.peak_allocated_bytes, b.size_bytes);
  increase(stats_.requested_bytes, stats_.peak_requested_bytes, requested);
  increase(stats_.allocations, stats_.peak_allocations, 1);
  return served;
}

void CachingAllocatorSim::free(int64_t id) {
  const int32_t index = live_.erase(id);
  TRAINSIM_CHECK(index != kNoBlock,
                 "caching allocator: free of an id that is not live (unknown or freed twice)");
  if (index != kZeroSizeBlock) {
    Block& b = blocks_[index];
    b.allocated = false;
    stats_.allocated_bytes -= b.size_bytes;
    stats_.requested_bytes -= b.requested_bytes;
    --stats_.allocations;
    free_block(index);
  }
  finish_event();
}

// free_block: merge with the free neighbours of the same segment, cache the
// result, and update inactive_split by the net change.
void CachingAllocatorSim::free_block(int32_t index) {
  int64_t net_blocks = 0;
  int64_t net_bytes = 0;
  const int32_t neighbours[2] = {blocks_[index].prev, blocks_[index].next};
  for (const int32_t neighbour : neighbours) {
    const int64_t subsumed = try_merge_blocks(index, neighbour);
    if (subsumed > 0) {
      --net_blocks;
      net_bytes -= subsumed;
    }
  }
  Block& b = blocks_[index];
  b.requested_bytes = 0;
  insert_free(index);
  if (b.is_split()) {
    ++net_blocks;
    net_bytes += b.size_bytes;
  }
  if (!b.expandable()) {
    stats_.inactive_split_blocks += net_blocks;
    increase(stats_.inactive_split_bytes, stats_.peak_inactive_split_bytes, net_bytes);
  }
}

// try_merge_blocks: dst absorbs src when src is free and equally (un)mapped;
// returns the bytes absorbed. dst must not be in a set (its key changes).
int64_t CachingAllocatorSim::try_merge_blocks(int32_t dst, int32_t src) {
  if (src == kNoBlock) return 0;
  const Block s = blocks_[src];
  Block& d = blocks_[dst];
  if (s.allocated || s.mapped != d.mapped) return 0;
  if (d.prev == src) {  // [src dst]
    d.address = s.address;
    d.prev = s.prev;
    if (s.prev != kNoBlock) blocks_[s.prev].next = dst;
  } else {  // [dst src]
    d.next = s.next;
    if (s.next != kNoBlock) blocks_[s.next].prev = dst;
  }
  d.size_bytes += s.size_bytes;
  if (s.mapped) {
    free_set(s.pool).erase(SizeKey{s.size_bytes, s.address, src});
  } else {
    unmapped_set(s.pool).erase(AddressKey{s.address, src});
  }
  recycle_block(src);
  return s.size_bytes;
}

// release_available_cached_blocks (only with max_split_size set): cudaFree the
// smallest cached oversize block of at least max(size, max_split_size); if
// none, the largest oversize blocks downwards until that many bytes are freed.
// Expandable blocks are skipped (upstream PR #134338).
bool CachingAllocatorSim::release_available_cached_blocks(PoolKind pool, int64_t size) {
  if (!options_.max_split_size_bytes) return false;
  const int64_t limit = *options_.max_split_size_bytes;
  const int64_t target = std::max(size, limit);
  SizeSet& set = free_set(pool);
  auto it = set.lower_bound(SizeKey{target, kLowestAddress, kNoBlock});
  if (it != set.end() && !blocks_[it->block].expandable()) {
    // Oversize cached blocks are whole segments: requests under the limit
    // never take them and requests over it never split them.
    TRAINSIM_CHECK(!blocks_[it->block].is_split(),
                   "caching allocator: oversize cached block is split");
    release_block(it->block);
    return true;
  }
  if (it == set.begin()) return false;
  int64_t released = 0;
  --it;
  while (released < target && it->size_bytes >= limit) {
    const auto current = it;
    const bool is_first = current == set.begin();
    if (!is_first) --it;
    const int32_t index = current->block;
    if (!blocks_[index].expandable() && !blocks_[index].is_split()) {
      released += blocks_[index].size_bytes;
      release_block(index);
    }
    if (is_first) break;
  }
  return released >= target;
}

// release_cached_blocks: release_blocks on the large pool, then the small one.
void CachingAllocatorSim::release_cached_blocks() {
  release_blocks(PoolKind::kLarge);
  release_blocks(PoolKind::kSmall);
}

void CachingAllocatorSim::empty_cache() { release_cached_blocks(); }

// release_blocks: cudaFree every cached block that is a whole segment; unmap
// the free pages of expandable blocks and drop ranges left fully unmapped.
void CachingAllocatorSim::release_blocks(PoolKind pool) {
  // In the pool's order; releasing a block erases it from the pool, so the list is taken first.
  released_.clear();
  for (const SizeKey& key : free_set(pool)) released_.push_back(key.block);
  scratch_.clear();
  for (const int32_t index : released_) {
    if (blocks_[index].expandable()) {
      scratch_.push_back(index);
    } else if (!blocks_[index].is_split()) {
      release_block(index);
    }
  }
  for (const int32_t index : scratch_) {
    unmap_block(index);
    if (!blocks_[index].mapped && !blocks_[index].is_split()) release_expandable_segment(index);
  }
}

// release_block: cudaFree one cached whole segment.
void CachingAllocatorSim::release_block(int32_t index) {
  erase_free(index);
  note_reserved(-blocks_[index].size_bytes);
  --stats_.segments;
  ++stats_.num_device_free;
  recycle_block(index);
}

}  // namespace trainsim
