// The editable fields of a config document, one table per section. Each
// field names its key (dotted for nested objects), its URL short name, its
// type and the core's default (shown in the form; the core stays the judge:
// see core/src/io/{model,training,system}_json.cpp).
import { clip } from '../lib/format.js';

const int = 'int';
const num = 'number';
const bool = 'bool';
const str = 'string';
const list = 'list';

// section: 'model' | 'training' | 'system'; url: short hash key (model and
// system fields use 'm.<key>' / 's.<key>' unless given).
export const MODEL_FIELDS = [
  { key: 'num_layers', label: 'Layers', type: int },
  { key: 'hidden_size', label: 'Hidden size', type: int },
  { key: 'num_attention_heads', label: 'Attention heads', type: int },
  { key: 'num_kv_heads', label: 'KV heads', type: int },
  { key: 'head_dim', label: 'Head dim', type: int },
  { key: 'ffn_hidden_size', label: 'FFN hidden size', type: int },
  { key: 'vocab_size', label: 'Vocabulary', type: int },
  { key: 'make_vocab_size_divisible_by', label: 'Vocab padding', type: int, def: 128 },
  { key: 'activation', label: 'Activation', type: 'enum', values: ['swiglu', 'gelu'], def: 'swiglu' },
  { key: 'norm', label: 'Norm', type: 'enum', values: ['rmsnorm', 'layernorm'], def: 'rmsnorm' },
  { key: 'position_embedding', label: 'Positions', type: 'enum', values: ['rope', 'learned'], def: 'rope' },
  { key: 'max_position_embeddings', label: 'Max positions', type: int, def: 0 },
  { key: 'tie_embeddings', label: 'Tied embeddings', type: bool, def: false },
  { key: 'linear_bias', label: 'Linear bias', type: bool, def: false },
  { key: 'qk_layernorm', label: 'QK layernorm', type: bool, def: false },
  { key: 'sliding_window_tokens', label: 'Sliding window', title: 'tokens each query attends back to (Megatron-LM --window-size W,0); 0 = full causal attention', type: int, def: 0 },
  { key: 'full_attention_every_n_layers', label: 'Full attention every', title: 'every n-th layer attends fully, the others through the window (Megatron-LM --window-attn-skip-freq); 0 = every layer windowed', type: int, def: 0 },
  { key: 'mtp_num_layers', label: 'MTP layers', title: 'multi-token prediction depth (Megatron-LM --mtp-num-layers; DeepSeek-V3: 1)', type: int, def: 0 },
  { key: 'moe', label: 'Mixture of experts', type: 'section' },
  { key: 'moe.num_experts', label: 'Experts', type: int },
  { key: 'moe.top_k', label: 'Top-k', type: int },
  { key: 'moe.expert_ffn_hidden_size', label: 'Expert FFN size', type: int },
  { key: 'moe.shared_expert_ffn_hidden_size', label: 'Shared expert FFN', type: int, def: 0 },
  { key: 'moe.num_dense_layers', label: 'Dense layers', type: int, def: 0 },
  { key: 'mla', label: 'Multi-head latent attention', type: 'section' },
  { key: 'mla.q_lora_rank', label: 'Q LoRA rank', type: int, def: 0 },
  { key: 'mla.kv_lora_rank', label: 'KV LoRA rank', type: int },
  { key: 'mla.qk_nope_head_dim', label: 'QK nope dim', type: int },
  { key: 'mla.qk_rope_head_dim', label: 'QK rope dim', type: int },
  { key: 'mla.v_head_dim', label: 'V head dim', type: int },
];

const RECOMPUTE_MODULES = ['core_attn', 'layernorm', 'mla_up_proj', 'mlp', 'moe_act', 'moe', 'shared_experts', 'attn', 'attn_norm',
  'attn_proj', 'mlp_block', 'mlp_norm', 'mlp_linear'];

