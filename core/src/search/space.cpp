#include "search/space.h"

#include <algorithm>
#include <numeric>

#include "search/choices.h"

namespace trainsim {
namespace {

std::vector<int64_t> divisors(int64_t n, int64_t at_most) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n && d <= at_most; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

bool same_mode(const RecomputeSpec& a, const RecomputeSpec& b) {
  return a.granularity == b.granularity && a.method == b.method && a.modules == b.modules &&
         a.keep_tail_outputs == b.keep_tail_outputs;
}

// Layer slots the embedding and the loss take in Megatron's split.
int64_t pipeline_slots(const SearchSpec& spec) {
  const ParallelSpec& t = spec.training.parallel;
  return (t.account_for_embedding_in_pipeline_split ? 1 : 0) +
         (t.account_for_loss_in_pipeline_split ? 1 : 0);
}

std::string with_commas(int64_t value) {
  std::string digits = std::to_string(value);
  for (int64_t i = static_cast<int64_t>(digits.size()) - 3; i > 0; i -= 3) {
    digits.insert(static_cast<size_t>(i), ",");
  }
  return digits;
}

}  // namespace

bool tries_uneven(const SearchSpec& spec, int64_t pp) {
  if (pp <= 1 || spec.uneven_stages == UnevenStages::kNever) return false;
  if (!spec.training.parallel.layout.empty()) return false;  // the layout is the split
  if (spec.uneven_stages == UnevenStages::kAlways) return true;
  return (spec.model.num_layers + pipeline_slots(spec)) % pp != 0;
}

SearchSpace::SearchSpace(const SearchSpec& spec) : spec_(spec) {
  int64_t tp_values = 0, cp_values = 0, pp_values = 0, etp_values = 0;
  const std::vector<int64_t> eps = ep_choices();
  const auto count = [&] {
    for (const int64_t n : spec.num_gpus) {
      const int64_t etps = static_cast<int64_t>(etp_choices(n).size());
      etp_values = std::max(etp_values, etps);
      const std::vector<int64_t> tps = tp_choices(n);
      tp_values = std::max(tp_values, static_cast<int64_t>(tps.size()));
      for (const int64_t tp : tps) {
        const std::vector<int64_t> cps = cp_choices(n, tp);
        cp_values = std::max(cp_values, static_cast<int64_t>(cps.size()));
        for (const int64_t cp : cps) {
          const std::vector<int64_t> pps = pp_choices(n, tp, cp);
          pp_values = std::max(pp_values, static_cast<int64_t>(pps.size()));
          for (const int64_t pp : pps) {
            const int64_t dp = n / (tp * cp * pp);
            if (!spec.dp.empty() &&
                std::find(spec.dp.begin(), spec.dp.end(), dp) == spec.dp.end()) {
              continue;
            }
            count_stage_plans(pp);
            if (over_) return;
            const auto plans = static_cast<int64_t>(plans_.at(pp).size());
            classes_ += static_cast<int64_t>(eps.size()) * etps;
            // Stays far below int64: each factor is bounded and the sum stops at the limit.
            for (const int64_t ep : eps) combinations_ += etps * sub_block_count(tp, cp, pp, ep) * plans;
            if (combinations_ > kMaxSearchCombinations || classes_ > kMaxLayoutClasses) {
              over_ = true;
              return;
            }
          }
        }
      }
    }
  };
  count();
  note("/num_gpus", "num_gpus", static_cast<int64_t>(spec.num_gpus.size()));
  note("/constraints/tp", "tp", tp_values);
  note("/constraints/cp", "cp", cp_values);
  note("/constraints/pp", "pp", pp_values);
  note("/constraints/ep", "ep", static_cast<int64_t>(eps.size()));
  note("/constraints/etp", "etp", etp_values);
  note("/constraints/micro_batch_size", "micro_batch_size",
       static_cast<int64_t>(spec.micro_batch_size.size()));
  note("/constraints/zero_stage", "zero_stage", static_cast<int64_t>(spec.zero_stage.size()));
  note("/constraints/recompute", "recompute", static_cast<int64_t>(spec.recompute.size()));
  for (size_t d = 0; d < choice_dimensions().size(); ++d) {
    note(std::string("/constraints/") + choice_dimensions()[d].key, choice_dimensions()[d].key,
         static_cast<int64_t>(spec.choices[d].size()));
  }
  int64_t most_plans = 0;
  for (const auto& [pp, plans] : plans_) {
    most_plans = std::max(most_plans, static_cast<int64_t>(plans.size()));
  }
  note("/constraints/uneven_stages", "stage splits, vpp and recompute modes", most_plans);
}

void SearchSpace::note(const std::string& path, const std::string& name, int64_t values) {
  if (values > 1) factors_.push_back({path, name, values});
}

std::optional<Issue> SearchSpace::limit_issue() const {
  if (!over_) return std::nullopt;
  std::vector<Factor> factors = factors_;
  std::stable_sort(factors.begin(), factors.end(),
                   [](const Factor& a, const Factor& b) { return a.values > b.values; });
  std::string narrow;
  for (const Factor& f : factors) {
    narrow += (narrow.empty() ? "" : ", ") + f.name + " (" + std::to_string(f.values) +
              (f.name == "num_gpus" ? " counts)" : " values)");
  }
  std::string what;
  if (stage_plans_over_) {
    what = "the uneven stage splits of " + std::to_string(spec_.model.num_layers) +
           " layers hold more than " + with_commas(kMaxStagePlans) +
           " stage plans; set /constraints/pp or /constraints/uneven_stages to false";
    return Issue{"/constraints/uneven_stages", what};
  }
  what = "the search holds more than ";
  what += classes_ > kMaxLayoutClasses
              ? with_commas(kMaxLayoutClasses) + " layout classes (GPU count, tp, cp, pp, ep, etp)"
              : with_commas(kMaxSearchCombinations) + " combinations";
  what += "; narrow the constraints that multiply them: " + narrow;
  return Issue{factors.empty() ? "/constraints" : factors.front().path, what};
}

std::vector<int64_t> SearchSpace::tp_choices(int64_t n) const {
  const int64_t max_tp = spec_.max_tp > 0 ? spec_.max_tp : spec_.system.gpus_per_node;
  if (spec_.tp.empty()) return divisors(n, max_tp);
  std::vector<int64_t> out;
  for (const int64_t v : spec_.tp) {
    if (n % v == 0 && (spec_.max_tp == 0 || v <= spec_.max_tp)) out.push_back(v);
  }
  return out;
}

std::vector<int64_t> SearchSpace::cp_choices(int64_t n, int64_t tp) const {
  if (spec_.cp.empty()) return divisors(n / tp, n);
  std::vector<int64_t> out;
  for (const int64_t v : spec_.cp) {
    if ((n / tp) % v == 0) out.push_back(v);
  }
  return out;
}

std::vector<int64_t> SearchSpace::pp_choices(int64_t n, int64_t tp, int64_t cp) const {
  const int64_t rest = n / (tp * cp);
  std::vector<int64_t> out = spec_.pp.empty() ? divisors(rest, spec_.model.num_layers) : spec_.pp;
  // A fixed pipeline_layout of K virtual stages runs on pp ranks dividing K (vpp = K / pp),
  // never on one rank when K > 1 (vpp needs pipeline stages).
  const auto stages = static_cast<int64_t>(spec_.training.parallel.layout.size());
  std::erase_if(out, [&](int64_t v) {
    return rest % v != 0 || (stages > 0 && (stages % v != 0 || (v == 1 && stages > 1)));
  });
  return out;
}

std::vector<int64_t> SearchSpace::ep_choices() const {
  if (!spec_.ep.empty()) return spec_.ep;
  if (!spec_.model.moe) return {1};
  return divisors(spec_.model.moe->num_experts, spec_.model.moe->num_experts);
}

std::vector<int64_t> SearchSpace::etp_choices(int64_t n) const {
  if (!spec_.etp.empty()) return spec_.etp;
  if (!spec_.model.moe) return {1};
  return divisors(n, spec_.max_tp > 0 ? spec_.max_tp : spec_.system.gpus_per_node);
}

int64_t SearchSpace::sub_block_count(int64_t tp, int64_t cp, int64_t pp, int64_t ep) const {
  int64_t count = spec_.sequence_parallel == SequenceParallelPolicy::kBoth && tp > 1 ? 2 : 1;
  const auto& dimensions = choice_dimensions();
  for (size_t d = 0; d < dimensions.size(); ++d) {
    if (dimensions[d].matters(tp, cp, pp, ep)) count *= static_cast<int64_t>(spec_.choices[d].size());
  }
  return count * static_cast<int64_t>(spec_.micro_batch_size.size()) *
         static_cast<int64_t>(spec_.zero_stage.size());
}

std::vector<SubBlock> SearchSpace::sub_blocks(const LayoutClass& c) const {
  std::vector<SubBlock> out(1);
  out[0].sequence_parallel = c.tp > 1 && spec_.sequence_parallel != SequenceParallelPolicy::kNever;
  if (c.tp > 1 && spec_.sequence_parallel == SequenceParallelPolicy::kBoth) {
    out[0].sequence_parallel = false;
    out.push_back(out[0]);
    out[1].sequence_parallel = true;
  }
  // Each further key multiplies the blocks, the earlier keys varying slowest.
  auto expand = [&out](auto&& values, auto&& set) {
    std::vector<SubBlock> next;
    next.reserve(out.size() * values.size());
    for (const SubBlock& b : out) {
      for (const auto& v : values) {
        next.push_back(b);
        set(next.back(), v);
      }
    }
    out = std::move(next);
  };
  const auto& dimensions = choice_dimensions();
  for (size_t d = 0; d < dimensions.size(); ++d) {
    std::vector<int8_t> indices(spec_.choices[d].size());
    std::iota(indices.begin(), indices.end(), int8_t{0});
    if (!dimensions[d].matters(c.tp, c.cp, c.pp, c.ep)) indices = {fixed_choice(dimensions[d], spec_.choices[d])};
    expand(indices, [d](SubBlock& b, int8_t i) { b.choice[d] = i; });
  }
  expand(spec_.micro_batch_size,
         [](SubBlock& b, int64_t v) { b.micro_batch_size = static_cast<int32_t>(v); });
  expand(spec_.zero_stage, [](SubBlock& b, int64_t v) { b.zero_stage = static_cast<int8_t>(v); });
  return out;
}

const std::vector<StagePlan>& SearchSpace::stage_plans(int64_t pp) const { return plans_.at(pp); }

std::vector<LayoutClass> SearchSpace::classes() const {
  std::vector<LayoutClass> out;
  out.reserve(static_cast<size_t>(classes_));
  int64_t index = 0;
  for (const int64_t n : spec_.num_gpus) {
    const std::vector<int64_t> etps = etp_choices(n);
    for (const int64_t tp : tp_choices(n)) {
      for (const int64_t cp : cp_choices(n, tp)) {
        for (const int64_t pp : pp_choices(n, tp, cp)) {
          const int64_t dp = n / (tp * cp * pp);
          if (!spec_.dp.empty() &&
              std::find(spec_.dp.begin(), spec_.dp.end(), dp) == spec_.dp.end()) {
            continue;
          }
          for (const int64_t ep : ep_choices()) {
            const int64_t size =
                sub_block_count(tp, cp, pp, ep) * static_cast<int64_t>(plans_.at(pp).size());
            for (const int64_t etp : etps) {
              LayoutClass c;
              c.num_gpus = static_cast<int32_t>(n);
              c.tp = static_cast<int32_t>(tp);
              c.cp = static_cast<int32_t>(cp);
              c.pp = static_cast<int32_t>(pp);
              c.dp = static_cast<int32_t>(dp);
              c.ep = static_cast<int32_t>(ep);
              c.etp = static_cast<int32_t>(etp);
              c.first_index = index;
              c.combinations = size;
              index += size;
              out.push_back(c);
            }
          }
        }
      }
    }
  }
  return out;
}

// The split, vpp and recompute-mode loops of every candidate with pp stages;
// a mode that acts exactly like an earlier one on a layout (its layer count
// reaches every layer of the largest chunk, as the earlier one's did) is skipped.
void SearchSpace::count_stage_plans(int64_t pp) {
  if (plans_.count(pp) > 0) return;
  const int64_t layers = spec_.model.num_layers;
  const bool uneven = tries_uneven(spec_, pp);
  if (stage_plan_count_ + stage_split_count(layers, pp, uneven) > kMaxStagePlans) {
    stage_plans_over_ = over_ = true;
    return;
  }
  const int64_t slots = pipeline_slots(spec_);
  const std::vector<LayoutStage>& fixed = spec_.training.parallel.layout;
  std::vector<StagePlan>& plans = plans_[pp];
  for (const auto& [first, last] : stage_splits(layers, pp, uneven)) {
    int64_t common = 1;   // layers every stage's count is a multiple of (vpp divides it)
    int64_t largest = 0;  // layers of the largest stage
    std::vector<int64_t> vpps = spec_.vpp;
    if (!fixed.empty()) {
      // A fixed layout (even split only, pp divides its stages): its own vpp and chunks.
      const auto layout_vpp = static_cast<int64_t>(fixed.size()) / pp;
      if (!vpps.empty() && std::find(vpps.begin(), vpps.end(), layout_vpp) == vpps.end()) break;
      vpps = {layout_vpp};
      for (const LayoutStage& stage : fixed) largest = std::max(largest, stage.decoder_layers);
      largest = std::max<int64_t>(largest, 1) * layout_vpp;  // so that its chunk is the largest
    } else if (first > 0) {
      const int64_t middle = pp > 2 ? (layers - first - last) / (pp - 2) : first;
      common = std::gcd(std::gcd(first, last), middle);
      largest = std::max({first, last, middle});
    } else {
      common = (layers + slots) % pp == 0 ? (layers + slots) / pp : 1;
      largest = (layers + slots + pp - 1) / pp;
    }
    if (vpps.empty()) vpps = pp > 1 ? divisors(common, common) : std::vector<int64_t>{1};
    for (const int64_t vpp : vpps) {
      const int64_t chunk_layers = (largest + vpp - 1) / vpp;
      std::vector<std::pair<size_t, int64_t>> seen;  // (mode, effective layers)
      for (size_t i = 0; i < spec_.recompute.size(); ++i) {
        const RecomputeMode& mode = spec_.recompute[i];
        const int64_t n = mode.all_layers ? chunk_layers : mode.spec.num_layers;
        const int64_t effective = n <= 0 || n >= chunk_layers ? chunk_layers : n;
        bool duplicate = false;
        for (const auto& [j, e] : seen) {
          duplicate = duplicate || (same_mode(spec_.recompute[j].spec, mode.spec) && e == effective);
        }
        if (duplicate) continue;
        seen.emplace_back(i, effective);
        plans.push_back({static_cast<int32_t>(first), static_cast<int32_t>(last),
                         static_cast<int32_t>(vpp), static_cast<int16_t>(i),
                         static_cast<int32_t>(n)});
      }
    }
    if (stage_plan_count_ + static_cast<int64_t>(plans.size()) > kMaxStagePlans) {
      stage_plans_over_ = over_ = true;
      return;
    }
  }
  stage_plan_count_ += static_cast<int64_t>(plans.size());
}

std::vector<std::pair<int64_t, int64_t>> stage_splits(int64_t num_layers, int64_t pp, bool uneven) {
  std::vector<std::pair<int64_t, int64_t>> out;
  if (uneven && pp == 2) {
    for (int64_t first = num_layers / 2; first <= (num_layers + 1) / 2; ++first) {
      if (first >= 1 && num_layers - first >= 1 && 2 * first != num_layers) {
        out.emplace_back(first, num_layers - first);
      }
    }
  } else if (uneven && pp > 2) {
    for (int64_t middle = 1; middle * (pp - 2) + 2 <= num_layers; ++middle) {
      const int64_t ends = num_layers - middle * (pp - 2);  // first + last
      for (int64_t first = std::max<int64_t>(1, ends - middle); first <= std::min(middle, ends - 1);
           ++first) {
        if (first != middle || ends - first != middle) out.emplace_back(first, ends - first);
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.insert(out.begin(), {0, 0});
  return out;
}

int64_t stage_split_count(int64_t num_layers, int64_t pp, bool uneven) {
  int64_t count = 1;
  if (uneven && pp == 2) {
    count += num_layers % 2 == 1 && num_layers >= 3 ? 2 : 0;
  } else if (uneven && pp > 2) {
    for (int64_t middle = 1; middle * (pp - 2) + 2 <= num_layers; ++middle) {
      const int64_t ends = num_layers - middle * (pp - 2);
      const int64_t low = std::max<int64_t>(1, ends - middle);
      const int64_t high = std::min(middle, ends - 1);
      if (high >= low) count += high - low + 1 - (ends == 2 * middle ? 1 : 0);
    }
  }
  return count;
}

}  // namespace trainsim
