#include "estimate_suggestions.h"

#include <algorithm>
#include <string>

#include "input_limits.h"
#include "trainsim/trainsim.h"
#include "validate.h"

namespace trainsim {
namespace {

enum class Change { kExpandable, kRecompute, kZero, kTp, kPp, kCp, kMicroBatch, kEp };
constexpr Change kChanges[] = {Change::kExpandable, Change::kRecompute, Change::kZero, Change::kTp,
                               Change::kPp,         Change::kCp,        Change::kMicroBatch, Change::kEp};

struct Neighbour {
  Config config;
  MemorySuggestion suggestion;
  int changes = 0;
};

std::string str(int64_t v) { return std::to_string(v); }

// Halves dp (the GPUs stay the same) and doubles the micro-batches per step.
bool halve_dp(TrainingSpec& t) {
  if (t.parallel.dp % 2 != 0) return false;
  t.parallel.dp /= 2;
  t.num_micro_batches *= 2;
  return true;
}

void note(MemorySuggestion& s, const std::string& text, const std::string& key, const std::string& value) {
  s.change += (s.change.empty() ? "" : "; ") + text;
  s.set.emplace_back(key, value);
}

// Applies one change; false when it does not apply to this plan.
bool apply(Change change, Neighbour& n) {
  TrainingSpec& t = n.config.training;
  ParallelSpec& p = t.parallel;
  MemorySuggestion& s = n.suggestion;
  switch (change) {
    case Change::kExpandable:
      if (t.expandable_segments) return false;
      t.expandable_segments = true;
      note(s, "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "training.expandable_segments", "true");
      return true;
    case Change::kRecompute: {
      RecomputeSpec& r = t.recompute;
      if (r.granularity == RecomputeGranularity::kNone) {
        r = RecomputeSpec{};
        r.granularity = RecomputeGranularity::kSelective;
        r.modules = {RecomputeModule::kCoreAttn};
        note(s, "selective recompute (core_attn)", "training.recompute", R"({"granularity": "selective"})");
        return true;
      }
      if (r.granularity == RecomputeGranularity::kFull && r.method == RecomputeMethod::kUniform &&
          r.num_layers == 1) {
        return false;
      }
      r = RecomputeSpec{};
      r.granularity = RecomputeGranularity::kFull;
      r.method = RecomputeMethod::kUniform;
      r.num_layers = 1;
      note(s, "full recompute of every layer", "training.recompute",
           R"({"granularity": "full", "method": "uniform", "num_layers": 1})");
      return true;
    }
    case Change::kZero:
      if (t.zero_stage >= 3) return false;
      note(s, "ZeRO stage " + str(t.zero_stage) + " -> " + str(t.zero_stage + 1), "training.zero_stage",
           str(t.zero_stage + 1));
      ++t.zero_stage;
      return true;
    case Change::kTp:
      if (2 * p.tp > n.config.system.gpus_per_node || !halve_dp(t)) return false;
      note(s, "tp " + str(p.tp) + " -> " + str(2 * p.tp) + " (dp " + str(2 * p.dp) + " -> " + str(p.dp) + ")",
           "training.tp", str(2 * p.tp));
      p.tp *= 2;
      if (!p.sequence_parallel) note(s, "sequence parallelism", "training.sequence_parallel", "true");
      p.sequence_parallel = true;
      return true;
    case Change::kPp:
      if (!halve_dp(t)) return false;
      note(s, "pp " + str(p.pp) + " -> " + str(2 * p.pp) + " (dp " + str(2 * p.dp) + " -> " + str(p.dp) + ")",
           "training.pp", str(2 * p.pp));
      p.pp *= 2;
      return true;
    case Change::kCp:
      if (!halve_dp(t)) return false;
      note(s, "cp " + str(p.cp) + " -> " + str(2 * p.cp) + " (dp " + str(2 * p.dp) + " -> " + str(p.dp) + ")",
           "training.cp", str(2 * p.cp));
      p.cp *= 2;
      return true;
    case Change::kMicroBatch:
      if (t.micro_batch_size % 2 != 0) return false;
      note(s, "micro-batch size " + str(t.micro_batch_size) + " -> " + str(t.micro_batch_size / 2),
           "training.micro_batch_size", str(t.micro_batch_size / 2));
      t.micro_batch_size /= 2;
      t.num_micro_batches *= 2;
      return true;
    case Change::kEp:
      if (!n.config.model.moe || 2 * p.ep > n.config.model.moe->num_experts) return false;
      note(s, "ep " + str(p.ep) + " -> " + str(2 * p.ep), "training.ep", str(2 * p.ep));
      p.ep *= 2;
      return true;
  }
  return false;
}

bool valid(const Config& c) {
  const ParallelSpec& p = c.training.parallel;
  const double passes = static_cast<double>(p.pp) * static_cast<double>(p.vpp) *
                        static_cast<double>(c.training.num_micro_batches);
  return c.training.num_micro_batches <= kMaxBatch && passes <= static_cast<double>(kMaxPipelinePasses) &&
         validate(c).empty();
}

class Explorer {
 public:
  // restore_headroom: the plan is tight, and only neighbours that fit with the headroom count.
  Explorer(const Config& base, const EstimateOptions& options, bool restore_headroom)
      : base_(base), restore_headroom_(restore_headroom) {
    quick_ = options;
    quick_.timeline = false;
    quick_.reference_formulas = false;
    quick_.model_summary = false;
    quick_.describe = false;
    quick_.suggestions = false;
    quick_.memory_need = false;
    quick_.time_lower_bound = false;
    quick_.time_only_within_bytes = 0.0;
  }

  // Estimates a neighbour; true when it fits (with the headroom for a tight plan).
  bool try_one(Neighbour& n) {
    if (!valid(n.config) || budget_ <= 0) return false;
    --budget_;
    EstimateOptions bound = quick_;
    bound.allocator_replay = false;
    bound.time_only_within_bytes = 1.0;  // memory only
    if (!good_enough(estimate_with(n.config, bound, nullptr))) return false;
    const Estimate e = estimate_with(n.config, quick_, nullptr);
    if (!good_enough(e)) return false;
    n.suggestion.status = e.memory.verdict.status;
    n.suggestion.margin_bytes = e.memory.verdict.margin_bytes;
    n.suggestion.device_bytes = e.memory.verdict.device_bytes;
    n.suggestion.iteration_s = e.time.iteration_s;
    found_.push_back(n);
    return true;
  }

  std::vector<MemorySuggestion> run() {
    std::vector<Neighbour> misses;
    for (const Change change : kChanges) {
      Neighbour n{base_, {}, 1};
      n.suggestion.change.clear();
      if (!apply(change, n)) continue;
      if (!try_one(n) && valid(n.config)) misses.push_back(n);
    }
    if (found_.empty()) {
      for (size_t i = 0; i < misses.size(); ++i) {
        for (const Change change : kChanges) {
          Neighbour n = misses[i];
          n.changes = 2;
          if (!later(change, misses[i]) || !apply(change, n)) continue;
          try_one(n);
        }
      }
    }
    std::stable_sort(found_.begin(), found_.end(), [](const Neighbour& a, const Neighbour& b) {
      const bool a_fits = a.suggestion.status == "fits", b_fits = b.suggestion.status == "fits";
      if (a_fits != b_fits) return a_fits;
      if (a.changes != b.changes) return a.changes < b.changes;
      return a.suggestion.iteration_s < b.suggestion.iteration_s;
    });
    std::vector<MemorySuggestion> out;
    for (const Neighbour& n : found_) {
      if (out.size() == kMaxSuggestions) break;
      out.push_back(n.suggestion);
    }
    return out;
  }

 private:
  bool good_enough(const Estimate& e) const {
    return restore_headroom_ ? e.memory.verdict.status == "fits" : e.fits;
  }

  // Pairs are tried once: the second change comes later in kChanges than the first.
  static bool later(Change change, const Neighbour& first) {
    const std::string& key = first.suggestion.set.front().first;
    static const char* kKeys[] = {"training.expandable_segments", "training.recompute", "training.zero_stage",
                                  "training.tp", "training.pp", "training.cp", "training.micro_batch_size",
                                  "training.ep"};
    int first_index = 0;
    for (int i = 0; i < 8; ++i) {
      if (key == kKeys[i]) first_index = i;
    }
    return static_cast<int>(change) > first_index;
  }

  const Config& base_;
  bool restore_headroom_;
  EstimateOptions quick_;
  int budget_ = kMaxSuggestionEstimates;
  std::vector<Neighbour> found_;
};

}  // namespace

std::vector<MemorySuggestion> memory_suggestions(const Config& config, const EstimateOptions& options,
                                                bool restore_headroom) {
  return Explorer(config, options, restore_headroom).run();
}

}  // namespace trainsim
