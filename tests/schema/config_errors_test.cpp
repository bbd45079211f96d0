// Every bad input yields an error envelope naming the JSON path and what was
// expected. Each row pins one message; an untested message does not exist.
#include <gtest/gtest.h>

#include "test_util.h"

namespace trainsim {
namespace {

struct BadInputCase {
  const char* name;
  const char* patch;  ///< JSON merge patch applied to testing::base_config()
  const char* path;
  const char* message;
};

const BadInputCase kCases[] = {
    {"unknown_top_level_key", R"({"trainng": {}})", "/trainng",
     "unknown key (did you mean \"training\"?)"},
    {"unknown_training_key", R"({"training": {"micro_batch": 2}})", "/training/micro_batch",
     "unknown key (did you mean \"micro_batch_size\"?)"},
    {"unknown_key_far_from_every_name", R"({"training": {"recompute": {"mode": "full"}}})",
     "/training/recompute/mode",
     "unknown key; expected one of \"granularity\", \"keep_tail_outputs\", \"method\", \"modules\", \"num_layers\""},
    {"window_skip_without_window", R"({"model": {"preset": "llama3-8b", "full_attention_every_n_layers": 2}})",
     "/model/full_attention_every_n_layers",
     "needs sliding_window_tokens (the other layers' window); without a window every layer attends fully"},
    {"window_negative", R"({"model": {"preset": "llama3-8b", "sliding_window_tokens": -1}})", "/model/sliding_window_tokens",
     "must be at least 0, got -1"},
    {"tp_wrong_type", R"({"training": {"tp": "8"}})", "/training/tp",
     "expected integer, got string \"8\""},
    {"tp_fraction", R"({"training": {"tp": 2.5}})", "/training/tp", "expected integer, got number 2.5"},
    {"tp_zero", R"({"training": {"tp": 0}})", "/training/tp", "must be at least 1, got 0"},
    {"tp_negative", R"({"training": {"tp": -4}})", "/training/tp", "must be at least 1, got -4"},
    {"seq_len_missing", R"({"training": {"seq_len": null}})", "/training/seq_len",
     "missing required key"},
    {"seq_len_huge", R"({"training": {"seq_len": 99999999999}})", "/training/seq_len",
     "must be at most 67108864, got 99999999999"},
    {"dtype_unknown", R"({"training": {"dtype": "int8"}})", "/training/dtype",
     "expected one of \"bf16\", \"fp16\", \"fp8\", \"fp4\", got \"int8\""},
    {"sp_not_bool", R"({"training": {"sequence_parallel": 1}})", "/training/sequence_parallel",
     "expected boolean, got number 1"},
    {"tp_not_dividing_heads", R"({"training": {"tp": 3}, "system": {"num_gpus": 12}})",
     "/training/tp", "must divide num_attention_heads (32), got 3"},
    {"tp_not_dividing_kv_heads", R"({"training": {"tp": 16}, "system": {"num_gpus": 64}})",
     "/training/tp", "must divide num_kv_heads (8), got 16"},
    {"world_size_mismatch", R"({"training": {"dp": 3, "global_batch_size": 48}})", "/system/num_gpus",
     "must equal tp*pp*dp*cp (12), got 16"},
    {"gpus_not_multiple", R"({"system": {"num_gpus": 18}})", "/system/num_gpus",
     "must be a multiple of tp*pp*cp (4) when training.dp is not set, got 18"},
    {"batch_not_multiple", R"({"training": {"global_batch_size": 30}})",
     "/training/global_batch_size", "must be a multiple of micro_batch_size*dp (4), got 30"},
    {"both_batch_keys", R"({"training": {"num_micro_batches": 8}})", "/training/num_micro_batches",
     "set either global_batch_size or num_micro_batches, not both"},
    {"no_batch_key", R"({"training": {"global_batch_size": null}})", "/training/global_batch_size",
     "missing required key (or set num_micro_batches)"},
    {"layers_not_divisible", R"({"training": {"pp": 3}, "system": {"num_gpus": 24}})",
     "/training/pp", "must divide num_layers (32), got 3"},
    {"uneven_stages_bad", R"({"training": {"pp": 4, "num_layers_in_first_stage": 6}, "system": {"num_gpus": 32}})",
     "/training/num_layers_in_first_stage",
     "the remaining 26 layers must divide evenly over the other 3 stages"},
    {"vpp_without_pp", R"({"training": {"pp": 1, "vpp": 2}, "system": {"num_gpus": 8}})",
     "/training/vpp", "must be 1 when pp is 1 (interleaving needs pipeline stages), got 2"},
    {"vpp_not_dividing_stage", R"({"training": {"vpp": 3}})", "/training/vpp",
     "must divide the layers of every stage (16), got 3"},
    {"ep_on_dense", R"({"training": {"ep": 2}})", "/training/ep",
     "must be 1 for a dense model, got 2"},
    {"unknown_model_preset", R"({"model": "llama3-9b"})", "/model",
     "unknown model preset \"llama3-9b\" (did you mean \"llama3-8b\"?)"},
    {"unknown_system_preset", R"({"system": {"preset": "h100-sxm-81gb"}})", "/system/preset",
     "unknown system preset \"h100-sxm-81gb\" (did you mean \"h100-sxm-80gb\"?)"},
    {"model_wrong_type", R"({"model": 42})", "/model",
     "expected a preset id (string) or an object, got number 42"},
    {"model_field_override_bad", R"({"model": {"preset": "llama3-8b", "hidden_size": -1}})",
     "/model/hidden_size", "must be at least 1, got -1"},
    {"model_unknown_field", R"({"model": {"preset": "llama3-8b", "hiden_size": 10}})",
     "/model/hiden_size", "unknown key (did you mean \"hidden_size\"?)"},
    {"activation_unknown", R"({"model": {"preset": "llama3-8b", "activation": "relu"}})",
     "/model/activation", "expected one of \"swiglu\", \"gelu\", \"squared_relu\", \"geglu\", got \"relu\""},
    {"kv_heads_not_dividing", R"({"model": {"preset": "llama3-8b", "num_kv_heads": 5}})",
     "/model/num_kv_heads", "must divide num_attention_heads (32), got 5"},
    {"hbm_negative", R"({"system": {"gpu": {"hbm_capacity_gib": -80}}})",
     "/system/gpu/hbm_capacity_gib", "must be at least 1e-06, got -80"},
    {"bandwidth_string", R"({"system": {"intra_node": {"bandwidth_gb_per_s": "fast"}}})",
     "/system/intra_node/bandwidth_gb_per_s", "expected number, got string \"fast\""},
    {"zero_stage_range", R"({"training": {"zero_stage": 4}})", "/training/zero_stage",
     "must be at most 3, got 4"},
    {"recompute_bad_granularity", R"({"training": {"recompute": {"granularity": "partial"}}})",
     "/training/recompute/granularity",
     "expected one of \"none\", \"full\", \"selective\", got \"partial\""},
    {"recompute_full_no_layers", R"({"training": {"recompute": {"granularity": "full", "method": "block"}}})",
     "/training/recompute/num_layers", "missing required key (granularity is \"full\")"},
    {"recompute_bad_module", R"({"training": {"recompute": {"granularity": "selective", "modules": ["mlp", "attention"]}}})",
     "/training/recompute/modules/1",
     "expected one of \"core_attn\", \"layernorm\", \"mla_up_proj\", \"mlp\", \"moe_act\", \"moe\", "
     "\"shared_experts\", \"attn\", \"attn_norm\", \"attn_proj\", \"mlp_block\", \"mlp_norm\", "
     "\"mlp_linear\", got string \"attention\""},
    {"recompute_module_needs_moe", R"({"training": {"recompute": {"granularity": "selective", "modules": ["moe_act"]}}})",
     "/training/recompute/modules", "\"moe\" and \"moe_act\" need a model with moe"},
    {"te_version_bad", R"({"training": {"te_version": "latest"}})", "/training/te_version",
     "expected a release version such as \"2.11\" or \"2.11.0\" (digits only: a pre-release such as \"2.11rc1\" is not a release), got \"latest\""},
    {"schema_version_future", R"({"schema_version": 2})", "/schema_version",
     "unsupported schema version 2 (this build reads version 1)"},
    {"cp_with_unfused_attention", R"({"training": {"cp": 2, "flash_attention": false}, "system": {"num_gpus": 32}})",
     "/training/flash_attention",
     "must be true with cp > 1 (Transformer Engine's unfused attention does not support context parallelism)"},
    {"cp_not_dividing_seq", R"({"training": {"cp": 2, "seq_len": 4098}, "system": {"num_gpus": 32}})",
     "/training/cp",
     "must divide seq_len (context parallelism splits the sequence into 2*cp chunks) (4098), got 4"},
    // Reliability findings (issue 7): inputs that overflowed or hung before.
    {"world_size_overflow",
     R"({"training": {"tp": 16777216, "cp": 16777216, "pp": 100000, "dp": 16777216}, "system": {"num_gpus": null}})",
     "/training/cp", "tp*cp must be at most 16777216 (the largest number of GPUs), got 281474976710656"},
    {"too_many_micro_batches", R"({"training": {"global_batch_size": null, "num_micro_batches": 4194304}})",
     "/training/num_micro_batches",
     "too many micro-batches to simulate: num_micro_batches*pp*vpp must be at most 4194304, got "
     "4194304*2*1"},
    {"too_many_micro_batches_from_batch", R"({"training": {"global_batch_size": 33554432}})",
     "/training/global_batch_size",
     "too many micro-batches to simulate: num_micro_batches*pp*vpp must be at most 4194304, got "
     "8388608*2*1"},
    {"too_many_tokens_per_micro_batch", R"({"training": {"seq_len": 67108864, "micro_batch_size": 128}})",
     "/training/micro_batch_size",
     "seq_len*micro_batch_size must be at most 4294967296 tokens, got 8589934592"},
    {"capacity_factor_huge", R"({"training": {"moe_capacity_factor": 1000000}})",
     "/training/moe_capacity_factor", "must be at most 1000, got 1000000"},
    {"gemm_efficiency_tiny", R"({"system": {"efficiency": {"gemm": {"bf16": 1e-300}}}})",
     "/system/efficiency/gemm/bf16", "must be at least 1e-06, got 1e-300"},
    {"attention_efficiency_above_peak", R"({"system": {"efficiency": {"attention": {"forward": {"128": {"causal": {"4096": 1.2}}}, "backward": {"128": {"causal": {"4096": 0.5}}}}}}})",
     "/system/efficiency/attention/forward/128/causal/4096", "expected a fraction of peak in (0, 1], got number 1.2"},
    {"mxfp8_on_hopper", R"({"training": {"dtype": "fp8", "fp8_recipe": "mxfp8"}})",
     "/training/fp8_recipe", "\"mxfp8\" needs block-scaled (MX) tensor cores (compute capability >= 10.0; system.gpu.peak_tflops.fp4 > 0); H100 SXM5 80GB has none"},
    {"nvfp4_on_hopper", R"({"training": {"dtype": "fp4"}})",
     "/training/dtype", "\"fp4\" (NVFP4) needs a GPU with fp4 tensor cores (system.gpu.peak_tflops.fp4 > 0); H100 SXM5 80GB has none"},
    {"fp8_on_a100", R"({"system": {"preset": "a100-sxm-80gb"}, "training": {"dtype": "fp8"}})",
     "/training/dtype", "\"fp8\" needs a GPU with fp8 tensor cores (system.gpu.peak_tflops.fp8 > 0); A100 SXM4 80GB has none"},
    {"fp8_recipe_without_fp8", R"({"training": {"fp8_recipe": "tensorwise"}})",
     "/training/fp8_recipe", "applies only to dtype \"fp8\" (set dtype or remove fp8_recipe)"},
    {"flex_sms_with_alltoall", R"({"training": {"moe_flex_dispatcher_num_sms": 24}})",
     "/training/moe_flex_dispatcher_num_sms",
     "applies only to moe_token_dispatcher \"flex\" (set moe_token_dispatcher or remove moe_flex_dispatcher_num_sms)"},
    {"flex_sms_above_the_gpus", R"({"training": {"moe_token_dispatcher": "flex", "moe_flex_dispatcher_num_sms": 133}})",
     "/training/moe_flex_dispatcher_num_sms",
     "must be at most the GPU's 132 SMs (system.efficiency.num_sms), got 133"},
    {"flex_sms_zero", R"({"training": {"moe_token_dispatcher": "flex", "moe_flex_dispatcher_num_sms": 0}})",
     "/training/moe_flex_dispatcher_num_sms", "must be at least 1, got 0"},
    {"cuda_graph_moe_on_dense", R"({"training": {"cuda_graph": {"impl": "local", "modules": ["moe_router"]}}})",
     "/training/cuda_graph/modules", "\"moe\", \"moe_router\" and \"moe_preprocess\" need a model with moe"},
    {"link_bandwidth_tiny", R"({"system": {"inter_node": {"bandwidth_gb_per_s": 1e-9}}})",
     "/system/inter_node/bandwidth_gb_per_s", "must be at least 1e-06, got 1e-09"},
    {"nvls_across_nodes", R"({"system": {"inter_node": {"nvls_all_reduce_efficiency": 0.5}}})",
     "/system/inter_node/nvls_all_reduce_efficiency", "NVLink SHARP serves one NVLink domain: set it on system.intra_node"},
    {"nvls_above_link", R"({"system": {"intra_node": {"nvls_all_reduce_efficiency": 1.5}}})",
     "/system/intra_node/nvls_all_reduce_efficiency", "must be at most 1, got 1.5"},
    {"fp8_peak_tiny", R"({"system": {"gpu": {"peak_tflops": {"fp8": 1e-12}}}})",
     "/system/gpu/peak_tflops/fp8", "must be 0 (no fp8) or at least 1e-06, got 1e-12"},
    {"measured_efficiency_tiny", R"({"system": {"efficiency": {"measured": {"gemm": {"b=1, m=1, k=1, n=1": 1e-300}}}}})",
     "/system/efficiency/measured/gemm/b=1, m=1, k=1, n=1", "expected a fraction of peak in (0, 1], got number 1e-300"},
    {"measured_efficiency_above_peak", R"({"system": {"efficiency": {"measured": {"attention_forward": {"batch=1, seq_len=4096": 1.19}}}}})",
     "/system/efficiency/measured/attention_forward/batch=1, seq_len=4096", "expected a fraction of peak in (0, 1], got number 1.19"},
    // Expert-parallel overlap: Megatron-LM's refusals (transformer_config.py __post_init__).
    {"ep_overlap_dense", R"({"training": {"overlap_moe_expert_parallel_comm": true}})",
     "/training/overlap_moe_expert_parallel_comm",
     "needs a mixture-of-experts model and ep > 1 (Megatron-LM: only supported with expert model parallelism)"},
    {"ep_overlap_needs_vpp", R"({"model": "mixtral-8x7b", "training": {"ep": 2, "overlap_moe_expert_parallel_comm": true}})",
     "/training/vpp",
     "must be > 1 with overlap_moe_expert_parallel_comm and pp > 1 (Megatron-LM needs a virtual pipeline: the "
     "combined 1F1B runs in the interleaved schedule)"},
    {"ep_overlap_full_recompute",
     R"({"model": "mixtral-8x7b", "training": {"ep": 2, "vpp": 2, "overlap_moe_expert_parallel_comm": true,
         "recompute": {"granularity": "full", "method": "uniform", "num_layers": 1}}})",
     "/training/recompute/granularity", "Megatron-LM refuses full recompute with overlap_moe_expert_parallel_comm"},
    {"ep_overlap_recompute_moe",
     R"({"model": "mixtral-8x7b", "training": {"ep": 2, "vpp": 2, "overlap_moe_expert_parallel_comm": true,
         "recompute": {"granularity": "selective", "modules": ["moe"]}}})",
     "/training/recompute/modules", "\"moe\" cannot be recomputed with overlap_moe_expert_parallel_comm (Megatron-LM)"},
    {"ep_overlap_recompute_num_layers",
     R"({"model": "mixtral-8x7b", "training": {"ep": 2, "vpp": 2, "overlap_moe_expert_parallel_comm": true,
         "recompute": {"granularity": "selective", "num_layers": 2}}})",
     "/training/recompute/num_layers",
     "must be 0 with overlap_moe_expert_parallel_comm (Megatron-LM refuses recompute_num_layers)"},
    {"ep_overlap_with_shared_overlap",
     R"({"model": "mixtral-8x7b", "training": {"ep": 2, "vpp": 2, "overlap_moe_expert_parallel_comm": true,
         "moe_shared_expert_overlap": true}})",
     "/training/moe_shared_expert_overlap", "cannot be combined with overlap_moe_expert_parallel_comm (Megatron-LM)"},
    {"ep_overlap_two_mtp_layers",
     R"({"model": {"preset": "mixtral-8x7b", "mtp_num_layers": 2},
         "training": {"ep": 2, "vpp": 2, "overlap_moe_expert_parallel_comm": true}})",
     "/model/mtp_num_layers", "must be at most 1 with overlap_moe_expert_parallel_comm (Megatron-LM)"},
    {"ep_overlap_zero_bubble",
     R"({"model": "mixtral-8x7b", "training": {"ep": 2, "vpp": 2, "overlap_moe_expert_parallel_comm": true,
         "pipeline_schedule": "zero_bubble_v"}})",
     "/training/pipeline_schedule", "must be \"1f1b\" with overlap_moe_expert_parallel_comm (Megatron-LM's schedules)"},
    {"delay_wgrad_without_overlap", R"({"training": {"delay_wgrad_compute": true}})",
     "/training/delay_wgrad_compute", "needs overlap_moe_expert_parallel_comm (Megatron-LM)"},
    {"delay_wgrad_old_te",
     R"({"model": "mixtral-8x7b", "training": {"ep": 2, "vpp": 2, "overlap_moe_expert_parallel_comm": true,
         "delay_wgrad_compute": true, "overlap_grad_reduce": true, "te_version": "2.7"}})",
     "/training/te_version",
     "must be at least 2.8 for delay_wgrad_compute with overlap_grad_reduce (Megatron-LM arguments.py)"},
    {"shared_overlap_recompute_shared",
     R"({"model": "deepseek-v2-lite", "training": {"ep": 2, "pp": 1, "moe_shared_expert_overlap": true,
         "recompute": {"granularity": "selective", "modules": ["shared_experts"]}}})",
     "/training/recompute/modules",
     "\"shared_experts\" cannot be recomputed with moe_shared_expert_overlap (Megatron-LM)"},
    {"blocking_interleaved_p2p_needs_three_stages",
     R"({"training": {"vpp": 2, "overlap_p2p_comm": false}})", "/training/overlap_p2p_comm",
     "false needs pp > 2 with interleaving (Megatron-LM asserts it), got pp 2"},
    {"deferred_output_wgrad_needs_pipeline",
     R"({"training": {"pp": 1, "defer_embedding_wgrad_compute": true}, "system": {"num_gpus": 8}})",
     "/training/defer_embedding_wgrad_compute", "needs pp > 1 (Megatron-LM refuses it without pipeline stages)"},
    {"deferred_output_wgrad_needs_accumulation_fusion",
     R"({"training": {"defer_embedding_wgrad_compute": true, "gradient_accumulation_fusion": false}})",
     "/training/defer_embedding_wgrad_compute", "needs gradient_accumulation_fusion (Megatron-LM refuses it without)"},
    {"deferred_output_wgrad_needs_1f1b",
     R"({"training": {"defer_embedding_wgrad_compute": true, "pipeline_schedule": "zero_bubble_h1"}})",
     "/training/defer_embedding_wgrad_compute",
     "needs pipeline_schedule 1f1b: only Megatron-LM's 1F1B schedules run the deferred GEMMs"},
    {"deferral_limit_without_deferral", R"({"training": {"wgrad_deferral_limit": 22}})",
     "/training/wgrad_deferral_limit",
     "needs defer_embedding_wgrad_compute true (it counts the deferred micro-batches)"},
    {"deferral_limit_negative",
     R"({"training": {"defer_embedding_wgrad_compute": true, "wgrad_deferral_limit": -1}})",
     "/training/wgrad_deferral_limit", "must be at least 0, got -1"},
    {"fsdp_double_buffer_without_fsdp", R"({"training": {"fsdp_double_buffer": true}})",
     "/training/fsdp_double_buffer", "needs zero_stage 2 or 3 (Megatron-FSDP)"},
    {"fsdp_unit_without_fsdp", R"({"training": {"fsdp_communication_unit_elements": 1000}})",
     "/training/fsdp_communication_unit_elements", "needs zero_stage 2 or 3 (Megatron-FSDP)"},
    {"fsdp_unit_negative", R"({"training": {"zero_stage": 3, "fsdp_communication_unit_elements": -1}})",
     "/training/fsdp_communication_unit_elements", "must be at least 0, got -1"},
    {"dp_bandwidth_table_overflows",  // fuzz: 1e300 GB/s became inf bytes/s in the echoed config
     R"({"system": {"intra_node_tiers": [{"bandwidth_gb_per_s": 50, "latency_us": 2, "max_group_size": 2,
         "dp_all_gather_gb_per_s": {"2": 1e300}}]}})",
     "/system/intra_node_tiers/0/dp_all_gather_gb_per_s/2",
     "expected a number from 1e-06 to 1e7 (GB/s), got number 1e+300"},
};

