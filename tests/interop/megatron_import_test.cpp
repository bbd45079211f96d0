// Megatron-LM importer: realistic launch scripts and command lines
// (tests/data/megatron) give the expected config field by field, each one a
// valid config; bad flags give one pinned error; the rest becomes notes.
#include <gtest/gtest.h>

#include <sstream>

#include "interop/interop_test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;
using testing::has_note;

struct CommandCase {
  const char* file;
  const char* preset;    ///< model preset it describes, or ""
  const char* expected;  ///< subset of the imported config
  std::vector<const char*> notes;
};

const CommandCase kCommandCases[] = {
    {"llama3_8b_fp8.sh", "llama3-8b",
     R"({"training":{"seq_len":8192,"micro_batch_size":1,"global_batch_size":128,"dtype":"fp8","tp":1,
         "pp":1,"cp":2,"cp_comm_type":"p2p","zero_stage":1,"grad_reduce_in_bf16":false,
         "fused_cross_entropy":true,"flash_attention":true,"overlap_grad_reduce":true,
         "overlap_param_gather":true,"recompute":{"granularity":"none"}},
         "system":{"num_gpus":8}})",
     {"vocabulary size 128256 of tokenizer \"meta-llama/Meta-Llama-3-8B\""}},
    {"llama3_70b.sh", "llama3-70b",
     R"({"training":{"tp":4,"pp":4,"vpp":4,"cp":2,"cp_comm_type":"a2a","sequence_parallel":true,
         "tp_comm_overlap":true,"global_batch_size":128,"dtype":"bf16"},"system":{"num_gpus":64}})",
     {}},
    {"llama31_405b.sh", "llama3.1-405b",
     R"({"training":{"tp":8,"pp":8,"vpp":2,"cp":2,"account_for_embedding_in_pipeline_split":true,
         "account_for_loss_in_pipeline_split":true,
         "recompute":{"granularity":"selective","modules":["core_attn","layernorm"]}},
         "system":{"num_gpus":1024}})",
     {}},
    {"llama31_70b_full_recompute.sh", "llama3-70b",
     R"({"training":{"micro_batch_size":2,"global_batch_size":64,"tp":8,"pp":2,"sequence_parallel":true,
         "gradient_accumulation_fusion":false,
         "recompute":{"granularity":"full","method":"uniform","num_layers":1}},"system":{"num_gpus":16}})",
     {}},
    {"llama2_7b.sh", "llama2-7b",
     R"({"training":{"micro_batch_size":1,"global_batch_size":128,"tp":1,"zero_stage":1,
         "recompute":{"granularity":"selective","modules":["core_attn"]}},"system":{"num_gpus":8}})",
     {"--nnodes is not given: torchrun's default is 1"}},
    {"mixtral_8x7b.sh", "mixtral-8x7b",
     R"({"training":{"tp":1,"pp":4,"ep":8,"etp":1,"sequence_parallel":false,"zero_stage":1,
         "moe_capacity_factor":0.0,"moe_pad_to_capacity":false},"system":{"num_gpus":32}})",
     {"--moe-ffn-hidden-size is not given: Megatron-LM uses --ffn-hidden-size 14336",
      "--sequence-parallel is dropped: Megatron-LM disables it when tp is 1",
      "the vocabulary size is taken from --vocab-size 32000"}},
    {"mixtral_8x22b.sh", "mixtral-8x22b",
     R"({"training":{"tp":2,"pp":8,"ep":8,"etp":2,"moe_capacity_factor":1.0,"moe_pad_to_capacity":true,
         "recompute":{"granularity":"selective","modules":["moe_act","layernorm"]}},
         "system":{"num_gpus":128}})",
     {"NullTokenizer: vocabulary of --vocab-size + 1 (the end-of-document token) = 32768"}},
    {"deepseek_v3.sh", "deepseek-v3",
     R"({"model":{"vocab_size":129280,"make_vocab_size_divisible_by":1,"mtp_num_layers":1},
         "training":{"tp":1,"pp":16,"ep":64,"etp":1,"num_layers_in_first_stage":3,
         "num_layers_in_last_stage":2,"recompute":{"granularity":"full","method":"uniform","num_layers":1}},
         "system":{"num_gpus":1024}})",
     {"--padded-vocab-size is used as the vocabulary size, without further padding"}},
    {"deepseek_v2_lite.sh", "deepseek-v2-lite",
     R"({"training":{"micro_batch_size":2,"global_batch_size":256,"ep":8,"etp":1},"system":{"num_gpus":8}})",
     {}},
    {"qwen3_30b_a3b.sh", "",
     R"({"model":{"num_layers":48,"hidden_size":2048,"num_attention_heads":32,"num_kv_heads":4,"head_dim":128,
         "ffn_hidden_size":6144,"vocab_size":151936,"qk_layernorm":true,
         "moe":{"num_experts":128,"top_k":8,"expert_ffn_hidden_size":768,"num_dense_layers":0}},
         "training":{"tp":2,"sequence_parallel":true,"ep":8,"etp":1,"micro_batch_size":1,"global_batch_size":512},
         "system":{"num_gpus":16}})",
     {}},
    {"qwen3_235b_a22b.sh", "qwen3-235b-a22b",
     R"({"training":{"tp":4,"pp":8,"ep":32,"etp":1,"num_layers_in_first_stage":10,"num_layers_in_last_stage":12,
         "grad_reduce_in_bf16":true,"recompute":{"granularity":"full","method":"block","num_layers":2}},
         "system":{"num_gpus":256}})",
     {}},
    {"gpt3_175b.sh", "gpt3-175b",
     R"({"training":{"seq_len":2048,"dtype":"fp16","grad_reduce_in_bf16":false,"tp":8,"pp":12,"vpp":2,
         "global_batch_size":1536,"zero_stage":0},"system":{"num_gpus":768}})",
     {"--ffn-hidden-size is not given: Megatron-LM's default (4*hidden_size",
      "--position-embedding-type is not given: Megatron-LM's default is learned_absolute",
      "--rampup-batch-size is ignored"}},
    {"mistral_7b_cp.sh", "",
     R"({"model":{"num_layers":32,"num_kv_heads":8,"vocab_size":32000,"sliding_window_tokens":4096},
         "training":{"seq_len":32768,"tp":4,"cp":4,"cp_comm_type":"all_gather","zero_stage":3,
         "recompute":{"granularity":"full","method":"block","num_layers":4}},"system":{"num_gpus":32}})",
     {}},
};

