#include "search/enumerate.h"

#include <algorithm>
#include <cctype>
#include <numeric>

#include "validate.h"

namespace trainsim {
namespace {

std::vector<int64_t> divisors(int64_t n, int64_t at_most) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n && d <= at_most; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

bool contains(const std::vector<int64_t>& values, int64_t value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

bool same_mode(const RecomputeSpec& a, const RecomputeSpec& b) {
  return a.granularity == b.granularity && a.method == b.method && a.modules == b.modules &&
         a.keep_tail_outputs == b.keep_tail_outputs;
}

class Enumerator {
 public:
  explicit Enumerator(const SearchSpec& spec) : spec_(spec), config_(base_config(spec)) {
    sizes_.global_batch_size = spec.global_batch_size;  // dp follows from the GPU count
    sizes_.batch_path = "/training/global_batch_size";
  }

  Enumeration run() {
    for (const int64_t n : spec_.num_gpus) {
      config_.system.num_gpus = n;
      degrees(n);
    }
    return std::move(out_);
  }

 private:
  int64_t default_max_tp() const {
    return spec_.max_tp > 0 ? spec_.max_tp : spec_.system.gpus_per_node;
  }

  // Explicit values (capped by an explicit max_tp when `tp_like`), or the divisors of n.
  std::vector<int64_t> choices(const std::vector<int64_t>& allowed, int64_t n, int64_t at_most,
                               bool tp_like) const {
    if (allowed.empty()) return divisors(n, at_most);
    std::vector<int64_t> out;
    for (const int64_t v : allowed) {
      if (n % v == 0 && (!tp_like || spec_.max_tp == 0 || v <= spec_.max_tp)) out.push_back(v);
    }
    return out;
  }

  void degrees(int64_t n) {
    for (const int64_t tp : choices(spec_.tp, n, default_max_tp(), true)) {
      for (const int64_t cp : choices(spec_.cp, n / tp, n, false)) {
        for (const int64_t pp : choices(spec_.pp, n / (tp * cp), spec_.model.num_layers, false)) {
          const int64_t dp = n / (tp * cp * pp);
          if (!spec_.dp.empty() && !contains(spec_.dp, dp)) continue;
          Candidate c;
          c.num_gpus = static_cast<int32_t>(n);
          c.tp = static_cast<int32_t>(tp);
          c.cp = static_cast<int32_t>(cp);
          c.pp = static_cast<int32_t>(pp);
          c.dp = static_cast<int32_t>(dp);
          experts(c);
        }
      }
    }
  }

  void experts(Candidate c) {
    std::vector<int64_t> eps = spec_.ep, etps = spec_.etp;
    if (spec_.model.moe) {
      if (eps.empty()) eps = divisors(spec_.model.moe->num_experts, spec_.model.moe->num_experts);
      if (etps.empty()) etps = divisors(c.num_gpus, default_max_tp());
    } else {
      if (eps.empty()) eps = {1};
      if (etps.empty()) etps = {1};
    }
    for (const int64_t ep : eps) {
      for (const int64_t etp : etps) {
        c.ep = static_cast<int32_t>(ep);
        c.etp = static_cast<int32_t>(etp);
        batching(c);
      }
    }
  }

  void batching(Candidate c) {
    std::vector<bool> sp_values = {false};
    if (c.tp > 1 && spec_.sequence_parallel == SequenceParallelPolicy::kAlways) sp_values = {true};
    if (c.tp > 1 && spec_.sequence_parallel == SequenceParallelPolicy::kBoth) {
      sp_values = {false, true};
    }
    for (const bool sp : sp_values) {
      for (const int64_t mbs : spec_.micro_batch_size) {
        c.sequence_parallel = sp;
        c.micro_batch_size = static_cast<int32_t>(mbs);
        splits(c);
      }
    }
  }

  void splits(Candidate c) {
    const int64_t layers = spec_.model.num_layers;
    const ParallelSpec& t = spec_.training.parallel;
    const int64_t slots = (t.account_for_embedding_in_pipeline_split ? 1 : 0) +
                          (t.account_for_loss_in_pipeline_split ? 1 : 0);
    auto cached = splits_.find(c.pp);
    if (cached == splits_.end()) {
      cached = splits_.emplace(c.pp, stage_splits(layers, c.pp, spec_.uneven_stages)).first;
    }
    for (const auto& [first, last] : cached->second) {
      c.first_stage_layers = static_cast<int32_t>(first);
      c.last_stage_layers = static_cast<int32_t>(last);
      int64_t common = 1;   // layers every stage's count is a multiple of (vpp divides it)
      int64_t largest = 0;  // layers of the largest stage
      if (first > 0) {
        const int64_t middle = c.pp > 2 ? (layers - first - last) / (c.pp - 2) : first;
        common = std::gcd(std::gcd(first, last), middle);
        largest = std::max({first, last, middle});
      } else {
        common = (layers + slots) % c.pp == 0 ? (layers + slots) / c.pp : 1;
        largest = (layers + slots + c.pp - 1) / c.pp;
      }
      std::vector<int64_t> vpps = spec_.vpp;
      if (vpps.empty()) vpps = c.pp > 1 ? divisors(common, common) : std::vector<int64_t>{1};
      for (const int64_t vpp : vpps) {
        c.vpp = static_cast<int32_t>(vpp);
        modes(c, (largest + vpp - 1) / vpp);
      }
    }
  }

  // Each recompute mode with num_layers resolved for this layout; a mode that
  // acts exactly like an earlier one here (its layer count reaches every layer
  // of the largest chunk, as the earlier one's did) is skipped.
  void modes(Candidate c, int64_t chunk_layers) {
    std::vector<std::pair<size_t, int64_t>> seen;  // (mode, effective layers)
    for (size_t i = 0; i < spec_.recompute.size(); ++i) {
      const RecomputeMode& mode = spec_.recompute[i];
      int64_t n = mode.all_layers ? chunk_layers : mode.spec.num_layers;
      const int64_t effective = n <= 0 || n >= chunk_layers ? chunk_layers : n;
      bool duplicate = false;
      for (const auto& [j, e] : seen) {
        duplicate = duplicate || (same_mode(spec_.recompute[j].spec, mode.spec) && e == effective);
      }
      if (duplicate) continue;
      seen.emplace_back(i, effective);
      c.recompute = static_cast<int16_t>(i);
      c.recompute_num_layers = static_cast<int32_t>(n);
      for (const int64_t zero : spec_.zero_stage) {
        c.zero_stage = static_cast<int8_t>(zero);
        finish(c);
      }
    }
  }

  // The config parser's rules, in its order (validate.h): tokens per
  // micro-batch, the size derivation (whole micro-batches, passes to simulate),
  // then the cross-field rules.
  void finish(Candidate c) {
    ++out_.considered;
    apply_candidate(spec_, c, config_);
    Issues issues;
    if (auto issue = check_tokens_per_micro_batch(config_.training.seq_len, c.micro_batch_size,
                                                  "/training/micro_batch_size")) {
      issues.push_back(std::move(*issue));
    } else {
      derive_sizes(sizes_, config_.training, config_.system, issues);
    }
    if (issues.empty()) issues = validate(config_);
    if (!issues.empty()) {
      ++out_.invalid_by_reason[issue_reason(issues.front())];
      return;
    }
    c.num_micro_batches = static_cast<int32_t>(config_.training.num_micro_batches);
    out_.candidates.push_back(c);
  }

  const SearchSpec& spec_;
  Config config_;
  SizeRequest sizes_;
  Enumeration out_;
  std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> splits_;  ///< by pp
};

}  // namespace

Enumeration enumerate_candidates(const SearchSpec& spec) { return Enumerator(spec).run(); }

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
