#include "model/op_context.h"

#include "model/param_count.h"

namespace trainsim {
namespace {

bool te_at_least(const TrainingSpec& t, int64_t major, int64_t minor) {
  return t.te_version_major > major || (t.te_version_major == major && t.te_version_minor >= minor);
}

}  // namespace

OpContext::OpContext(const ModelSpec& m, const TrainingSpec& t) : model(m), training(t) {
  const ParallelSpec& p = t.parallel;
  b = t.micro_batch_size;
  tp = p.tp;
  cp = p.cp;
  ep = p.ep;
  etp = p.etp;
  sp = p.sequence_parallel;
  seq_cp = t.seq_len / cp;
  seq_local = sp ? seq_cp / tp : seq_cp;
  seq_gemm = sp ? seq_local * tp : seq_local;
  vocab = padded_vocab_size(m, tp);
  fp8 = t.dtype == Dtype::kFp8;
  te_dummy_wgrad = t.gradient_accumulation_fusion && te_at_least(t, 2, 3);
  te_dummy_wgrad_grouped = t.gradient_accumulation_fusion && te_at_least(t, 2, 10);
  te_cp_saves_output = te_at_least(t, 2, 8);
  grad_bytes = t.grad_reduce_in_bf16 ? 2 : 4;
}

}  // namespace trainsim
