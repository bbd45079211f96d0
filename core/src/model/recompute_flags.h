// Which ops of one transformer layer are recomputed, from the recompute spec
// and the layer's position in its pipeline chunk. Megatron-LM semantics:
// --recompute-granularity full with --recompute-method block/uniform
// (megatron/core/transformer/transformer_block.py, _checkpointed_forward) and
// --recompute-granularity selective with --recompute-modules (0.14,
// transformer_layer.py / mlp.py / moe_layer.py "discard output" checkpoints);
// plus SimuMax's legacy selective sets (attn, attn_norm, attn_proj, mlp_block,
// mlp_norm, mlp_linear) for configs imported from it.
#pragma once

#include <cstdint>

#include "trainsim/spec.h"

namespace trainsim {

struct AttentionRecompute {
  bool input_norm = false, q_down = false, kv_down = false, q_up = false, kv_up = false;
  bool q_norm = false, kv_norm = false, rope = false, core = false, out_proj = false;
  bool discard_norm_output = false;  ///< Megatron "layernorm": the norm's consumer stores nothing
  bool mla_up_proj = false;          ///< Megatron "mla_up_proj"
};

struct MlpRecompute {
  bool pre_norm = false, shared = false, linear = false, router = false, permute = false;
  bool discard_norm_output = false;  ///< Megatron "layernorm"
  bool dense_mlp = false;            ///< Megatron "mlp"
  bool moe = false;                  ///< Megatron "moe"
  bool moe_act = false;              ///< Megatron "moe_act" (and not "moe")
};

struct LayerRecompute {
  AttentionRecompute attention;
  MlpRecompute mlp;
  bool keep_tail_outputs = false;  ///< RecomputeSpec::keep_tail_outputs
  bool selective = false;          ///< granularity selective (segment breaks apply)
  bool starts_segment = true;      ///< the layer input is a checkpoint (false inside a uniform group)

  bool active() const {
    const AttentionRecompute& a = attention;
    const MlpRecompute& m = mlp;
    return a.input_norm || a.q_down || a.kv_down || a.q_up || a.kv_up || a.q_norm || a.kv_norm ||
           a.rope || a.core || a.out_proj || a.discard_norm_output || m.pre_norm || m.shared ||
           m.linear || m.router || m.permute || m.dense_mlp || m.moe || m.moe_act;
  }
};

// index_in_chunk: 0-based position of the layer in its pipeline chunk.
// chunk_layers: layers in that chunk (uniform full recompute groups them).
LayerRecompute layer_recompute(const RecomputeSpec& spec, int64_t index_in_chunk,
                               int64_t chunk_layers);

}  // namespace trainsim