void PrintTo(const BadInputCase& c, std::ostream* out) { *out << c.name; }

class BadInputTest : public ::testing::TestWithParam<BadInputCase> {};

TEST_P(BadInputTest, ReportsPathAndMessage) {
  const BadInputCase& c = GetParam();
  nlohmann::json config = testing::base_config();
  config.merge_patch(nlohmann::json::parse(c.patch));
  const nlohmann::json envelope = testing::run_estimate(config);
  ASSERT_FALSE(envelope.at("ok").get<bool>()) << envelope.dump();
  EXPECT_EQ(envelope.at("schema_version"), 1);
  bool found = false;
  for (const auto& error : envelope.at("errors")) {
    if (error.at("path") == c.path && error.at("message") == c.message) found = true;
  }
  EXPECT_TRUE(found) << "expected {" << c.path << ": " << c.message << "} in "
                     << envelope.at("errors").dump(1);
}

INSTANTIATE_TEST_SUITE_P(ConfigErrors, BadInputTest, ::testing::ValuesIn(kCases),
                         [](const auto& row) { return std::string(row.param.name); });

TEST(ConfigErrorsTest, InvalidJsonNamesTheByte) {
  const nlohmann::json envelope = nlohmann::json::parse(estimate_json("{\"model\": }"));
  ASSERT_FALSE(envelope.at("ok").get<bool>());
  EXPECT_EQ(envelope["errors"][0]["path"], "");
  EXPECT_EQ(envelope["errors"][0]["message"].get<std::string>().rfind("invalid JSON at byte 11", 0), 0u)
      << envelope.dump();
}

TEST(ConfigErrorsTest, ReportsEveryIssueAtOnce) {
  nlohmann::json config = testing::base_config();
  config.merge_patch(nlohmann::json::parse(
      R"({"training": {"tp": "x", "pp": 0, "dtype": 3}, "system": {"gpus_per_node": 0}})"));
  const nlohmann::json envelope = testing::run_estimate(config);
  ASSERT_FALSE(envelope.at("ok").get<bool>());
  EXPECT_GE(envelope.at("errors").size(), 4u) << envelope.dump(1);
}

TEST(ConfigErrorsTest, NonObjectDocumentIsAnError) {
  const nlohmann::json envelope = nlohmann::json::parse(estimate_json("[1, 2]"));
  ASSERT_FALSE(envelope.at("ok").get<bool>());
  EXPECT_EQ(envelope["errors"][0]["message"], "expected object, got array");
}

}  // namespace
}  // namespace trainsim