class MegatronImportTest : public ::testing::TestWithParam<CommandCase> {};

json import_file(const std::string& file, const std::string& system = "") {
  return json::parse(import_megatron_json(
      testing::read_text_file(testing::test_data_path("data/megatron/" + file)), system));
}

// Model fields a command line and a preset both define.
json model_fields(const Config& config) {
  json model = testing::comparable(config)["model"];
  model.erase("make_vocab_size_divisible_by");
  return model;
}

TEST_P(MegatronImportTest, ImportsEveryFlagItReads) {
  const CommandCase& c = GetParam();
  const json envelope = import_file(c.file);
  ASSERT_TRUE(envelope["ok"].get<bool>()) << envelope.dump();
  const json& config = envelope["result"]["config"];
  EXPECT_EQ(testing::subset_mismatch(json::parse(c.expected), config), "");
  for (const char* note : c.notes) {
    EXPECT_TRUE(has_note(envelope["result"]["notes"], note)) << note << " in " << envelope["result"]["notes"];
  }
  const Config parsed = testing::parse_ok(config);
  if (*c.preset != '\0') {
    json with_preset = config;
    with_preset["model"] = c.preset;
    EXPECT_EQ(testing::first_difference(model_fields(testing::parse_ok(with_preset)), model_fields(parsed)), "");
  }
}

// import(export(import(text))) == import(text): the exporter writes back every field the importer read.
TEST_P(MegatronImportTest, ExportsBackToTheSameConfig) {
  const json imported = import_file(GetParam().file)["result"]["config"];
  const Config first = testing::parse_ok(imported);
  const json exported = json::parse(export_megatron_json(imported.dump()));
  ASSERT_TRUE(exported["ok"].get<bool>()) << exported.dump();
  const json again = json::parse(import_megatron_json(exported["result"]["command"].get<std::string>(), "h100-sxm-80gb"));
  ASSERT_TRUE(again["ok"].get<bool>()) << again.dump();
  const Config second = testing::parse_ok(again["result"]["config"]);
  EXPECT_EQ(testing::first_difference(testing::comparable(first), testing::comparable(second)), "");
}

INSTANTIATE_TEST_SUITE_P(CommandLines, MegatronImportTest, ::testing::ValuesIn(kCommandCases),
                         [](const auto& p) {
                           std::string name = p.param.file;
                           name = name.substr(0, name.find('.'));
                           return name;
                         });

// A minimal valid command line that each bad case edits.
const char* const kMinimal =
    "--num-layers 4 --hidden-size 256 --num-attention-heads 8 --seq-length 128 "
    "--max-position-embeddings 128 --position-embedding-type rope --normalization RMSNorm --swiglu "
    "--micro-batch-size 1 --bf16 --tokenizer-type NullTokenizer --vocab-size 999";
// ... plus the flags whose absence is noted (Megatron-LM defaults).
const std::string kBase = std::string(kMinimal) +
                          " --ffn-hidden-size 704 --global-batch-size 8 --attention-dropout 0 --hidden-dropout 0";

struct BadFlagsCase {
  const char* name;
  const char* remove;  ///< flags of kBase to drop (with their values), space-separated
  const char* add;     ///< text appended to kBase
  const char* path;
  const char* message;
};

