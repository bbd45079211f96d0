// Values `estimate` would reject, reported at import time: the imported
// document is read and checked by the functions estimate itself runs
// (schema::read_config_document, validate.h), and each issue moves from the
// config key to the flag that set it ("/training/tp" -> "/args/--tensor-model-
// parallel-size"). No rule is restated here.
#include <string>
#include <utility>

#include "interop/megatron/megatron_import.h"
#include "schema/config_reader.h"
#include "validate.h"

namespace trainsim::interop {
namespace {

struct KeyFlags {
  const char* pointer;  ///< a config key (its subtree too)
  std::vector<const char*> flags;  ///< the flags that set it, most specific first
};

// The config keys import_megatron writes and the flags they come from.
const KeyFlags kKeyFlags[] = {
    {"/model/num_layers", {"--num-layers", "--encoder-num-layers"}},
    {"/model/hidden_size", {"--hidden-size"}},
    {"/model/num_attention_heads", {"--num-attention-heads"}},
    {"/model/num_kv_heads", {"--num-query-groups", "--group-query-attention"}},
    {"/model/ffn_hidden_size", {"--ffn-hidden-size"}},
    {"/model/head_dim", {"--kv-channels"}},
    {"/model/vocab_size", {"--padded-vocab-size", "--vocab-size", "--tokenizer-type"}},
    {"/model/make_vocab_size_divisible_by", {"--make-vocab-size-divisible-by"}},
    {"/model/max_position_embeddings", {"--max-position-embeddings"}},
    {"/model/moe/num_experts", {"--num-experts"}},
    {"/model/moe/top_k", {"--moe-router-topk"}},
    {"/model/moe/expert_ffn_hidden_size", {"--moe-ffn-hidden-size"}},
    {"/model/moe/shared_expert_ffn_hidden_size", {"--moe-shared-expert-intermediate-size"}},
    {"/model/moe/num_dense_layers", {"--moe-layer-freq", "--first-k-dense-replace"}},
    {"/model/mla/q_lora_rank", {"--q-lora-rank"}},
    {"/model/mla/kv_lora_rank", {"--kv-lora-rank"}},
    {"/model/mla/qk_nope_head_dim", {"--qk-head-dim"}},
    {"/model/mla/qk_rope_head_dim", {"--qk-pos-emb-head-dim"}},
    {"/model/mla/v_head_dim", {"--v-head-dim"}},
    {"/model/mtp_num_layers", {"--mtp-num-layers"}},
    {"/model/sliding_window_tokens", {"--window-size"}},
    {"/model/full_attention_every_n_layers", {"--window-attn-skip-freq"}},
    {"/training/seq_len", {"--seq-length", "--encoder-seq-length"}},
    {"/training/micro_batch_size", {"--micro-batch-size"}},
    {"/training/global_batch_size", {"--global-batch-size"}},
    {"/training/num_micro_batches", {"--global-batch-size", "--micro-batch-size"}},
    {"/training/tp", {"--tensor-model-parallel-size"}},
    {"/training/pp", {"--pipeline-model-parallel-size"}},
    {"/training/activation_offload_layers", {"--cpu-offloading-num-layers"}},
    {"/training/cp_comm_type", {"--cp-comm-type", "--context-parallel-size"}},
    {"/training/cp", {"--context-parallel-size"}},
    {"/training/ep", {"--expert-model-parallel-size"}},
    {"/training/etp", {"--expert-tensor-parallel-size", "--tensor-model-parallel-size"}},
    {"/training/vpp",
     {"--num-layers-per-virtual-pipeline-stage", "--num-virtual-stages-per-pipeline-rank",
      "--virtual-pipeline-model-parallel-size"}},
    {"/training/sequence_parallel", {"--sequence-parallel"}},
    {"/training/num_layers_in_first_stage", {"--decoder-first-pipeline-num-layers"}},
    {"/training/num_layers_in_last_stage", {"--decoder-last-pipeline-num-layers"}},
    {"/training/recompute/num_layers", {"--recompute-num-layers"}},
    {"/training/recompute/method", {"--recompute-method"}},
    {"/training/recompute/modules", {"--recompute-modules", "--recompute-granularity"}},
    {"/training/recompute", {"--recompute-granularity", "--recompute-activations"}},
    {"/training/moe_capacity_factor", {"--moe-expert-capacity-factor"}},
    {"/training/moe_flex_dispatcher_num_sms",
     {"--moe-flex-dispatcher-num-sms", "--moe-deepep-num-sms", "--moe-hybridep-num-sms"}},
    {"/training/dtype", {"--fp8-format", "--bf16", "--fp16"}},
    {"/training/flash_attention", {"--attention-backend", "--use-flash-attn"}},
    {"/system/num_gpus", {"--nnodes", "--nproc-per-node", "--nproc_per_node"}},
};

bool under(const std::string& path, const char* pointer) {
  const std::string p(pointer);
  return path.compare(0, p.size(), p) == 0 && (path.size() == p.size() || path[p.size()] == '/');
}

// The issue at the flag that set the key, or at "/args" naming the key.
Issue at_flag(const Issue& issue, const FlagReader& r) {
  for (const KeyFlags& entry : kKeyFlags) {
    if (!under(issue.path, entry.pointer)) continue;
    for (const char* flag : entry.flags) {
      if (r.given(flag)) return {"/args/" + std::string(flag), issue.message};
    }
    break;
  }
  return {"/args", "the imported config's " + issue.path + " " + issue.message};
}

}  // namespace

void check_imported_config(const nlohmann::json& config, const FlagReader& r, bool gpus_known,
                           Issues& issues) {
  nlohmann::json document = config;
  Issues found;
  Config parsed;
  if (!gpus_known) {
    // The GPU count is not in the command: check everything that does not
    // depend on it, as if dp were 1.
    document["training"]["dp"] = 1;
  }
  if (schema::read_config_document(document, parsed, found)) found = validate(parsed);
  for (const Issue& issue : found) {
    const bool needs_gpu_count = issue.path == "/system/num_gpus" || issue.path == "/training/dp" ||
                                 issue.message.find("tp*cp*dp") != std::string::npos ||
                                 issue.message.find("too many micro-batches") != std::string::npos;
    if (!gpus_known && needs_gpu_count) continue;
    issues.push_back(at_flag(issue, r));
  }
}

}  // namespace trainsim::interop
