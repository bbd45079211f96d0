#include "model/recompute_flags.h"

#include <algorithm>

namespace trainsim {
namespace {

bool has(const RecomputeSpec& spec, RecomputeModule module) {
  return std::find(spec.modules.begin(), spec.modules.end(), module) != spec.modules.end();
}

// Megatron 0.14 --recompute-modules other than core_attn switch to its
// "discard output" checkpoint semantics.
bool uses_megatron_modules(const RecomputeSpec& spec) {
  for (const auto module : {RecomputeModule::kLayernorm, RecomputeModule::kMlaUpProj,
                            RecomputeModule::kMlp, RecomputeModule::kMoeAct, RecomputeModule::kMoe,
                            RecomputeModule::kSharedExperts}) {
    if (has(spec, module)) return true;
  }
  return false;
}

void set_all_attention(AttentionRecompute& a, bool input_norm) {
  a.input_norm = input_norm;
  a.q_down = a.kv_down = a.q_up = a.kv_up = a.q_norm = a.kv_norm = a.rope = a.core = true;
  a.out_proj = true;
}

void set_all_mlp(MlpRecompute& m) { m.pre_norm = m.shared = m.linear = m.router = m.permute = true; }

void megatron_selective(const RecomputeSpec& spec, LayerRecompute& r) {
  AttentionRecompute& a = r.attention;
  MlpRecompute& m = r.mlp;
  const bool norm = has(spec, RecomputeModule::kLayernorm);
  const bool up = has(spec, RecomputeModule::kMlaUpProj);
  a.discard_norm_output = norm;
  a.input_norm = a.q_down = a.kv_down = norm;
  a.mla_up_proj = up;
  a.q_up = a.kv_up = a.q_norm = a.kv_norm = a.rope = up;
  a.core = up || has(spec, RecomputeModule::kCoreAttn);
  m.pre_norm = m.discard_norm_output = norm;
  m.dense_mlp = has(spec, RecomputeModule::kMlp);
  m.moe = has(spec, RecomputeModule::kMoe);
  m.moe_act = has(spec, RecomputeModule::kMoeAct) && !m.moe;
  m.shared = has(spec, RecomputeModule::kSharedExperts);
}

void legacy_selective(const RecomputeSpec& spec, LayerRecompute& r) {
  AttentionRecompute& a = r.attention;
  MlpRecompute& m = r.mlp;
  if (has(spec, RecomputeModule::kAttn)) set_all_attention(a, false);
  if (has(spec, RecomputeModule::kMlpBlock)) set_all_mlp(m);
  if (has(spec, RecomputeModule::kCoreAttn)) a.core = true;
  if (has(spec, RecomputeModule::kAttnNorm)) a.input_norm = a.q_down = a.kv_down = true;
  if (has(spec, RecomputeModule::kAttnProj)) {
    a.q_up = a.kv_up = a.q_norm = a.kv_norm = a.rope = a.core = true;
  }
  if (has(spec, RecomputeModule::kMlpNorm)) m.pre_norm = m.shared = m.router = true;
  if (has(spec, RecomputeModule::kMlpLinear)) m.linear = true;
}

}  // namespace

LayerRecompute layer_recompute(const RecomputeSpec& spec, int64_t index_in_chunk,
                               int64_t chunk_layers) {
  LayerRecompute r;
  r.starts_segment = true;
  switch (spec.granularity) {
    case RecomputeGranularity::kNone:
      return r;
    case RecomputeGranularity::kFull:
      if (spec.method == RecomputeMethod::kBlock) {
        // Block: the first num_layers layers of the chunk are checkpointed one by one.
        if (index_in_chunk >= spec.num_layers) return r;
      } else {
        // Uniform: every layer is recomputed; groups of num_layers layers share one
        // checkpoint (their input), so only a group's first layer starts a segment.
        r.starts_segment = index_in_chunk % std::min(spec.num_layers, chunk_layers) == 0;
      }
      set_all_attention(r.attention, true);
      set_all_mlp(r.mlp);
      return r;
    case RecomputeGranularity::kSelective:
      if (spec.num_layers > 0 && index_in_chunk >= spec.num_layers) return r;
      r.selective = true;
      r.keep_tail_outputs = spec.keep_tail_outputs;
      if (uses_megatron_modules(spec)) {
        megatron_selective(spec, r);
      } else {
        legacy_selective(spec, r);
      }
      return r;
  }
  return r;
}

}  // namespace trainsim
