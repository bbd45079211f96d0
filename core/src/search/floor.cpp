#include "search/floor.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "search/choices.h"

namespace trainsim {
namespace {

// Representatives are tried on at most this many stage splits of a class.
constexpr size_t kRepresentativeSplits = 4;

// W of a representative: each stage's busy time over the step (its compute,
// host waits and exposed TP/CP/EP communication, time/step_time.cpp) per
// micro-batch of the step, which counts a DualPipe chunk's half of the
// micro-batches. Under DualPipe(V) the overlapped forward-backward pairs may
// hide every expert all-to-all (time/schedule_check.cpp overlapped_pair_s: a
// pair takes at least its compute), so EP is left out of their W; so it is under
// EP overlap and shared-expert overlap (time/ep_overlap.h: a merged step takes at
// least both passes' compute), whose hidden share depends on the micro-batches.
double work_per_micro_batch_s(const Estimate& e, const Candidate& c, const TrainingSpec& t) {
  const PipelineSchedule schedule = t.parallel.schedule;
  const bool overlaps = schedule == PipelineSchedule::kDualPipe || schedule == PipelineSchedule::kDualPipeV ||
                        t.overlap.moe_ep_comm || t.overlap.moe_shared_expert;
  double busy_s = 0.0;
  for (const StageTime& s : e.time.stages) {
    const TimeBreakdown& b = s.breakdown;
    busy_s += b.forward_s + b.backward_s + b.recompute_s + b.host_overhead_s + b.tp_comm_exposed_s +
              b.cp_comm_exposed_s + b.activation_offload_exposed_s + (overlaps ? 0.0 : b.ep_comm_exposed_s);
  }
  return busy_s / static_cast<double>(c.num_micro_batches);
}

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
      evaluator_(representative_spec_, 0.0),
      schedule_scratch_(spec.training) {}

SearchFloors::Key SearchFloors::key_of(const LayoutClass& c, const SubBlock& b) {
  Key key{c.num_gpus, c.tp, c.cp, c.ep, c.etp, b.sequence_parallel ? 1 : 0, b.micro_batch_size,
          b.zero_stage};
  for (size_t d = 0; d < kMaxChoiceDimensions; ++d) key[9 + d] = b.choice[d];
  return key;
}

void SearchFloors::measure(const LayoutClass& layout) {
  // Representatives: the first splits of the class, each with the vpp values its
  // stage plans try (a V-shaped schedule needs vpp 2, a fixed pipeline_layout its own).
  std::vector<std::array<int32_t, 3>> plans;
  size_t splits = 0;
  for (const StagePlan& plan : space_.stage_plans(layout.pp)) {
    const std::array<int32_t, 3> key{plan.first_stage_layers, plan.last_stage_layers, plan.vpp};
    if (std::find(plans.begin(), plans.end(), key) != plans.end()) continue;
    const bool new_split = plans.empty() || plans.back()[0] != key[0] || plans.back()[1] != key[1];
    if (new_split && ++splits > kRepresentativeSplits) break;
    plans.push_back(key);
  }
  for (const SubBlock& block : space_.sub_blocks(layout)) {
    const Key key = key_of(layout, block);
    if (work_s_.count(key) > 0) continue;
    for (const auto& [first, last, vpp] : plans) {
      StagePlan plan;
      plan.first_stage_layers = first;
      plan.last_stage_layers = last;
      plan.vpp = vpp;
      Candidate c = make_candidate(layout, block, plan);
      if (checker_.check(c) != nullptr) continue;
      TrainingSpec& t = schedule_scratch_;
      for (size_t d = 0; d < choice_dimensions().size(); ++d) {
        choice_dimensions()[d].set(t, c.choice[d]);
      }
      const Estimate bound = evaluator_.time_bound(c);
      work_s_.emplace(key, work_per_micro_batch_s(bound, c, t));
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
