#include "search/floor.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace trainsim {
namespace {

// Representatives are tried on at most this many stage splits of a class.
constexpr size_t kRepresentativeSplits = 4;

SearchSpec without_recompute(const SearchSpec& spec) {
  SearchSpec copy = spec;
  copy.recompute = {RecomputeMode{}};
  return copy;
}

}  // namespace

SearchFloors::SearchFloors(const SearchSpec& spec, const SearchSpace& space)
    : spec_(spec),
      space_(space),
      representative_spec_(without_recompute(spec)),
      checker_(representative_spec_),
      evaluator_(representative_spec_, 0.0) {}

SearchFloors::Key SearchFloors::key_of(const LayoutClass& c, const SubBlock& b) {
  Key key{c.num_gpus, c.tp, c.cp, c.ep, c.etp, b.sequence_parallel ? 1 : 0, b.micro_batch_size,
          b.zero_stage};
  for (size_t d = 0; d < kMaxChoiceDimensions; ++d) key[9 + d] = b.choice[d];
  return key;
}

void SearchFloors::measure(const LayoutClass& layout) {
  std::vector<std::pair<int32_t, int32_t>> splits;
  for (const StagePlan& plan : space_.stage_plans(layout.pp)) {
    const std::pair<int32_t, int32_t> split{plan.first_stage_layers, plan.last_stage_layers};
    if (std::find(splits.begin(), splits.end(), split) == splits.end()) splits.push_back(split);
    if (splits.size() == kRepresentativeSplits) break;
  }
  for (const SubBlock& block : space_.sub_blocks(layout)) {
    const Key key = key_of(layout, block);
    if (work_s_.count(key) > 0) continue;
    for (const auto& [first, last] : splits) {
      StagePlan plan;
      plan.first_stage_layers = first;
      plan.last_stage_layers = last;
      Candidate c = make_candidate(layout, block, plan);
      if (checker_.check(c) != nullptr) continue;
      const Estimate e = evaluator_.time_bound(c);
      double work_s = 0.0;
      for (const StageTime& s : e.time.stages) {
        work_s += s.forward_per_micro_batch_s + s.backward_per_micro_batch_s;
      }
      work_s_.emplace(key, work_s);
      break;
    }
  }
}

double SearchFloors::time_floor_s(const LayoutClass& layout, const SubBlock& block) const {
  const auto found = work_s_.find(key_of(layout, block));
  if (found == work_s_.end()) return 0.0;
  const double micro_batches = static_cast<double>(spec_.global_batch_size) /
                               (static_cast<double>(layout.dp) * block.micro_batch_size);
  return micro_batches * found->second / static_cast<double>(layout.pp) * (1.0 - kBoundMargin);
}

double SearchFloors::class_floor_s(const LayoutClass& layout) const {
  double floor = std::numeric_limits<double>::infinity();
  for (const SubBlock& block : space_.sub_blocks(layout)) {
    const double s = time_floor_s(layout, block);
    if (s > 0.0) floor = std::min(floor, s);
  }
  return floor;
}

double static_floor_bytes(const StaticMemoryBound& bound, Config& scratch,
                          const LayoutClass& layout, const SubBlock& block) {
  ParallelSpec& p = scratch.training.parallel;
  p.tp = layout.tp;
  p.cp = layout.cp;
  p.pp = layout.pp;
  p.dp = layout.dp;
  p.ep = layout.ep;
  p.etp = layout.etp;
  scratch.system.num_gpus = layout.num_gpus;
  scratch.training.zero_stage = block.zero_stage;
  return bound.layout_lower_bound_bytes(scratch);
}

}  // namespace trainsim
