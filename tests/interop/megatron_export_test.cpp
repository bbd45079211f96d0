// Megatron-LM exporter: the flags of a known config, shell quoting, the
// torchrun node layout, and notes for what Megatron-LM has no flag for.
#include <gtest/gtest.h>

#include "interop/interop_test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;
using testing::has_note;

json export_of(const json& config) {
  const json envelope = json::parse(export_megatron_json(config.dump()));
  EXPECT_TRUE(envelope["ok"].get<bool>()) << envelope.dump();
  return envelope["result"];
}

TEST(MegatronExportTest, WritesTheFlagsOfTheBaseConfig) {
  const json result = export_of(testing::base_config());
  EXPECT_EQ(result["launcher_args"], json::parse(R"(["--nnodes","2","--nproc-per-node","8"])"));
  EXPECT_EQ(result["args"], json::parse(R"([
    "--num-layers","32","--hidden-size","4096","--ffn-hidden-size","14336","--num-attention-heads","32",
    "--group-query-attention","--num-query-groups","8","--position-embedding-type","rope",
    "--max-position-embeddings","4096","--normalization","RMSNorm","--swiglu",
    "--untie-embeddings-and-output-weights","--disable-bias-linear","--tokenizer-type","NullTokenizer",
    "--vocab-size","128255","--attention-dropout","0.0","--hidden-dropout","0.0","--seq-length","4096",
    "--micro-batch-size","1","--global-batch-size","64","--tensor-model-parallel-size","2",
    "--pipeline-model-parallel-size","2","--sequence-parallel","--use-distributed-optimizer","--bf16",
    "--attention-backend","auto"])"));
  const std::string command = result["command"];
  EXPECT_EQ(command.rfind("torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py \\\n    --num-layers 32 \\\n", 0), 0u)
      << command;
  EXPECT_TRUE(has_note(result["notes"], "--tokenizer-type NullTokenizer --vocab-size 128255 stands for a tokenizer of 128256 entries"));
  EXPECT_TRUE(has_note(result["notes"], "the system (H100 SXM 80GB) is not part of Megatron-LM's flags"))
      << result["notes"];
}

TEST(MegatronExportTest, QuotesShellSpecialValues) {
  json config = testing::base_config();
  config["model"] = "deepseek-v2-lite";
  config["training"]["pp"] = 1;
  config["training"]["ep"] = 2;
  const std::string command = export_of(config)["command"];
  EXPECT_NE(command.find("--moe-layer-freq '([0]*1+[1]*26)'"), std::string::npos) << command;
  EXPECT_NE(command.find("--multi-latent-attention"), std::string::npos);
  EXPECT_EQ(command.find("--q-lora-rank"), std::string::npos);  // no query compression in V2-Lite
}

TEST(MegatronExportTest, GpuCountsThatDoNotFillNodes) {
  json config = testing::base_config();
  config["training"]["pp"] = 1;
  config["system"]["num_gpus"] = 4;
  EXPECT_EQ(export_of(config)["launcher_args"], json::parse(R"(["--nnodes","1","--nproc-per-node","4"])"));
  config["system"]["num_gpus"] = 12;
  config["training"]["global_batch_size"] = 60;
  const json result = export_of(config);
  EXPECT_EQ(result["launcher_args"], json::parse(R"(["--nnodes","3","--nproc-per-node","4"])"));
  EXPECT_TRUE(has_note(result["notes"], "12 GPUs do not fill nodes of 8: launched as 3 x 4"));
}

TEST(MegatronExportTest, NotesWhatHasNoMegatronFlag) {
  json config = testing::base_config();
  config["training"]["tp"] = 1;
  config["system"]["num_gpus"] = 8;
  config["training"]["fused_norm"] = false;
  config["training"]["te_version"] = "2.3";
  config["training"]["train_tokens"] = 1e12;
  config["model"] = {{"preset", "llama3-8b"}, {"max_position_embeddings", 8192}};
  config["training"]["recompute"] = {{"granularity", "selective"},
                                     {"modules", {"core_attn", "attn_proj"}},
                                     {"num_layers", 2},
                                     {"keep_tail_outputs", true}};
  const json result = export_of(config);
  for (const char* note : {"sequence_parallel is dropped: Megatron-LM disables it when tp is 1",
                           "fused_norm false has no Megatron-LM flag",
                           "te_version 2.3 is the installed Transformer Engine, not a flag",
                           "recompute.modules \"attn_proj\" is SimuMax's and has no Megatron-LM flag",
                           "recompute.num_layers 2 (selective recompute in the first layers of each chunk) has no Megatron-LM flag",
                           "recompute.keep_tail_outputs has no Megatron-LM flag",
                           "model.name \"Llama 3 8B\" is not a Megatron-LM flag",
                           "train_tokens is not a Megatron-LM flag (set --train-samples or --train-iters)",
                           "model.max_position_embeddings 8192 is read back only with learned position "
                           "embeddings (rope has no position table)"}) {
    EXPECT_TRUE(has_note(result["notes"], note)) << note << " in " << result["notes"];
  }
  const std::string command = result["command"];
  EXPECT_NE(command.find("--recompute-modules core_attn \\"), std::string::npos) << command;
}

TEST(MegatronExportTest, WritesAPerLayerMoePattern) {
  json config = testing::base_config();
  config["model"] = json::parse(R"({"preset": "mixtral-8x7b", "num_layers": 8,
                                    "moe": {"moe_layer_freq": [0, 1, 1, 0, 1, 1, 1, 1]}})");
  const json result = export_of(config);
  const std::string command = result["command"];
  EXPECT_NE(command.find("--moe-layer-freq '([0]*1+[1]*2+[0]*1+[1]*4)'"), std::string::npos) << command;
  config["model"]["moe"]["moe_layer_freq"] = 2;
  EXPECT_NE(export_of(config)["command"].get<std::string>().find("--moe-layer-freq '([1,0]*4)'"), std::string::npos);
  // The import reads any 0/1 pattern back, so the export needs no note about it.
  for (const json& note : result["notes"]) {
    EXPECT_EQ(note.get<std::string>().find("moe_layer_freq"), std::string::npos) << note;
  }
}

TEST(MegatronExportTest, BadConfigsGiveTheConfigErrors) {
  const json envelope = json::parse(export_megatron_json(R"({"model":"llama3-8b"})"));
  EXPECT_FALSE(envelope["ok"].get<bool>());
  EXPECT_EQ(envelope["errors"][0]["path"], "/training");
  EXPECT_EQ(envelope["errors"][0]["message"], "missing required key");
  const json invalid = json::parse(export_megatron_json("not json"));
  EXPECT_EQ(invalid["errors"][0]["path"], "");
}

}  // namespace
}  // namespace trainsim
