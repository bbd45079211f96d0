#include "search/enumerate.h"

#include <algorithm>
#include <cctype>

namespace trainsim {

Candidate make_candidate(const LayoutClass& layout, const SubBlock& block, const StagePlan& plan) {
  Candidate c;
  c.num_gpus = layout.num_gpus;
  c.tp = layout.tp;
  c.cp = layout.cp;
  c.pp = layout.pp;
  c.dp = layout.dp;
  c.ep = layout.ep;
  c.etp = layout.etp;
  c.sequence_parallel = block.sequence_parallel;
  c.choice = block.choice;
  c.micro_batch_size = block.micro_batch_size;
  c.zero_stage = block.zero_stage;
  c.first_stage_layers = plan.first_stage_layers;
  c.last_stage_layers = plan.last_stage_layers;
  c.vpp = plan.vpp;
  c.recompute = plan.recompute;
  c.recompute_num_layers = plan.recompute_num_layers;
  return c;
}

CandidateChecker::CandidateChecker(const SearchSpec& spec) : spec_(spec), config_(base_config(spec)) {
  sizes_.global_batch_size = spec.global_batch_size;  // dp follows from the GPU count
  sizes_.batch_path = "/training/global_batch_size";
}

const std::string* CandidateChecker::check(Candidate& c) {
  apply_candidate(spec_, c, config_);
  Issues issues;
  if (auto issue = check_tokens_per_micro_batch(config_.training.seq_len, c.micro_batch_size,
                                                "/training/micro_batch_size")) {
    issues.push_back(std::move(*issue));
  } else {
    derive_sizes(sizes_, config_.training, config_.system, issues);
  }
  if (issues.empty()) issues = validate(config_);
  if (issues.empty()) {
    c.num_micro_batches = static_cast<int32_t>(config_.training.num_micro_batches);
    return nullptr;
  }
  // Messages differ only by the values of the degrees: a few hundred distinct
  // ones per search; past the cap each is reduced again (slower, still bounded).
  const Issue& first = issues.front();
  std::string key = first.path + '\n' + first.message;
  auto found = reasons_.find(key);
  if (found == reasons_.end()) {
    if (reasons_.size() >= kMaxCachedReasons) {
      uncached_ = issue_reason(first);
      return &uncached_;
    }
    found = reasons_.emplace(std::move(key), issue_reason(first)).first;
  }
  return &found->second;
}

Enumeration enumerate_candidates(const SearchSpec& spec) {
  Enumeration out;
  const SearchSpace space(spec);
  if (space.limit_issue()) return out;
  CandidateChecker checker(spec);
  for (const LayoutClass& layout : space.classes()) {
    int64_t index = layout.first_index;
    for (const SubBlock& block : space.sub_blocks(layout)) {
      for (const StagePlan& plan : space.stage_plans(layout.pp)) {
        Candidate c = make_candidate(layout, block, plan);
        ++out.considered;
        if (const std::string* reason = checker.check(c)) {
          ++out.invalid_by_reason[*reason];
        } else {
          out.candidates.push_back(c);
          out.indices.push_back(index);
        }
        ++index;
      }
    }
  }
  return out;
}

std::string issue_reason(const Issue& issue) {
  std::string message = issue.message;
  const size_t got = message.rfind(", got ");
  if (got != std::string::npos) message.erase(got);
  // Drop " (123)" groups: the values differ between candidates.
  for (size_t open = message.find(" ("); open != std::string::npos;
       open = message.find(" (", open + 1)) {
    const size_t close = message.find(')', open);
    if (close == std::string::npos) break;
    const bool digits =
        close > open + 2 &&
        std::all_of(message.begin() + static_cast<std::ptrdiff_t>(open) + 2,
                    message.begin() + static_cast<std::ptrdiff_t>(close),
                    [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); });
    if (digits) message.erase(open, close - open + 1);
  }
  return issue.path + ": " + message;
}

}  // namespace trainsim
