// The walk the floor tests share: every valid member of every block of a
// search's space, with its block's time and static-memory floors (floor.h),
// in the order the search meets them.
#pragma once

#include <gtest/gtest.h>

#include "schema/search_request.h"
#include "search/enumerate.h"
#include "search/evaluator.h"
#include "search/floor.h"

namespace trainsim::testing {

struct FloorMember {
  const LayoutClass& layout;
  const Candidate& candidate;
  double floor_s;      ///< the block's step-time floor (0: unknown)
  double floor_bytes;  ///< the block's static-memory floor
  CandidateEvaluator& evaluator;
};

// Calls visit(member) for each valid member; a space above the limits fails the test.
template <typename Visit>
void walk_floors(const schema::SearchRequest& request, Visit&& visit) {
  const SearchSpace space(request.spec);
  ASSERT_FALSE(space.limit_issue());
  SearchFloors floors(request.spec, space);
  CandidateChecker checker(request.spec);
  CandidateEvaluator evaluator(request.spec, 1e30);
  const StaticMemoryBound bound(request.spec.model);
  Config scratch = base_config(request.spec);
  for (const LayoutClass& layout : space.classes()) {
    floors.measure(layout);
    for (const SubBlock& block : space.sub_blocks(layout)) {
      const double floor_s = floors.time_floor_s(layout, block);
      const double floor_bytes = static_floor_bytes(request.spec, bound, scratch, layout, block);
      for (const StagePlan& plan : space.stage_plans(layout.pp)) {
        Candidate c = make_candidate(layout, block, plan);
        if (checker.check(c) != nullptr) continue;
        visit(FloorMember{layout, c, floor_s, floor_bytes, evaluator});
      }
    }
  }
}

}  // namespace trainsim::testing