export const TRAINING_FIELDS = [
  { key: 'seq_len', url: 'seq', label: 'Sequence length', type: int, group: 'batch' },
  { key: 'micro_batch_size', url: 'mbs', label: 'Micro-batch size', type: int, group: 'batch' },
  { key: 'global_batch_size', url: 'gbs', label: 'Global batch size', type: int, group: 'batch' },
  { key: 'num_micro_batches', url: 'nmb', label: 'or micro-batches', type: int, group: 'batch' },
  { key: 'dtype', url: 'dt', label: 'Precision', type: 'enum', values: ['bf16', 'fp16', 'fp8'], def: 'bf16', group: 'batch' },
  { key: 'tp', url: 'tp', label: 'TP', title: 'tensor parallel', type: int, def: 1, group: 'parallel' },
  { key: 'sequence_parallel', url: 'sp', label: 'Sequence parallel', type: bool, def: false, group: 'parallel' },
  { key: 'pp', url: 'pp', label: 'PP', title: 'pipeline parallel', type: int, def: 1, group: 'parallel' },
  { key: 'vpp', url: 'vpp', label: 'VPP', title: 'virtual pipeline chunks per stage', type: int, def: 1, group: 'parallel' },
  { key: 'num_layers_in_first_stage', url: 'l1', label: 'First-stage layers', type: int, group: 'parallel' },
  { key: 'num_layers_in_last_stage', url: 'll', label: 'Last-stage layers', type: int, group: 'parallel' },
  { key: 'account_for_embedding_in_pipeline_split', url: 'ape', label: 'Embedding counts as a layer', title: 'Megatron-LM --account-for-embedding-in-pipeline-split', type: bool, def: false, group: 'parallel' },
  { key: 'account_for_loss_in_pipeline_split', url: 'apl', label: 'Loss counts as a layer', title: 'Megatron-LM --account-for-loss-in-pipeline-split', type: bool, def: false, group: 'parallel' },
  { key: 'dp', url: 'dp', label: 'DP', title: 'data parallel (empty: GPUs / (tp*pp*cp))', type: int, group: 'parallel' },
  { key: 'cp', url: 'cp', label: 'CP', title: 'context parallel', type: int, def: 1, group: 'parallel' },
  { key: 'cp_comm_type', url: 'cpc', label: 'CP comm', type: 'enum', values: ['a2a', 'p2p', 'all_gather'], def: 'a2a', group: 'parallel' },
  { key: 'ep', url: 'ep', label: 'EP', title: 'expert parallel', type: int, def: 1, group: 'parallel' },
  { key: 'etp', url: 'etp', label: 'ETP', title: 'expert tensor parallel', type: int, def: 1, group: 'parallel' },
  { key: 'zero_stage', url: 'z', label: 'ZeRO stage', type: 'enum', values: [0, 1, 2, 3], def: 1, group: 'memory' },
  { key: 'recompute.granularity', url: 'rc', label: 'Recompute', type: 'enum', values: ['none', 'full', 'selective'], def: 'none', group: 'memory' },
  { key: 'recompute.method', url: 'rcm', label: 'Recompute method', type: 'enum', values: ['uniform', 'block'], group: 'memory' },
  { key: 'recompute.num_layers', url: 'rcn', label: 'Recompute layers', type: int, group: 'memory' },
  { key: 'recompute.modules', url: 'rcx', label: 'Recompute modules', type: list, values: RECOMPUTE_MODULES, def: ['core_attn'], group: 'memory' },
  { key: 'recompute.keep_tail_outputs', url: 'rck', label: 'Keep tail outputs', title: 'selective recompute keeps the last module outputs', type: bool, def: false, group: 'memory' },
  { key: 'flash_attention', url: 'fa', label: 'Flash attention', type: bool, def: true, group: 'kernels' },
  { key: 'fused_norm', url: 'fn', label: 'Fused norm', type: bool, def: true, group: 'kernels' },
  { key: 'fused_swiglu', url: 'fsw', label: 'Fused SwiGLU', type: bool, def: true, group: 'kernels' },
  { key: 'fused_cross_entropy', url: 'fce', label: 'Fused cross-entropy', type: bool, def: false, group: 'kernels' },
  { key: 'gradient_accumulation_fusion', url: 'gaf', label: 'Grad-accum fusion', type: bool, def: true, group: 'kernels' },
  { key: 'grad_reduce_in_bf16', url: 'g16', label: 'Grad reduce in bf16', type: bool, def: false, group: 'kernels' },
  { key: 'overlap_grad_reduce', url: 'ogr', label: 'Overlap grad reduce', type: bool, def: false, group: 'kernels' },
  { key: 'overlap_param_gather', url: 'opg', label: 'Overlap param gather', type: bool, def: false, group: 'kernels' },
  { key: 'tp_comm_overlap', url: 'tco', label: 'TP comm overlap', type: bool, def: false, group: 'kernels' },
  { key: 'te_version', url: 'te', label: 'TE version', type: str, pattern: /^\d{1,2}\.\d{1,3}(\.\d{1,4})?$/, group: 'kernels' },
  { key: 'moe_pad_to_capacity', url: 'mpc', label: 'MoE pad to capacity', type: bool, def: false, group: 'moe' },
  { key: 'moe_capacity_factor', url: 'mcf', label: 'MoE capacity factor', type: num, group: 'moe' },
  { key: 'moe_permute_probs_fused', url: 'mpf', label: 'MoE fused permute', type: bool, def: false, group: 'moe' },
];

export const TRAINING_GROUPS = [
  { id: 'batch', label: 'Batch and sequence', open: true },
  { id: 'parallel', label: 'Parallelism', open: true },
  { id: 'memory', label: 'ZeRO and recompute', open: true },
  { id: 'kernels', label: 'Kernels and overlap', open: false },
  { id: 'moe', label: 'MoE routing', open: false },
];

