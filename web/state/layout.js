// The page's layout of the config form: which fields it edits, in which
// order and group, and each one's short name in the URL. Nothing else: the
// type, enum values, default, bounds, unit, label and help of every field
// come from the core's `schema` op (fields.js joins the two).
//
// The URL names are the link format (state/url.js): never rename one.
// Model and system fields are `m.<key>` / `s.<key>` unless `url` is given.
// `label` overrides the schema's label where the form wants a shorter one;
// `main` puts a field in the section's first grid (always open). A link
// leaves out training values equal to the core's default, unless `explicit`.

export const MODEL_LAYOUT = [
  { key: 'num_layers', main: true },
  { key: 'hidden_size', main: true },
  { key: 'num_attention_heads', main: true },
  { key: 'num_kv_heads', main: true },
  { key: 'head_dim', main: true },
  { key: 'ffn_hidden_size', main: true },
  { key: 'vocab_size', main: true },
  { key: 'make_vocab_size_divisible_by' },
  { key: 'activation' },
  { key: 'norm' },
  { key: 'position_embedding' },
  { key: 'max_position_embeddings' },
  { key: 'tie_embeddings' },
  { key: 'linear_bias' },
  { key: 'qk_layernorm' },
  { key: 'sliding_window_tokens' },
  { key: 'full_attention_every_n_layers' },
  { key: 'mtp_num_layers' },
  { key: 'moe' },
  { key: 'moe.num_experts' },
  { key: 'moe.top_k' },
  { key: 'moe.expert_ffn_hidden_size' },
  { key: 'moe.shared_expert_ffn_hidden_size' },
  { key: 'moe.num_dense_layers' },
  { key: 'mla' },
  { key: 'mla.q_lora_rank' },
  { key: 'mla.kv_lora_rank' },
  { key: 'mla.qk_nope_head_dim' },
  { key: 'mla.qk_rope_head_dim' },
  { key: 'mla.v_head_dim' },
];

export const TRAINING_GROUPS = [
  { id: 'batch', label: 'Batch and sequence', open: true },
  { id: 'parallel', label: 'Parallelism', open: true },
  { id: 'memory', label: 'ZeRO, recompute and offload', open: true },
  { id: 'kernels', label: 'Kernels and overlap', open: false },
  { id: 'moe', label: 'MoE routing', open: false },
  { id: 'advanced', label: 'Advanced: CUDA graphs, dropout, NCCL', open: false },
];

