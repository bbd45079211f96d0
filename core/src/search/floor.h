// Lower bounds for whole sub-blocks of a layout class (space.h), known before
// any of their members is validated, so that a search can skip the blocks
// that cannot make its top K or its Pareto front:
//  - time: every stage runs m micro-batches of its forward and backward
//    passes one after another, so the step takes at least m x (F + B) of its
//    busiest stage, which is at least the average over the pp stages. The
//    per-micro-batch F + B summed over all stages is the work of every layer,
//    the embedding and the head once: it does not depend on pp, the stage
//    split, vpp or the number of micro-batches, and recompute only adds to it.
//    So a block's floor is m x W / pp, with W measured once per (GPU count,
//    tp, cp, ep, etp, sequence parallelism, choice keys, micro-batch size,
//    ZeRO stage) on a representative plan without recompute; DP communication,
//    the optimizer and the pipeline bubble only add to the step. A DualPipe
//    chunk runs half the micro-batches, and DualPipe(V) may hide every expert
//    all-to-all behind compute: W counts both (floor.cpp).
//  - memory: the static-memory bound of the average stage (memory_bound.h).
// tests/search/bounds_test.cpp checks both against the estimate of every
// member of random classes on every preset; the brute-force test checks the
// search that skips with them.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "search/enumerate.h"
#include "search/evaluator.h"
#include "search/memory_bound.h"
#include "search/space.h"

namespace trainsim {

class SearchFloors {
 public:
  SearchFloors(const SearchSpec& spec, const SearchSpace& space);

  // Measures W for the blocks of `layout` not yet known, from a representative
  // of this class (an even or the first valid uneven split, with the first vpp
  // of its stage plans that is valid, no recompute); a block whose
  // representative is invalid here stays unknown.
  void measure(const LayoutClass& layout);

  // The block's step-time floor in seconds; 0 when unknown (never skips).
  double time_floor_s(const LayoutClass& layout, const SubBlock& block) const;

  // The smallest known time floor of a class's blocks (infinity when none is known).
  double class_floor_s(const LayoutClass& layout) const;

 private:
  using Key = std::array<int32_t, 9 + kMaxChoiceDimensions>;
  static Key key_of(const LayoutClass& layout, const SubBlock& block);

  const SearchSpec& spec_;
  const SearchSpace& space_;
  SearchSpec representative_spec_;  ///< the search with one recompute mode: none
  CandidateChecker checker_;
  CandidateEvaluator evaluator_;
  std::map<Key, double> work_s_;  ///< W per key (per-micro-batch F + B over all stages)
  TrainingSpec schedule_scratch_;  ///< the choice keys of a representative written into it
};

// Static memory of every member of the block is at least this (`scratch`: a
// config of the search's model to write the degrees and choice keys into).
double static_floor_bytes(const SearchSpec& spec, const StaticMemoryBound& bound, Config& scratch,
                          const LayoutClass& layout, const SubBlock& block);

}  // namespace trainsim