export const SYSTEM_FIELDS = [
  { key: 'num_gpus', url: 'n', label: 'GPUs', type: int },
  { key: 'gpus_per_node', label: 'GPUs per node', type: int },
  { key: 'gpu.hbm_capacity_gib', label: 'HBM (GiB)', type: num },
  { key: 'gpu.hbm_bandwidth_gb_per_s', label: 'HBM GB/s', type: num },
  { key: 'gpu.peak_tflops.bf16', label: 'BF16 TFLOP/s', type: num },
  { key: 'gpu.peak_tflops.fp16', label: 'FP16 TFLOP/s', type: num },
  { key: 'gpu.peak_tflops.fp8', label: 'FP8 TFLOP/s', type: num },
  { key: 'intra_node.bandwidth_gb_per_s', label: 'Intra-node GB/s', type: num },
  { key: 'intra_node.latency_us', label: 'Intra-node latency (us)', type: num },
  { key: 'inter_node.bandwidth_gb_per_s', label: 'Inter-node GB/s', type: num },
  { key: 'inter_node.latency_us', label: 'Inter-node latency (us)', type: num },
];

export const FIELDS = { model: MODEL_FIELDS, training: TRAINING_FIELDS, system: SYSTEM_FIELDS };

for (const [section, fields] of Object.entries(FIELDS)) {
  for (const field of fields) {
    field.section = section;
    field.path = `/${section}/${field.key.split('.').join('/')}`;
    if (!field.url) field.url = `${section[0]}.${field.key}`;
  }
}

export const CUSTOM_MODEL = 'custom';

export function fieldByKey(section, key) {
  return FIELDS[section].find((field) => field.key === key);
}

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const MAX_NUMBER = 1e15;

// Parses one text value (from the URL or a form input) for a field.
// Returns {ok: true, value} or {ok: false, message}. Empty text means unset
// ({ok: true, value: undefined}). Range rules beyond "a finite number of the
// right type" are left to the core, which names the field in its error.
export function parseText(field, text) {
  const trimmed = String(text).trim();
  if (trimmed === '') return { ok: true, value: undefined };
  switch (field.type) {
    case int:
    case num: {
      if (!NUMBER.test(trimmed)) return { ok: false, message: `expected a number, got "${clip(trimmed)}"` };
      const value = Number(trimmed);
      if (!Number.isFinite(value) || Math.abs(value) > MAX_NUMBER) {
        return { ok: false, message: `expected a number up to ${MAX_NUMBER}, got ${clip(trimmed)}` };
      }
      if (field.type === int && !Number.isInteger(value)) {
        return { ok: false, message: `expected an integer, got ${clip(trimmed)}` };
      }
      return { ok: true, value };
    }
    case bool:
      if (trimmed === '1' || trimmed === 'true') return { ok: true, value: true };
      if (trimmed === '0' || trimmed === 'false') return { ok: true, value: false };
      return { ok: false, message: `expected 1 or 0, got "${clip(trimmed)}"` };
    case 'section':
      if (trimmed === '1' || trimmed === 'on') return { ok: true, value: true };
      if (trimmed === '0' || trimmed === 'off') return { ok: true, value: false };
      return { ok: false, message: `expected 1 or 0, got "${clip(trimmed)}"` };
    case 'enum': {
      const value = field.values.find((v) => String(v) === trimmed);
      if (value === undefined) return { ok: false, message: `expected one of ${field.values.join(', ')}, got "${clip(trimmed)}"` };
      return { ok: true, value };
    }
    case str:
      if (field.pattern && !field.pattern.test(trimmed)) return { ok: false, message: `unexpected value "${clip(trimmed)}"` };
      return { ok: true, value: trimmed };
    case list: {
      const items = trimmed.split(',').map((s) => s.trim());
      const bad = items.find((item) => !field.values.includes(item));
      if (bad !== undefined) return { ok: false, message: `expected items of ${field.values.join(', ')}, got "${clip(bad)}"` };
      return { ok: true, value: items };
    }
    default:
      return { ok: false, message: 'unknown field type' };
  }
}

// The inverse of parseText for the URL and the form.
export function formatText(field, value) {
  if (value === undefined || value === null) return '';
  if (field.type === bool || field.type === 'section') return value ? '1' : '0';
  if (field.type === list) return value.join(',');
  return String(value);
}

// Checks a JSON value (from an imported file) against a field's type.
export function acceptsJson(field, value) {
  switch (field.type) {
    case int: return Number.isInteger(value) && Math.abs(value) <= MAX_NUMBER;
    case num: return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= MAX_NUMBER;
    case bool: return typeof value === 'boolean';
    case 'enum': return field.values.includes(value);
    case str: return typeof value === 'string' && (!field.pattern || field.pattern.test(value));
    case list: return Array.isArray(value) && value.length > 0 && value.every((v) => field.values.includes(v));
    default: return false;
  }
}
