// Every cross-field rule of a config, in one place: the readers call them where
// the document is read (so a user sees each issue once, in document order), and
// the strategy search calls the same functions on each candidate (so its
// rejection reasons are the config parser's, word for word).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "trainsim/issue.h"
#include "trainsim/spec.h"

namespace trainsim {

// Rules between the fields of a structurally valid Config (Megatron-LM's
// start-up asserts: divisibility, ranges, pipeline layout, recompute).
Issues validate(const Config& config);

// Groups of validate()'s rules on their own, for the search: it runs a key's group
// on a config holding one value of its constraint (search/choices.h) to refuse a
// value that breaks the group for every plan, in validate()'s words.
Issues fp8_recipe_gpu_issues(const Config& config);      ///< MXFP8 needs block-scaled tensor cores
Issues optimizer_offload_issues(const Config& config);   ///< optimizer_offload_fraction's rules
Issues activation_offload_issues(const Config& config);  ///< activation_offload_layers' rules
/// overlap_moe_expert_parallel_comm's rules that hold on every plan with ep > 1
/// (a mixture-of-experts model, no shared-expert overlap, at most one MTP layer, ...)
Issues ep_overlap_value_issues(const Config& config);

// seq_len * micro_batch_size within kMaxTokensPerMicroBatch (input_limits.h);
// the issue names `path` (the micro_batch_size key).
std::optional<Issue> check_tokens_per_micro_batch(int64_t seq_len, int64_t micro_batch_size,
                                                  const std::string& path);

// tp*cp*pp*dp within kMaxGpus, checked one factor at a time so that no partial
// product overflows; the issue names "<prefix>/<factor>" of the first one above.
std::optional<Issue> check_world_size(const ParallelSpec& parallel, std::optional<int64_t> dp,
                                      const std::string& prefix);

// What a document gives of the sizes that Megatron-LM derives.
struct SizeRequest {
  std::optional<int64_t> dp;                 ///< absent: num_gpus / (tp*pp*cp)
  std::optional<int64_t> global_batch_size;  ///< sequences per step
  std::optional<int64_t> num_micro_batches;  ///< instead of global_batch_size
  std::string batch_path;                    ///< the key of the global batch, for issues
};

// The size derivation: dp from the GPU count (or num_gpus from dp), the
// micro-batches per step from the global batch, and the bound on the pipeline
// passes to simulate. Sets training.parallel.dp, training.num_micro_batches and
// (when absent) system.num_gpus; adds an issue and stops at the first rule broken.
void derive_sizes(const SizeRequest& request, TrainingSpec& training, SystemSpec& system,
                  Issues& issues);

}  // namespace trainsim