const BadFlagsCase kBadFlags[] = {
    {"num_layers_missing", "--num-layers", "", "/args/--num-layers", "missing required flag"},
    {"num_layers_typo", "--num-layers", "--num-layer 4", "/args/--num-layers",
     "missing required flag (the command has --num-layer: a typo of --num-layers?)"},
    {"num_layers_far_off", "--num-layers", "--layers 4", "/args/--num-layers", "missing required flag"},
    {"num_layers_text", "--num-layers", "--num-layers four", "/args/--num-layers", "expected integer, got \"four\""},
    {"num_layers_zero", "--num-layers", "--num-layers 0", "/args/--num-layers", "must be at least 1, got 0"},
    {"num_layers_variable", "--num-layers", "--num-layers $NUM_LAYERS", "/args/--num-layers",
     "uses \"$NUM_LAYERS\", which bash computes at run time; replace it with its value"},
    {"num_layers_empty", "--num-layers", "--num-layers=", "/args/--num-layers", "expected integer, got \"\""},
    {"micro_batch_fraction", "--micro-batch-size", "--micro-batch-size 1.5", "/args/--micro-batch-size",
     "expected integer, got \"1.5\""},
    {"swiglu_with_value", "--swiglu", "--swiglu=true", "/args/--swiglu", "takes no value, got \"true\""},
    {"normalization_unknown", "--normalization", "--normalization rms", "/args/--normalization",
     "expected one of \"LayerNorm\", \"RMSNorm\", got \"rms\""},
    {"bf16_and_fp16", "", "--fp16", "/args/--fp16", "cannot be combined with --bf16"},
    {"fp32", "--bf16", "", "/args/--bf16",
     "missing: trainsim models bf16, fp16 and fp8 training, not fp32 (Megatron-LM's default without --bf16 or --fp16)"},
    {"fp8_format_unknown", "", "--fp8-format e5m2", "/args/--fp8-format",
     "expected one of \"e4m3\", \"hybrid\", got \"e5m2\""},
    {"squared_relu_with_swiglu", "", "--squared-relu", "/args/--squared-relu", "cannot be combined with --swiglu"},
    {"no_position_embedding", "--position-embedding-type", "--position-embedding-type none",
     "/args/--position-embedding-type", "\"none\" is not supported (trainsim models rope and learned_absolute)"},
    {"learned_without_table", "--max-position-embeddings", "--position-embedding-type learned_absolute",
     "/args/--max-position-embeddings", "missing required flag (learned position embeddings)"},
    {"head_dim_needed", "--hidden-size", "--hidden-size 250", "/args/--kv-channels",
     "missing required flag (hidden size 250 is not a multiple of 8 attention heads)"},
    {"null_tokenizer_without_vocab", "--vocab-size", "", "/args/--vocab-size",
     "missing required flag (--tokenizer-type NullTokenizer)"},
    {"no_tokenizer", "--tokenizer-type --vocab-size", "--vocab-file gpt2-vocab.json", "/args/--vocab-size",
     "missing required flag (no --tokenizer-type to take it from)"},
    {"unknown_tokenizer", "--tokenizer-type --vocab-size",
     "--tokenizer-type HuggingFaceTokenizer --tokenizer-model Qwen/Qwen3-8B", "/args/--vocab-size",
     "missing required flag (the vocabulary size of tokenizer HuggingFaceTokenizer \"Qwen/Qwen3-8B\" is not "
     "known; give its size before padding)"},
    {"vocab_zero", "--tokenizer-type --vocab-size", "--tokenizer-type HuggingFaceTokenizer --vocab-size 0", "/args/--vocab-size",
     "must be at least 1, got 0"},
    {"experts_layer_frequency_beyond_layers", "", "--num-experts 8 --moe-layer-freq 5", "/args/--moe-layer-freq",
     "must be at most 4, got 5"},
    {"experts_pattern_not_binary", "", "--num-experts 8 --moe-layer-freq ([1]*2+[2]*2)", "/args/--moe-layer-freq",
     "layer 2 is neither 0 nor 1"},
    {"experts_pattern_length", "", "--num-experts 8 --moe-layer-freq ([0]*3+[1]*5)", "/args/--moe-layer-freq",
     "has 8 entries, expected one per layer (4)"},
    {"experts_pattern_syntax", "", "--num-experts 8 --moe-layer-freq [0,1", "/args/--moe-layer-freq",
     "expected a list expression of 0s and 1s such as \"([0]*3+[1]*58)\", got \"[0,1\""},
    {"experts_all_dense", "", "--num-experts 8 --moe-layer-freq [0]*4", "/args/--moe-layer-freq",
     "has no MoE layer (all entries are 0)"},
    {"ep_without_experts", "", "--expert-model-parallel-size 2", "/args/--expert-model-parallel-size",
     "must be 1 without --num-experts, got 2"},
    {"full_recompute_without_method", "", "--recompute-granularity full --recompute-num-layers 1",
     "/args/--recompute-method", "missing required flag (--recompute-granularity full)"},
    {"full_recompute_without_layers", "", "--recompute-granularity full --recompute-method block",
     "/args/--recompute-num-layers", "missing required flag (--recompute-granularity full)"},
    {"selective_with_method", "", "--recompute-granularity selective --recompute-method block",
     "/args/--recompute-method", "not supported with selective granularity (Megatron-LM asserts)"},
    {"recompute_module_unknown", "", "--recompute-granularity selective --recompute-modules attn",
     "/args/--recompute-modules",
     "expected modules among core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts, got \"attn\""},
    {"recompute_module_twice", "", "--recompute-granularity selective --recompute-modules mlp mlp",
     "/args/--recompute-modules", "duplicate module \"mlp\""},
    {"cp_hierarchical", "", "--context-parallel-size 2 --cp-comm-type a2a+p2p", "/args/--cp-comm-type",
     "expected \"p2p\", \"a2a\" or \"allgather\" (a2a+p2p is not modelled), got \"a2a+p2p\""},
    {"cp_per_layer", "", "--context-parallel-size 2 --cp-comm-type p2p a2a", "/args/--cp-comm-type",
     "one type for all layers is supported, got several"},
    {"router_load_balancing_sinkhorn", "", "--num-experts 8 --moe-router-load-balancing-type sinkhorn",
     "/args/--moe-router-load-balancing-type",
     "expected one of aux_loss, seq_aux_loss, global_aux_loss, none (the modelled losses)"},
    {"router_aux_loss_coeff_text", "", "--num-experts 8 --moe-aux-loss-coeff high", "/args/--moe-aux-loss-coeff",
     "expected a number in [0, 1e6], got \"high\""},
    {"pipeline_layout_character", "", "--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout 'Et*2|x|t*2L'",
     "/args/--pipeline-model-parallel-layout",
     "invalid character 'x' (known: E embedding, t decoder layer, m MTP layer, L loss, | stage separator, (...)*n "
     "and x*n repeats)"},
    {"pipeline_layout_stage_count", "", "--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout 'Et|t|t*2L'",
     "/args/--pipeline-model-parallel-layout",
     "has 3 stages, not a multiple of --pipeline-model-parallel-size (2)"},
    {"pipeline_layout_with_vpp", "", "--pipeline-model-parallel-size 2 --pipeline-model-parallel-layout 'Et*2|t*2L' "
     "--num-virtual-stages-per-pipeline-rank 2",
     "/args/--num-virtual-stages-per-pipeline-rank", "cannot be combined with --pipeline-model-parallel-layout"},
    {"virtual_stage_not_dividing", "",
     "--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 3",
     "/args/--num-layers-per-virtual-pipeline-stage", "must divide the layers per pipeline stage (4/2), got 3"},
    {"two_virtual_pipeline_flags", "",
     "--pipeline-model-parallel-size 2 --num-layers-per-virtual-pipeline-stage 1 "
     "--num-virtual-stages-per-pipeline-rank 2",
     "/args/--num-virtual-stages-per-pipeline-rank", "cannot be combined with --num-layers-per-virtual-pipeline-stage"},
    {"virtual_stages_with_uneven_stages", "",
     "--pipeline-model-parallel-size 2 --decoder-first-pipeline-num-layers 1 "
     "--num-layers-per-virtual-pipeline-stage 1",
     "/args/--num-layers-per-virtual-pipeline-stage",
     "cannot be combined with uneven first/last stages; use --num-virtual-stages-per-pipeline-rank"},
    {"cp_with_unfused_attention", "", "--context-parallel-size 2 --attention-backend unfused",
     "/args/--attention-backend",
     "must be true with cp > 1 (Transformer Engine's unfused attention does not support context parallelism)"},
    {"deepep_without_dispatcher", "", "--num-experts 8 --moe-enable-deepep", "/args/--moe-enable-deepep",
     "needs --moe-token-dispatcher-type flex (Megatron-LM refuses DeepEP with its default dispatcher, allgather)"},
    {"deepep_with_alltoall", "", "--num-experts 8 --moe-token-dispatcher-type alltoall --moe-enable-deepep",
     "/args/--moe-enable-deepep",
     "needs --moe-token-dispatcher-type flex (Megatron-LM refuses DeepEP with any other dispatcher)"},
    {"flex_sms_conflicting", "",
     "--num-experts 8 --moe-token-dispatcher-type flex --moe-deepep-num-sms 20 --moe-hybridep-num-sms 16",
     "/args/--moe-hybridep-num-sms",
     "is 16 but --moe-deepep-num-sms is 20: Megatron-LM refuses two different SM counts; give one, or "
     "--moe-flex-dispatcher-num-sms"},
    {"flex_sms_zero", "", "--num-experts 8 --moe-token-dispatcher-type flex --moe-flex-dispatcher-num-sms 0",
     "/args/--moe-flex-dispatcher-num-sms", "must be at least 1, got 0"},
    {"flex_sms_above_the_gpus", "", "--num-experts 8 --moe-token-dispatcher-type flex --moe-deepep-num-sms 200",
     "/args/--moe-deepep-num-sms", "must be at most the GPU's 132 SMs (system.efficiency.num_sms), got 200"},
    {"sgd", "", "--optimizer sgd", "/args/--optimizer", "\"sgd\" is not supported (trainsim models Adam)"},
    {"capacity_factor_text", "", "--num-experts 8 --moe-expert-capacity-factor big",
     "/args/--moe-expert-capacity-factor", "expected a finite number, got \"big\""},
    {"dropout_range", "", "--attention-dropout 2", "/args/--attention-dropout", "must be between 0 and 1, got 2"},
    {"elastic_nodes", "", "--nnodes 1:4 --nproc-per-node 8", "/args/--nnodes", "expected integer, got \"1:4\""},
    {"tp_missing_value", "", "--tensor-model-parallel-size --sequence-parallel", "/args/--tensor-model-parallel-size",
     "expected a value"},
    {"window_not_a_pair", "", "--window-size 4096", "/args/--window-size",
     "expected \"LEFT,RIGHT\" such as \"4096,0\" (-1 = unbounded), got \"4096\""},
    {"window_two_sided", "", "--window-size 128,128", "/args/--window-size",
     "only causal windows \"W,0\" are modelled, got \"128,128\""},
    {"window_skip_list", "", "--window-size 128,0 --window-attn-skip-freq '([1]*3+[0]*1)*8'", "/args/--window-attn-skip-freq",
     "list patterns are not modelled; expected N (every N-th layer attends fully), got \"([1]*3+[0]*1)*8\""},
};

