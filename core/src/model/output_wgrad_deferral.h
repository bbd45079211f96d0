// Megatron-LM --defer-embedding-wgrad-compute / --wgrad-deferral-limit: how many
// micro-batches have their output-layer weight gradient deferred to the pipeline
// flush. The output layer's backward buffers its logits gradient while the buffer
// holds fewer than the limit (0: no limit) and runs the weight-gradient GEMM at once
// otherwise (megatron/core/tensor_parallel/layers.py,
// LinearWithGradAccumulationAndAsyncCommunication.backward); the flush drains the
// buffer (megatron/core/pipeline_parallel/schedules.py finish_embedding_wgrad_compute).
// Validation admits deferral only with Megatron-LM's 1F1B schedules, where every
// micro-batch passes the output layer once.
#pragma once

#include <algorithm>
#include <cstdint>

#include "trainsim/spec.h"

namespace trainsim {

inline int64_t deferred_wgrad_micro_batches(const TrainingSpec& t) {
  if (!t.overlap.defer_embedding_wgrad) return 0;
  const int64_t limit = t.overlap.wgrad_deferral_limit;
  return limit == 0 ? t.num_micro_batches : std::min(limit, t.num_micro_batches);
}

}  // namespace trainsim