// training.train_tokens is the throughput panel's "Tokens to train" (its
// link key is `tok`, state/url.js), not a field of this form.
// te_version: the link reader accepts only version-like text (the core
// checks it again and names the field), and a link keeps it even when it
// equals the core's default (`explicit`): that default follows Transformer
// Engine releases, and a link names the version it was made for.
export const TRAINING_LAYOUT = [
  { key: 'seq_len', url: 'seq', group: 'batch' },
  { key: 'micro_batch_size', url: 'mbs', group: 'batch' },
  { key: 'global_batch_size', url: 'gbs', group: 'batch' },
  { key: 'num_micro_batches', url: 'nmb', group: 'batch', label: 'or micro-batches' },
  { key: 'dtype', url: 'dt', group: 'batch' },
  { key: 'fp8_recipe', url: 'f8r', group: 'batch' },
  { key: 'fp8_param_gather', url: 'f8p', group: 'batch' },
  { key: 'tp', url: 'tp', group: 'parallel' },
  { key: 'sequence_parallel', url: 'sp', group: 'parallel' },
  { key: 'scatter_gather_tensors_in_pipeline', url: 'sgp', group: 'parallel' },
  { key: 'pp', url: 'pp', group: 'parallel' },
  { key: 'vpp', url: 'vpp', group: 'parallel' },
  { key: 'num_layers_in_first_stage', url: 'l1', group: 'parallel' },
  { key: 'num_layers_in_last_stage', url: 'll', group: 'parallel' },
  { key: 'account_for_embedding_in_pipeline_split', url: 'ape', group: 'parallel' },
  { key: 'account_for_loss_in_pipeline_split', url: 'apl', group: 'parallel' },
  { key: 'pipeline_schedule', url: 'psc', group: 'parallel' },
  { key: 'pipeline_layout', url: 'ppl', group: 'parallel', pattern: /^[EtmL|*(),\d\s]+$/ },
  { key: 'dp', url: 'dp', group: 'parallel', placeholder: 'auto' },
  { key: 'cp', url: 'cp', group: 'parallel' },
  { key: 'cp_comm_type', url: 'cpc', group: 'parallel' },
  { key: 'ep', url: 'ep', group: 'parallel' },
  { key: 'etp', url: 'etp', group: 'parallel' },
  { key: 'zero_stage', url: 'z', group: 'memory' },
  { key: 'recompute.granularity', url: 'rc', group: 'memory' },
  { key: 'recompute.method', url: 'rcm', group: 'memory' },
  { key: 'recompute.num_layers', url: 'rcn', group: 'memory' },
  { key: 'recompute.modules', url: 'rcx', group: 'memory' },
  { key: 'recompute.keep_tail_outputs', url: 'rck', group: 'memory' },
  { key: 'optimizer_offload_fraction', url: 'oof', group: 'memory' },
  { key: 'overlap_cpu_optimizer_d2h_h2d', url: 'ood', group: 'memory' },
  { key: 'activation_offload_layers', url: 'aol', group: 'memory' },
  { key: 'expandable_segments', url: 'es', group: 'memory' },
  { key: 'flash_attention', url: 'fa', group: 'kernels' },
  { key: 'fused_norm', url: 'fn', group: 'kernels' },
  { key: 'fused_swiglu', url: 'fsw', group: 'kernels' },
  { key: 'fused_cross_entropy', url: 'fce', group: 'kernels' },
  { key: 'fused_bias_dropout', url: 'fbd', group: 'kernels' },
  { key: 'fused_rope', url: 'fro', group: 'kernels' },
  { key: 'fused_softmax', url: 'fsm', group: 'kernels' },
  { key: 'gradient_accumulation_fusion', url: 'gaf', group: 'kernels' },
  { key: 'fsdp_double_buffer', url: 'fdb', group: 'memory' },
  { key: 'fsdp_communication_unit_elements', url: 'fcu', group: 'memory' },
  { key: 'grad_reduce_in_bf16', url: 'g16', group: 'kernels' },
  { key: 'overlap_grad_reduce', url: 'ogr', group: 'kernels' },
  { key: 'overlap_param_gather', url: 'opg', group: 'kernels' },
  { key: 'tp_comm_overlap', url: 'tco', group: 'kernels' },
  { key: 'overlap_p2p_comm', url: 'op2', group: 'kernels' },
  { key: 'defer_embedding_wgrad_compute', url: 'dew', group: 'kernels' },
  { key: 'wgrad_deferral_limit', url: 'wdl', group: 'kernels' },
  { key: 'te_version', url: 'te', group: 'kernels', pattern: /^\d{1,2}\.\d{1,3}(\.\d{1,4})?$/, explicit: true },
  { key: 'moe_pad_to_capacity', url: 'mpc', group: 'moe' },
  { key: 'moe_capacity_factor', url: 'mcf', group: 'moe' },
  { key: 'moe_permute_probs_fused', url: 'mpf', group: 'moe' },
  { key: 'moe_token_dispatcher', url: 'mtd', group: 'moe' },
  { key: 'moe_flex_dispatcher_num_sms', url: 'mfs', group: 'moe' },
  { key: 'moe_routing_imbalance', url: 'mri', group: 'moe' },
  { key: 'moe_router_load_balancing_type', url: 'mlb', group: 'moe' },
  { key: 'moe_aux_loss_coeff', url: 'mal', group: 'moe' },
  { key: 'moe_router_enable_expert_bias', url: 'meb', group: 'moe' },
  { key: 'moe_router_fp32', url: 'mrf', group: 'moe' },
  { key: 'moe_router_fusion', url: 'mrx', group: 'moe' },
  { key: 'moe_permute_fusion', url: 'mpx', group: 'moe' },
  { key: 'overlap_moe_expert_parallel_comm', url: 'oep', group: 'moe' },
  { key: 'delay_wgrad_compute', url: 'dwg', group: 'moe' },
  { key: 'moe_shared_expert_overlap', url: 'seo', group: 'moe' },
  { key: 'cuda_graph.impl', url: 'cgi', group: 'advanced' },
  { key: 'cuda_graph.modules', url: 'cgm', group: 'advanced' },
  { key: 'hidden_dropout', url: 'hdo', group: 'advanced' },
  { key: 'attention_dropout', url: 'ado', group: 'advanced' },
  { key: 'nccl_nvls', url: 'nvl', group: 'advanced' },
];

// The links' own labels ("Bandwidth", "Latency") need the link's name here.
export const SYSTEM_LAYOUT = [
  { key: 'num_gpus', url: 'n', main: true },
  { key: 'gpus_per_node', main: true },
  { key: 'gpu.hbm_capacity_gib', main: true },
  { key: 'gpu.hbm_bandwidth_gb_per_s' },
  { key: 'gpu.peak_tflops.bf16' },
  { key: 'gpu.peak_tflops.fp16' },
  { key: 'gpu.peak_tflops.fp8' },
  { key: 'intra_node.bandwidth_gb_per_s', label: 'Intra-node GB/s' },
  { key: 'intra_node.latency_us', label: 'Intra-node latency (us)' },
  { key: 'inter_node.bandwidth_gb_per_s', label: 'Inter-node GB/s' },
  { key: 'inter_node.latency_us', label: 'Inter-node latency (us)' },
];

export const LAYOUT = { model: MODEL_LAYOUT, training: TRAINING_LAYOUT, system: SYSTEM_LAYOUT };
