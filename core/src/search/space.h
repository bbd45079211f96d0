// The space a search covers, counted before anything is enumerated. Its
// combinations fall into layout classes (GPU count, tp, cp, pp, ep, etp; dp
// follows), in this order; a class's combinations are its sub-blocks
// (sequence parallelism, choice keys, micro-batch size, ZeRO stage, in this
// order), each holding the same stage plans (stage split, vpp, recompute
// mode) of its pipeline size. A combination's index is its position in that
// order, known in closed form: no list of candidates is ever kept.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "search/search_spec.h"
#include "trainsim/issue.h"

namespace trainsim {

struct LayoutClass {
  int32_t num_gpus = 0;
  int32_t tp = 1, cp = 1, pp = 1, dp = 1, ep = 1, etp = 1;
  int64_t first_index = 0;  ///< combination index of its first member
  int64_t combinations = 0;
};

// One sub-block of a class: the fields the op-level blocks depend on besides
// the degrees (with the ZeRO stage).
struct SubBlock {
  bool sequence_parallel = false;
  std::array<int8_t, kMaxChoiceDimensions> choice{};  ///< indices into SearchSpec::choices
  int32_t micro_batch_size = 1;
  int8_t zero_stage = 1;
};

// A pipeline stage split, its virtual chunks and a recompute mode.
struct StagePlan {
  int32_t first_stage_layers = 0;  ///< 0: even split
  int32_t last_stage_layers = 0;
  int32_t vpp = 1;
  int16_t recompute = 0;             ///< index into SearchSpec::recompute
  int32_t recompute_num_layers = 0;  ///< resolved for the largest chunk
};

class SearchSpace {
 public:
  // Counts only: the loops run over (GPU count, tp, cp, pp) and pipeline sizes.
  explicit SearchSpace(const SearchSpec& spec);

  int64_t combinations() const { return combinations_; }
  int64_t num_classes() const { return classes_; }
  // An issue naming the constraints to narrow when the space is above the limits.
  std::optional<Issue> limit_issue() const;

  // Every class in order (call only within the limits).
  std::vector<LayoutClass> classes() const;
  std::vector<SubBlock> sub_blocks(const LayoutClass& c) const;
  const std::vector<StagePlan>& stage_plans(int64_t pp) const;

 private:
  struct Factor {
    std::string path;
    std::string name;
    int64_t values = 1;
  };
  std::vector<int64_t> tp_choices(int64_t n) const;
  std::vector<int64_t> cp_choices(int64_t n, int64_t tp) const;
  std::vector<int64_t> pp_choices(int64_t n, int64_t tp, int64_t cp) const;
  std::vector<int64_t> ep_choices() const;
  std::vector<int64_t> etp_choices(int64_t n) const;
  int64_t sub_block_count(int64_t tp, int64_t cp, int64_t pp, int64_t ep) const;
  void count_stage_plans(int64_t pp);
  void note(const std::string& path, const std::string& name, int64_t values);

  const SearchSpec& spec_;
  int64_t combinations_ = 0;
  int64_t classes_ = 0;
  int64_t stage_plan_count_ = 0;
  bool over_ = false;              ///< above a limit: counting stopped
  bool stage_plans_over_ = false;  ///< the stage plans alone
  std::map<int64_t, std::vector<StagePlan>> plans_;  ///< by pp
  std::vector<Factor> factors_;
};

// Stage splits tried for pp stages of num_layers layers: {0, 0} (even), then,
// when uneven, every (first, last) layer count that leaves the same number of
// layers on each middle stage with first and last each at most that number
// (pp = 2: at most half the layers, rounded up), except the even split itself.
std::vector<std::pair<int64_t, int64_t>> stage_splits(int64_t num_layers, int64_t pp, bool uneven);

// How many splits stage_splits returns, in O(num_layers).
int64_t stage_split_count(int64_t num_layers, int64_t pp, bool uneven);

// Whether a search tries uneven splits for this pipeline size.
bool tries_uneven(const SearchSpec& spec, int64_t pp);

}  // namespace trainsim