std::string edited_base(const BadFlagsCase& c) {
  std::istringstream words(kBase);
  const std::string removed = std::string(" ") + c.remove + " ";
  std::string text, word;
  bool skip_value = false;
  while (words >> word) {
    if (skip_value && word.rfind("--", 0) != 0) {
      skip_value = false;
      continue;
    }
    skip_value = false;
    if (removed.find(" " + word + " ") != std::string::npos) {
      skip_value = true;
      continue;
    }
    text += word + " ";
  }
  return text + c.add;
}

class MegatronBadFlagsTest : public ::testing::TestWithParam<BadFlagsCase> {};

TEST_P(MegatronBadFlagsTest, ReportsFlagAndMessage) {
  const BadFlagsCase& c = GetParam();
  const json envelope = json::parse(import_megatron_json(edited_base(c), ""));
  SCOPED_TRACE(edited_base(c));
  ASSERT_FALSE(envelope["ok"].get<bool>()) << envelope.dump();
  ASSERT_EQ(envelope["errors"].size(), 1u) << envelope.dump();
  EXPECT_EQ(envelope["errors"][0]["path"], c.path);
  EXPECT_EQ(envelope["errors"][0]["message"], c.message);
}

INSTANTIATE_TEST_SUITE_P(BadFlags, MegatronBadFlagsTest, ::testing::ValuesIn(kBadFlags),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(MegatronImportErrorsTest, DeeplyNestedLayerPatternsAreRejectedNotRecursedInto) {
  const std::string pattern = std::string(100000, '(') + "[1]*4" + std::string(100000, ')');
  const json envelope = json::parse(import_megatron_json(kBase + " --num-experts 8 --moe-layer-freq " + pattern, ""));
  ASSERT_EQ(envelope["errors"].size(), 1u);
  EXPECT_EQ(envelope["errors"][0]["path"], "/args/--moe-layer-freq");
  EXPECT_EQ(envelope["errors"][0]["message"].get<std::string>().rfind("expected a list expression of 0s and 1s", 0), 0u);
  const json shallow = json::parse(import_megatron_json(kBase + " --num-experts 8 --moe-layer-freq ((([0]+[1]*3)))", ""));
  EXPECT_EQ(shallow["result"]["config"]["model"]["moe"]["num_dense_layers"], 1) << shallow.dump();
}

TEST(MegatronImportErrorsTest, TextWithoutFlagsAndUnknownSystem) {
  json envelope = json::parse(import_megatron_json("python pretrain_gpt.py\n", ""));
  EXPECT_EQ(envelope["errors"][0]["path"], "/args");
  EXPECT_EQ(envelope["errors"][0]["message"], "no --flags found (expected a pretrain_gpt.py command line or script)");
  envelope = json::parse(import_megatron_json("--num-layers \"4", ""));
  EXPECT_EQ(envelope["errors"][0]["message"], "unterminated double quote (line 1)");
  envelope = json::parse(import_megatron_json(kMinimal, "h100"));
  EXPECT_EQ(envelope["errors"][0]["path"], "/system");
  EXPECT_EQ(envelope["errors"][0]["message"], "unknown system preset \"h100\"");
}

json notes_of(const std::string& extra) {
  const json envelope = json::parse(import_megatron_json(kBase + " " + extra, "h200-sxm-141gb"));
  EXPECT_TRUE(envelope["ok"].get<bool>()) << envelope.dump();
  return envelope["result"]["notes"];
}

TEST(MegatronImportNotesTest, UnknownFlagsAreListedAndHarmlessOnesAreNot) {
  const json notes = notes_of("--frobnicate 3 --lr 1e-4 --save /ckpt --log-interval 1 --wandb-project x "
                              "--data-path 0.5 a 0.5 b --seed 1234 --use-mcore-models --sequence-parallel true");
  EXPECT_EQ(notes, json::array({
                       "NullTokenizer: vocabulary of --vocab-size + 1 (the end-of-document token) = 1000",
                       "\"true\" after --sequence-parallel is ignored (the flag takes no value)",
                       "--sequence-parallel is dropped: Megatron-LM disables it when tp is 1",
                       "the GPU count is not given (torchrun --nnodes and --nproc-per-node): set system.num_gpus",
                       "--frobnicate is not a Megatron-LM flag trainsim knows: ignored"}));
}

// An unknown flag within a few edits of a known one is named as its likely typo
// (a swap, '_' for '-', a dropped letter); one far from every flag is not.
TEST(MegatronImportNotesTest, LikelyTyposNameTheFlagTheyMeant) {
  const json notes = notes_of("--use-flash-atn --overlap_grad_reduce --seqeunce-parallel --frobnicate 3");
  const std::string unknown = " is not a Megatron-LM flag trainsim knows: ignored";
  EXPECT_TRUE(has_note(notes, "--use-flash-atn" + unknown + " (did you mean --use-flash-attn?)")) << notes.dump();
  EXPECT_TRUE(has_note(notes, "--overlap_grad_reduce" + unknown + " (did you mean --overlap-grad-reduce?)"))
      << notes.dump();
  EXPECT_TRUE(has_note(notes, "--seqeunce-parallel" + unknown + " (did you mean --sequence-parallel?)"))
      << notes.dump();
  EXPECT_EQ(notes.back(), "--frobnicate" + unknown);
}

TEST(MegatronImportNotesTest, RepeatedFlagsUseTheLastValueWithANote) {
  const json envelope = json::parse(import_megatron_json(kBase + " --num-layers 8", ""));
  EXPECT_EQ(envelope["result"]["config"]["model"]["num_layers"], 8);
  EXPECT_TRUE(has_note(envelope["result"]["notes"],
                       "--num-layers is given 2 times; the last value (\"8\") wins, as in argparse"));
}

TEST(MegatronImportNotesTest, NotModelledAndIneffectiveFlagsAreNoted) {
  const json notes = notes_of("--enable-cuda-graph --moe-router-topk 4 --num-query-groups 2");
  // CUDA graphs are modelled (no host launch cost for the captured layers): no note.
  EXPECT_FALSE(has_note(notes, "--enable-cuda-graph is ignored"));
  EXPECT_TRUE(has_note(notes, "--moe-router-topk is ignored: it has no effect together with the other flags"));
  EXPECT_TRUE(has_note(notes, "--num-query-groups is ignored: it has no effect together with the other flags"));
}

// --no-overlap-p2p-communication turns Megatron-LM's default p2p overlap of the interleaved
// schedule off; both settings are modelled, so neither gives a note.
TEST(MegatronImportNotesTest, PipelineP2pOverlapImportsWithoutNotes) {
  for (const bool off : {false, true}) {
    const json envelope = json::parse(import_megatron_json(
        kBase + (off ? " --no-overlap-p2p-communication" : ""), "h200-sxm-141gb"));
    ASSERT_TRUE(envelope["ok"].get<bool>()) << envelope.dump();
    EXPECT_EQ(envelope["result"]["config"]["training"]["overlap_p2p_comm"], !off);
    for (const json& note : envelope["result"]["notes"]) {
      EXPECT_EQ(note.get<std::string>().find("overlap-p2p"), std::string::npos) << note;
    }
  }
}

// --defer-embedding-wgrad-compute and its limit are read (no "not modelled" note) and
// written back; the limit alone does nothing in Megatron-LM, and the import says so.
TEST(MegatronImportNotesTest, DeferredOutputWgradImportsAndExports) {
  const json envelope = json::parse(import_megatron_json(
      kBase + " --pipeline-model-parallel-size 2 --defer-embedding-wgrad-compute --wgrad-deferral-limit 22", "h200-sxm-141gb"));
  ASSERT_TRUE(envelope["ok"].get<bool>()) << envelope.dump();
  const json& t = envelope["result"]["config"]["training"];
  EXPECT_EQ(t["defer_embedding_wgrad_compute"], true);
  EXPECT_EQ(t["wgrad_deferral_limit"], 22);
  for (const json& note : envelope["result"]["notes"]) {
    EXPECT_EQ(note.get<std::string>().find("deferr"), std::string::npos) << note;
  }
  json config = envelope["result"]["config"];
  config["system"]["num_gpus"] = 2;
  const json exported = json::parse(export_megatron_json(config.dump()));
  ASSERT_TRUE(exported["ok"].get<bool>()) << exported.dump();
  const std::string args = exported["result"]["args"].dump();
  EXPECT_NE(args.find("--defer-embedding-wgrad-compute"), std::string::npos) << args;
  EXPECT_NE(args.find("--wgrad-deferral-limit"), std::string::npos) << args;

  const json alone = json::parse(import_megatron_json(kBase + " --wgrad-deferral-limit 22", "h200-sxm-141gb"));
  ASSERT_TRUE(alone["ok"].get<bool>()) << alone.dump();
  EXPECT_EQ(alone["result"]["config"]["training"]["defer_embedding_wgrad_compute"], false);
  EXPECT_FALSE(alone["result"]["config"]["training"].contains("wgrad_deferral_limit"));
  EXPECT_NE(alone["result"]["notes"].dump().find("--wgrad-deferral-limit has no effect without "
                                                 "--defer-embedding-wgrad-compute"),
            std::string::npos)
      << alone["result"]["notes"].dump();
}

// Megatron-FSDP sharding strategies and torch FSDP2 map to ZeRO stages that the
// estimate prices (per-micro-batch reduce-scatters, per-unit gathers): no note
// says they are not modelled or ignored, and the imported plan estimates.
TEST(MegatronImportNotesTest, FsdpShardingImportsAsModelledZeroStages) {
  const std::pair<const char*, int> cases[] = {
      {"--use-megatron-fsdp --data-parallel-sharding-strategy optim", 1},
      {"--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads", 2},
      {"--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params", 3},
      {"--use-torch-fsdp2", 3},
      {"--use-torch-fsdp2 --torch-fsdp2-no-reshard-after-forward", 2}};
  for (const auto& [flags, zero] : cases) {
    const json envelope = json::parse(import_megatron_json(
        "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py " + kBase + " " + flags, "h200-sxm-141gb"));
    ASSERT_TRUE(envelope["ok"].get<bool>()) << flags << ": " << envelope.dump();
    const json& result = envelope["result"];
    EXPECT_EQ(result["config"]["training"]["zero_stage"], zero) << flags;
    for (const json& note : result["notes"]) {
      const std::string text = note.get<std::string>();
      const bool about_sharding = text.find("fsdp") != std::string::npos ||
                                  text.find("sharding") != std::string::npos;
      EXPECT_FALSE(about_sharding && (text.find("not modelled") != std::string::npos ||
                                      text.find("ignored") != std::string::npos))
          << flags << ": " << text;
    }
    const json estimate = json::parse(estimate_json(result["config"].dump()));
    ASSERT_TRUE(estimate["ok"].get<bool>()) << flags << ": " << estimate.dump();
    EXPECT_GT(estimate["result"]["time"]["stages"][0]["dp_comm_s"].get<double>(), 0.0) << flags;
  }
}

// Megatron-FSDP's buffer settings (Megatron-Bridge's Llama-3 B200 FSDP recipe sets both)
// import into the keys the memory model prices, with no note, and export back; without
// Megatron-FSDP sharding gradients they do nothing and the import says so.
TEST(MegatronImportNotesTest, FsdpBufferSettingsImportAndExport) {
  const std::string fsdp = "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py " + kBase +
                           " --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params";
  const json envelope = json::parse(import_megatron_json(
      fsdp + " --fsdp-double-buffer --suggested-communication-unit-size 800000000", "h200-sxm-141gb"));
  ASSERT_TRUE(envelope["ok"].get<bool>()) << envelope.dump();
  const json& t = envelope["result"]["config"]["training"];
  EXPECT_EQ(t["fsdp_double_buffer"], true);
  EXPECT_EQ(t["fsdp_communication_unit_elements"], 800000000);
  for (const json& note : envelope["result"]["notes"]) {
    const std::string text = note.get<std::string>();
    EXPECT_EQ(text.find("double-buffer"), std::string::npos) << text;
    EXPECT_EQ(text.find("communication-unit"), std::string::npos) << text;
  }
  const json exported = json::parse(export_megatron_json(envelope["result"]["config"].dump()));
  ASSERT_TRUE(exported["ok"].get<bool>()) << exported.dump();
  const std::string args = exported["result"]["args"].dump();
  EXPECT_NE(args.find("\"--fsdp-double-buffer\""), std::string::npos) << args;
  EXPECT_NE(args.find("\"800000000\""), std::string::npos) << args;

  const json plain = json::parse(import_megatron_json(
      "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py " + kBase +
          " --use-distributed-optimizer --fsdp-double-buffer --suggested-communication-unit-size 800000000",
      "h200-sxm-141gb"));
  ASSERT_TRUE(plain["ok"].get<bool>()) << plain.dump();
  EXPECT_FALSE(plain["result"]["config"]["training"].contains("fsdp_communication_unit_elements"));
  const std::string notes = plain["result"]["notes"].dump();
  EXPECT_NE(notes.find("--fsdp-double-buffer has no effect without Megatron-FSDP"), std::string::npos) << notes;
  EXPECT_NE(notes.find("--suggested-communication-unit-size has no effect without Megatron-FSDP"), std::string::npos)
      << notes;
}

// Expert-parallel overlap (--overlap-moe-expert-parallel-comm with --delay-wgrad-compute, as
// Megatron-Bridge's moe_a2a_overlap sets them, and --moe-shared-expert-overlap) imports into
// the keys the time model prices, with no note about them, estimates, and exports back.
TEST(MegatronImportNotesTest, ExpertParallelOverlapImportsWithoutNotes) {
  const std::string moe = kBase + " --num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 352"
                                  " --moe-token-dispatcher-type alltoall --moe-grouped-gemm"
                                  " --expert-model-parallel-size 8 --global-batch-size 32";
  const std::pair<const char*, const char*> cases[] = {
      {"--overlap-moe-expert-parallel-comm --delay-wgrad-compute",
       R"({"overlap_moe_expert_parallel_comm": true, "delay_wgrad_compute": true, "moe_shared_expert_overlap": false})"},
      {"--overlap-moe-expert-parallel-comm",
       R"({"overlap_moe_expert_parallel_comm": true, "delay_wgrad_compute": false})"},
      {"--moe-shared-expert-intermediate-size 256 --moe-shared-expert-overlap",
       R"({"overlap_moe_expert_parallel_comm": false, "moe_shared_expert_overlap": true})"}};
  for (const auto& [flags, expected] : cases) {
    const json envelope = json::parse(import_megatron_json(
        "torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py " + moe + " " + flags, "h100-sxm-80gb"));
    ASSERT_TRUE(envelope["ok"].get<bool>()) << flags << ": " << envelope.dump();
    const json& result = envelope["result"];
    const json wanted = json::parse(expected);
    for (auto it = wanted.begin(); it != wanted.end(); ++it) {
      EXPECT_EQ(result["config"]["training"][it.key()], it.value()) << flags << " " << it.key();
    }
    for (const json& note : result["notes"]) {
      const std::string text = note.get<std::string>();
      for (const char* flag : {"overlap-moe-expert-parallel-comm", "delay-wgrad-compute", "shared-expert-overlap"}) {
        EXPECT_EQ(text.find(flag), std::string::npos) << flags << ": " << text;
      }
    }
    const json estimate = json::parse(estimate_json(result["config"].dump()));
    ASSERT_TRUE(estimate["ok"].get<bool>()) << flags << ": " << estimate.dump();
    EXPECT_GT(estimate["result"]["time"]["stages"][0]["ep_comm_hidden_s"].get<double>(), 0.0) << flags;
    const json exported = json::parse(export_megatron_json(result["config"].dump()));
    ASSERT_TRUE(exported["ok"].get<bool>()) << exported.dump();
    const json again = json::parse(
        import_megatron_json(exported["result"]["command"].get<std::string>(), "h100-sxm-80gb"));
    ASSERT_TRUE(again["ok"].get<bool>()) << again.dump();
    for (const char* key : {"overlap_moe_expert_parallel_comm", "delay_wgrad_compute", "moe_shared_expert_overlap"}) {
      EXPECT_EQ(again["result"]["config"]["training"][key], result["config"]["training"][key]) << flags << " " << key;
    }
  }
}

// The flex dispatcher's SM count: --moe-flex-dispatcher-num-sms over the deprecated
// --moe-deepep-num-sms / --moe-hybridep-num-sms (transformer_config.py __post_init__), read only
// with the flex dispatcher, and exported back as core_v0.14.0's --moe-deepep-num-sms beside
// --moe-enable-deepep (its flex dispatcher asserts it) when it is not the default 20.
TEST(MegatronImportNotesTest, FlexDispatcherSmCountImportsAndExportsBack) {
  const std::string moe = kBase + " --num-experts 8 --moe-router-topk 2 --moe-ffn-hidden-size 352 --moe-grouped-gemm"
                                  " --expert-model-parallel-size 8 --global-batch-size 32";
  struct Case {
    const char* flags;
    int64_t sms;         ///< the key's value; 0 = the key is not set
    const char* note;    ///< a note the import gives, or ""
  };
  const Case cases[] = {
      {"--moe-token-dispatcher-type flex --moe-enable-deepep --moe-deepep-num-sms 24", 24, ""},
      {"--moe-token-dispatcher-type flex --moe-hybridep-num-sms 16", 16, ""},
      {"--moe-token-dispatcher-type flex --moe-deepep-num-sms 24 --moe-hybridep-num-sms 24", 24, ""},
      {"--moe-token-dispatcher-type flex --moe-flex-dispatcher-num-sms 32 --moe-deepep-num-sms 24", 32,
       "--moe-deepep-num-sms is ignored: --moe-flex-dispatcher-num-sms takes precedence"},
      {"--moe-token-dispatcher-type flex --moe-enable-deepep", 0, ""},
      {"--moe-token-dispatcher-type alltoall --moe-deepep-num-sms 24", 0,
       "--moe-deepep-num-sms is ignored: it has no effect together with the other flags"},
      {"--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep", 0,
       "--moe-flex-dispatcher-backend is ignored: HybridEP and NCCL EP are priced like DeepEP (the flex "
       "dispatcher); their default SM counts differ from DeepEP's 20: give --moe-flex-dispatcher-num-sms"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.flags);
    const json envelope = json::parse(import_megatron_json(
        "torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py " + moe + " " + c.flags, "h100-sxm-80gb"));
    ASSERT_TRUE(envelope["ok"].get<bool>()) << envelope.dump();
    const json& result = envelope["result"];
    const json& training = result["config"]["training"];
    if (c.sms > 0) {
      EXPECT_EQ(training["moe_flex_dispatcher_num_sms"], c.sms);
    } else {
      EXPECT_FALSE(training.contains("moe_flex_dispatcher_num_sms")) << training.dump();
    }
    if (*c.note != '\0') {
      EXPECT_TRUE(has_note(result["notes"], c.note)) << result["notes"].dump();
    }
    for (const json& note : result["notes"]) {
      const std::string text = note.get<std::string>();
      EXPECT_EQ(text.find("--moe-enable-deepep"), std::string::npos) << text;
      if (*c.note == '\0') {
        EXPECT_EQ(text.find("num-sms"), std::string::npos) << text;
      }
    }
    const json exported = json::parse(export_megatron_json(result["config"].dump()));
    ASSERT_TRUE(exported["ok"].get<bool>()) << exported.dump();
    const std::string command = exported["result"]["command"].get<std::string>();
    const bool flex = training["moe_token_dispatcher"] == "flex";
    EXPECT_EQ(command.find("--moe-enable-deepep") != std::string::npos, flex) << command;
    EXPECT_EQ(command.find("--moe-deepep-num-sms " + std::to_string(c.sms)) != std::string::npos, c.sms > 0)
        << command;
    EXPECT_EQ(command.find("num-sms") != std::string::npos, c.sms > 0) << command;
    const json again = json::parse(import_megatron_json(command, "h100-sxm-80gb"));
    ASSERT_TRUE(again["ok"].get<bool>()) << again.dump();
    EXPECT_EQ(again["result"]["config"]["training"].value("moe_flex_dispatcher_num_sms", json(20)),
              training.value("moe_flex_dispatcher_num_sms", json(20)));
  }
}

TEST(MegatronImportNotesTest, MegatronDefaultsAreAppliedWithNotes) {
  const json envelope = json::parse(import_megatron_json(
      std::string(kMinimal) + " --num-experts 4 --group-query-attention --multi-latent-attention", ""));
  ASSERT_TRUE(envelope["ok"].get<bool>()) << envelope.dump();
  const json& config = envelope["result"]["config"];
  EXPECT_EQ(config["model"]["num_kv_heads"], 1);
  EXPECT_EQ(config["model"]["moe"]["top_k"], 2);
  EXPECT_EQ(config["model"]["ffn_hidden_size"], 640);  // int(4 * 256 * 2 / 3 / 64) * 64
  EXPECT_EQ(config["model"]["mla"], json::parse(R"({"q_lora_rank":0,"kv_lora_rank":32,"qk_nope_head_dim":128,
                                                    "qk_rope_head_dim":64,"v_head_dim":128})"));
  EXPECT_EQ(config["training"]["num_micro_batches"], 1);
  const json& notes = envelope["result"]["notes"];
  for (const char* note :
       {"--num-query-groups is not given: with --group-query-attention Megatron-LM's default is 1",
        "--moe-router-topk is not given: Megatron-LM's default is 2", "--kv-lora-rank is not given: Megatron-LM's default is 32",
        "--ffn-hidden-size is not given", "--global-batch-size is not given: Megatron-LM's default is micro_batch_size*dp",
        "--attention-dropout is not given: Megatron-LM's default 0.1 (its mask kernels are priced)",
        "--moe-token-dispatcher-type is not given (Megatron-LM's default allgather): trainsim prices token dispatch as an all-to-all",
        "--moe-grouped-gemm is not given: trainsim prices the experts as one grouped GEMM"}) {
    EXPECT_TRUE(has_note(notes, note)) << note << " in " << notes.dump();
  }
}

TEST(MegatronImportNotesTest, SystemPresetAndGpuCount) {
  const json envelope = json::parse(import_megatron_json(
      "torchrun --nnodes 4 --nproc-per-node 8 pretrain_gpt.py " + kBase + " --global-batch-size 64",
      "h200-sxm-141gb"));
  EXPECT_EQ(envelope["result"]["config"]["system"], json::parse(R"({"preset":"h200-sxm-141gb","num_gpus":32})"));
  const json run_time = json::parse(import_megatron_json(
      "torchrun --nnodes $SLURM_NNODES --nproc-per-node 8 pretrain_gpt.py " + kBase, ""));
  EXPECT_FALSE(run_time["result"]["config"]["system"].contains("num_gpus"));
  EXPECT_TRUE(has_note(run_time["result"]["notes"], "--nnodes $SLURM_NNODES is only known at run time: set system.num_gpus"));
  const json fallback = json::parse(import_megatron_json(kMinimal, ""));
  EXPECT_EQ(fallback["result"]["config"]["system"]["preset"], "h100-sxm-80gb");
  EXPECT_TRUE(has_note(fallback["result"]["notes"], "using the h100-sxm-80gb preset"));
}

}  // namespace
}  // namespace trainsim
