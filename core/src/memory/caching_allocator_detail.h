// Bookkeeping types of the caching-allocator replay (caching_allocator.h).
// They mirror c10/cuda/CUDACachingAllocator.cpp (pytorch/pytorch, read at
// commit eb42ad6eca0ce61e7c581212b4bf32f991425571): struct Block, struct
// BlockPool (blocks ordered by BlockComparatorSize, unmapped by
// BlockComparatorAddress) and struct ExpandableSegment. Blocks live in one
// arena addressed by int32 index instead of one heap node each; the ordered
// sets draw their nodes from a pool resource, so a warm replay allocates
// nothing per event. Emscripten 3.1.6's libc++ (the WebAssembly build) has no
// <memory_resource>: there the sets are plain std::set, with the same
// contents and order, only more heap calls.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>
#if __has_include(<memory_resource>)
#include <memory_resource>
#define TRAINSIM_POOLED_SETS 1
#else
#define TRAINSIM_POOLED_SETS 0
#endif

namespace trainsim::caching_allocator_detail {

inline constexpr int32_t kNoBlock = -1;
inline constexpr int32_t kZeroSizeBlock = -2;  // a live id of a 0-byte request: no block

enum class PoolKind : uint8_t { kSmall = 0, kLarge = 1 };

// Block: one contiguous address range of a segment, free, allocated or (in an
// expandable segment) not backed by physical pages. prev/next link the blocks
// of one segment in address order (Block::prev / Block::next).
struct SimBlock {
  int64_t address = 0;
  int64_t size_bytes = 0;
  int64_t requested_bytes = 0;  // Block::requested_size: the caller's size
  int32_t prev = kNoBlock;
  int32_t next = kNoBlock;
  int32_t expandable_segment = -1;  // index into the expandable segments; -1: cudaMalloc segment
  PoolKind pool = PoolKind::kLarge;
  bool allocated = false;
  bool mapped = true;  // Block::mapped: always true outside expandable segments

  bool is_split() const { return prev != kNoBlock || next != kNoBlock; }
  bool expandable() const { return expandable_segment >= 0; }
};

// Key of BlockPool::blocks: BlockComparatorSize orders by (stream, size, ptr);
// one stream is modelled, so (size, address).
struct SizeKey {
  int64_t size_bytes;
  int64_t address;
  int32_t block;
};
struct SizeKeyLess {
  bool operator()(const SizeKey& a, const SizeKey& b) const {
    return a.size_bytes != b.size_bytes ? a.size_bytes < b.size_bytes : a.address < b.address;
  }
};

// Key of BlockPool::unmapped: BlockComparatorAddress, (stream, ptr).
struct AddressKey {
  int64_t address;
  int32_t block;
};
struct AddressKeyLess {
  bool operator()(const AddressKey& a, const AddressKey& b) const { return a.address < b.address; }
};

#if TRAINSIM_POOLED_SETS
using NodePool = std::pmr::unsynchronized_pool_resource;
template <class Key, class Less>
using PooledSet = std::pmr::set<Key, Less>;
template <class Set>
Set make_set(NodePool& pool) {
  return Set(&pool);
}
#else
struct NodePool {};
template <class Key, class Less>
using PooledSet = std::set<Key, Less>;
template <class Set>
Set make_set(NodePool& /*pool*/) {
  return Set();
}
#endif
// BlockPool::blocks. (A sorted array was tried natively: faster while a pool
// caches tens to hundreds of free blocks, but each insert moves the array, so
// a model of 100,000 layers, whose pools cache as many blocks, took 2 minutes
// instead of 2.5 s: the tree keeps every replay O(events log blocks).)
using SizeSet = PooledSet<SizeKey, SizeKeyLess>;
using AddressSet = PooledSet<AddressKey, AddressKeyLess>;

// ExpandableSegment: one reserved virtual range of a pool, mapped page by page
// (2 MiB pages in the small pool, 20 MiB in the large one).
struct ExpandableRange {
  int64_t base_address = 0;
  int64_t page_bytes = 0;
  int64_t virtual_bytes = 0;  // max_handles_ * segment_size_
  bool live = false;
};

// Live allocation id -> block index: open addressing with linear probing and
// backward-shift deletion, so lookups touch one or two cache lines and erasing
// leaves no tombstones.
class IdMap {
 public:
  IdMap();
  int32_t find(int64_t id) const;          // kNoBlock when absent
  void insert(int64_t id, int32_t block);  // id must be absent
  int32_t erase(int64_t id);               // kNoBlock when absent
  void clear();                            // empty, keeping the slots
  int64_t size() const { return static_cast<int64_t>(count_); }

 private:
  struct Slot {
    int64_t id = 0;
    int32_t block = kNoBlock;  // kNoBlock: empty slot
  };
  size_t home(int64_t id) const;
  void grow();
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t count_ = 0;
};

}  // namespace trainsim::caching_allocator_detail
