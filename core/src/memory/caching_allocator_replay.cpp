// replay() over a trace, block_bytes() and the live-id map of the caching-allocator replay
// (caching_allocator.h).
#include <algorithm>

#include "memory/caching_allocator.h"
#include "trainsim/issue.h"

namespace trainsim {

namespace caching_allocator_detail {

IdMap::IdMap() : slots_(64), mask_(63) {}

size_t IdMap::home(int64_t id) const {  // splitmix64's finaliser
  auto x = static_cast<uint64_t>(id);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<size_t>(x ^ (x >> 31)) & mask_;
}

int32_t IdMap::find(int64_t id) const {
  for (size_t i = home(id);; i = (i + 1) & mask_) {
    if (slots_[i].block == kNoBlock) return kNoBlock;
    if (slots_[i].id == id) return slots_[i].block;
  }
}

void IdMap::insert(int64_t id, int32_t block) {
  if ((count_ + 1) * 2 > slots_.size()) grow();  // load factor <= 1/2
  size_t i = home(id);
  while (slots_[i].block != kNoBlock) i = (i + 1) & mask_;
  slots_[i] = Slot{id, block};
  ++count_;
}

int32_t IdMap::erase(int64_t id) {
  size_t i = home(id);
  while (slots_[i].id != id || slots_[i].block == kNoBlock) {
    if (slots_[i].block == kNoBlock) return kNoBlock;
    i = (i + 1) & mask_;
  }
  const int32_t block = slots_[i].block;
  // Backward shift: pull later entries of the probe run into the hole when
  // their home slot does not lie strictly between the hole and them.
  size_t hole = i;
  for (size_t j = (i + 1) & mask_; slots_[j].block != kNoBlock; j = (j + 1) & mask_) {
    const size_t distance_home = (j - home(slots_[j].id)) & mask_;
    if (distance_home >= ((j - hole) & mask_)) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole].block = kNoBlock;
  --count_;
  return block;
}

void IdMap::clear() {
  std::fill(slots_.begin(), slots_.end(), Slot{});
  count_ = 0;
}

void IdMap::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  mask_ = slots_.size() - 1;
  count_ = 0;
  for (const Slot& s : old) {
    if (s.block != kNoBlock) insert(s.id, s.block);
  }
}

}  // namespace caching_allocator_detail

int64_t CachingAllocatorSim::block_bytes(int64_t id) const {
  using caching_allocator_detail::kNoBlock;
  using caching_allocator_detail::kZeroSizeBlock;
  const int32_t index = live_.find(id);
  TRAINSIM_CHECK(index != kNoBlock, "caching allocator: block_bytes of an id that is not live");
  return index == kZeroSizeBlock ? 0 : blocks_[index].size_bytes;
}

AllocatorReplay replay(const std::vector<AllocEvent>& events, const AllocatorOptions& options) {
  AllocatorReplay out;
  CachingAllocatorSim sim(options);
  const auto count = static_cast<int64_t>(events.size());
  // The timeline keeps the maxima of each run of `stride` events, so peaks
  // survive the downsampling.
  const int64_t points = std::max<int64_t>(0, options.timeline_points);
  const int64_t stride = points > 0 ? std::max<int64_t>(1, (count + points - 1) / points) : 0;
  if (points > 0) out.timeline.reserve(static_cast<size_t>(std::min(points, count)));
  TimelinePoint pending;
  for (int64_t i = 0; i < count; ++i) {
    const AllocEvent& event = events[static_cast<size_t>(i)];
    if (event.is_free) {
      sim.free(event.id);
    } else if (!sim.allocate(event.id, event.size_bytes)) {
      out.oom = true;
      out.oom_event_index = i;
      out.oom_request_bytes = event.size_bytes;
    }
    if (stride > 0) {
      const AllocatorStats& s = sim.stats();
      pending.allocated_bytes = std::max(pending.allocated_bytes, s.allocated_bytes);
      pending.reserved_bytes = std::max(pending.reserved_bytes, s.reserved_bytes);
      if ((i + 1) % stride == 0 || i + 1 == count || out.oom) {
        pending.event_index = i;
        out.timeline.push_back(pending);
        pending = TimelinePoint{};
      }
    }
    if (out.oom) {
      out.events_replayed = i + 1;
      break;
    }
  }
  if (!out.oom) out.events_replayed = count;
  out.stats = sim.stats();
  return out;
}

}  // namespace trainsim
