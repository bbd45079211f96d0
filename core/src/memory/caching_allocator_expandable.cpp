// expandable_segments:True in the caching-allocator replay (caching_allocator.h).
// Follows Note [Expandable Segments] and DeviceCachingAllocator's
// find_expandable_block, map_block, try_allocate_expandable_block, unmap_block
// and release_expandable_segment in pytorch/pytorch
// c10/cuda/CUDACachingAllocator.cpp (commit eb42ad6e), with struct
// ExpandableSegment's map/unmap page arithmetic.
//
// Each pool gets one virtual range (ExpandableSegment) of about 1.125 times the
// device memory, backed page by page: 2 MiB pages for the small pool, 20 MiB
// (kLargeBuffer) for the large one. A request that no cached block serves maps
// the pages it needs at the lowest address with enough free-or-unmapped room,
// normally the end of the mapped part, and merges with the free block before
// it, so freed memory anywhere in the range is reused by larger requests once
// its neighbours are free too. Pages are unmapped only by release_cached_blocks
// (the OOM retry or empty_cache), never on free, so reserved memory keeps its
// high-water mark in whole pages until then.
#include <algorithm>

#include "memory/caching_allocator.h"
#include "trainsim/issue.h"

namespace trainsim {

using caching_allocator_detail::AddressKey;
using caching_allocator_detail::ExpandableRange;
using caching_allocator_detail::kNoBlock;

// get_free_block's expandable_size: a free block's size plus the unmapped
// room right after it.
int64_t CachingAllocatorSim::expandable_size(int32_t index) const {
  const Block& b = blocks_[index];
  const bool grows = b.next != kNoBlock && !blocks_[b.next].mapped;
  return b.size_bytes + (grows ? blocks_[b.next].size_bytes : 0);
}

// try_allocate_expandable_block: map the candidate, then map the unmapped
// blocks after it until it holds `size` bytes; a failed mapping (capacity)
// keeps the pages already mapped, as upstream.
int32_t CachingAllocatorSim::try_allocate_expandable_block(PoolKind pool, int64_t size) {
  int32_t candidate = find_expandable_block(pool, size);
  if (!blocks_[candidate].mapped &&
      !map_block(candidate, std::min(blocks_[candidate].size_bytes, size))) {
    return kNoBlock;
  }
  while (blocks_[candidate].size_bytes < size) {
    const int32_t next = blocks_[candidate].next;
    const int64_t remaining = size - blocks_[candidate].size_bytes;
    if (!map_block(next, std::min(remaining, blocks_[next].size_bytes))) return kNoBlock;
    candidate = next;  // map_block merged the candidate into it
  }
  erase_free(candidate);
  return candidate;
}

// find_expandable_block: the lowest-address unmapped block (or the free block
// before it) starting a run of free and unmapped blocks of at least `size`;
// else a new ExpandableSegment for the pool.
int32_t CachingAllocatorSim::find_expandable_block(PoolKind pool, int64_t size) {
  const auto allocatable = [this](int32_t i) { return i != kNoBlock && !blocks_[i].allocated; };
  const auto has_room = [&](int32_t i) {
    int64_t bytes = 0;
    while (bytes < size && allocatable(i)) {
      bytes += blocks_[i].size_bytes;
      i = blocks_[i].next;
    }
    return bytes >= size;
  };
  for (const AddressKey& key : unmapped_set(pool)) {
    int32_t candidate = key.block;
    if (allocatable(blocks_[candidate].prev)) candidate = blocks_[candidate].prev;
    if (has_room(candidate)) return candidate;
  }
  // ExpandableSegment's constructor reserves numSegments(1.125 * total memory)
  // pages of address space.
  ExpandableRange range;
  range.page_bytes = pool == PoolKind::kSmall ? kAllocSmallSegmentBytes : kAllocLargeSegmentBytes;
  const int64_t device = options_.capacity_bytes;
  range.virtual_bytes =
      (device + device / 8 + range.page_bytes - 1) / range.page_bytes * range.page_bytes;
  range.base_address = next_address_;
  range.live = true;
  next_address_ += range.virtual_bytes;
  ranges_.push_back(range);
  ++stats_.expandable_ranges;
  Block whole;
  whole.address = range.base_address;
  whole.size_bytes = range.virtual_bytes;
  whole.pool = pool;
  whole.mapped = false;
  whole.expandable_segment = static_cast<int32_t>(ranges_.size() - 1);
  const int32_t index = new_block(whole);
  unmapped_set(pool).insert(AddressKey{whole.address, index});
  return index;
}

// map_block: back [address, address + size) of an unmapped block with whole
// pages (ExpandableSegment::map rounds the end up to a page); the unmapped
// rest splits off; the mapped part merges with free mapped neighbours and is
// cached. Mapping is all or nothing against the capacity (cuMemCreate).
bool CachingAllocatorSim::map_block(int32_t index, int64_t size) {
  const Block b = blocks_[index];
  const ExpandableRange& range = ranges_[b.expandable_segment];
  const int64_t offset = b.address - range.base_address;
  const int64_t begin = offset / range.page_bytes;
  const int64_t end = (offset + size + range.page_bytes - 1) / range.page_bytes;
  const int64_t bytes = (end - begin) * range.page_bytes;
  if (stats_.reserved_bytes + bytes > options_.capacity_bytes) return false;
  unmapped_set(b.pool).erase(AddressKey{b.address, index});
  blocks_[index].mapped = true;
  if (bytes < b.size_bytes) {
    Block rest = b;
    rest.address = b.address + bytes;
    rest.size_bytes = b.size_bytes - bytes;
    rest.prev = index;
    const int32_t rest_index = new_block(rest);
    if (b.next != kNoBlock) blocks_[b.next].prev = rest_index;
    blocks_[index].next = rest_index;
    blocks_[index].size_bytes = bytes;
    unmapped_set(b.pool).insert(AddressKey{rest.address, rest_index});
  }
  try_merge_blocks(index, blocks_[index].prev);
  try_merge_blocks(index, blocks_[index].next);
  insert_free(index);
  note_reserved(bytes);
  ++stats_.num_device_alloc;
  return true;
}

// unmap_block: release the whole pages inside a free block (begin rounded up,
// end rounded down, as ExpandableSegment::unmap); partial pages at either end
// stay mapped as free blocks; the unmapped part merges with unmapped neighbours.
void CachingAllocatorSim::unmap_block(int32_t index) {
  const Block b = blocks_[index];
  const ExpandableRange& range = ranges_[b.expandable_segment];
  const int64_t page = range.page_bytes;
  const int64_t offset = b.address - range.base_address;
  const int64_t begin = (offset + page - 1) / page;
  const int64_t end = (offset + b.size_bytes) / page;
  if (begin >= end) return;
  erase_free(index);
  const int64_t start = range.base_address + begin * page;
  const int64_t bytes = (end - begin) * page;
  const int64_t before = start - b.address;
  const int64_t after = b.size_bytes - before - bytes;
  if (before > 0) {
    Block piece = b;
    piece.size_bytes = before;
    piece.next = index;
    const int32_t piece_index = new_block(piece);
    if (b.prev != kNoBlock) blocks_[b.prev].next = piece_index;
    blocks_[index].prev = piece_index;
    insert_free(piece_index);
  }
  if (after > 0) {
    Block piece = b;
    piece.address = start + bytes;
    piece.size_bytes = after;
    piece.prev = index;
    const int32_t piece_index = new_block(piece);
    if (b.next != kNoBlock) blocks_[b.next].prev = piece_index;
    blocks_[index].next = piece_index;
    insert_free(piece_index);
  }
  Block& u = blocks_[index];
  u.address = start;
  u.size_bytes = bytes;
  u.mapped = false;
  try_merge_blocks(index, blocks_[index].prev);
  try_merge_blocks(index, blocks_[index].next);
  unmapped_set(b.pool).insert(AddressKey{blocks_[index].address, index});
  note_reserved(-bytes);
  ++stats_.num_device_free;
}

// release_expandable_segment: a range with no mapped page left goes away.
void CachingAllocatorSim::release_expandable_segment(int32_t index) {
  const Block& b = blocks_[index];
  ExpandableRange& range = ranges_[b.expandable_segment];
  TRAINSIM_CHECK(!b.mapped && b.size_bytes == range.virtual_bytes,
                 "caching allocator: expandable block disagrees with its segment");
  unmapped_set(b.pool).erase(AddressKey{b.address, index});
  range.live = false;
  --stats_.expandable_ranges;
  recycle_block(index);
}

// snapshot(): per cudaMalloc segment, and per expandable range its mapped bytes.
std::vector<SegmentInfo> CachingAllocatorSim::segments() const {
  std::vector<SegmentInfo> out;
  for (const Block& head : blocks_) {
    if (head.size_bytes < 0 || head.prev != kNoBlock || head.expandable()) continue;
    SegmentInfo info{head.address, 0, 0, head.pool == PoolKind::kSmall, false};
    for (const Block* b = &head;; b = &blocks_[b->next]) {
      info.reserved_bytes += b->size_bytes;
      if (b->allocated) info.allocated_bytes += b->size_bytes;
      if (b->next == kNoBlock) break;
    }
    out.push_back(info);
  }
  for (size_t r = 0; r < ranges_.size(); ++r) {
    if (!ranges_[r].live) continue;
    SegmentInfo info{ranges_[r].base_address, 0, 0, false, true};
    for (const Block& b : blocks_) {
      if (b.size_bytes < 0 || b.expandable_segment != static_cast<int32_t>(r)) continue;
      info.is_small = b.pool == PoolKind::kSmall;
      if (b.mapped) info.reserved_bytes += b.size_bytes;
      if (b.allocated) info.allocated_bytes += b.size_bytes;
    }
    out.push_back(info);
  }
  std::sort(out.begin(), out.end(),
            [](const SegmentInfo& a, const SegmentInfo& b) { return a.address < b.address; });
  return out;
}

}  // namespace trainsim
