// SimuMax importer: wrong-typed optional fields are errors with paths (they
// were dropped silently), an empty system document is an error (it was taken
// as "no system file"), and figures a system file does not measure
// (efficient_factor 0, as in SimuMax's B200 file) are left out with a note
// instead of imported as 0, which estimate rejects.
#include <gtest/gtest.h>

#include "interop/interop_test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;
using testing::has_note;

const json kModel = json::parse(R"({"hidden_size": 2048, "head_num": 16, "kv_head_num": 16,
    "intermediate_size": 8192, "layer_num": 4, "vocab_size": 32000, "use_swiglu": true})");
const json kStrategy = json::parse(
    R"({"seq_len": 4096, "micro_batch_size": 1, "micro_batch_num": 4, "world_size": 8, "tp_size": 2})");

// Shaped like SimuMax's configs/system/b200_bf16_ceperm.json: no fp8 measurement.
json b200_like_system() {
  return json::parse(R"({
    "sys_name": "b200-like", "num_per_node": 8,
    "accelerator": {"backend": "cuda", "mem_gbs": 180, "mode": "roofline",
      "op": {"default": {"tflops": 2250.0, "efficient_factor": 0.39},
             "matmul": {"tflops": 2250.0, "efficient_factor": 0.49, "accurate_efficient_factor": {}},
             "fp8_matmul": {"tflops": 2250.0, "efficient_factor": 0, "accurate_efficient_factor": {}},
             "group_matmul": {"tflops": 2250.0, "efficient_factor": 0.30},
             "fp8_group_matmul": {"tflops": 2250.0, "efficient_factor": 0},
             "sdp_fwd": {"tflops": 2250.0, "efficient_factor": 0.71},
             "sdp_bwd": {"tflops": 2250.0, "efficient_factor": 0.69}},
      "bandwidth": {"default": {"efficient_factor": 0.666, "gbps": 8000.0, "latency_us": 30}}},
    "networks": {"intra_with_pcie": false,
      "high_intra_node": {"bandwidth": {"efficient_factor": 1.0, "gbps": 900.0, "latency_us": 35}},
      "inter_node": {"bandwidth": {"efficient_factor": 1.0, "gbps": 400.0, "latency_us": 10}}}})");
}

json import(const json& model, const json& strategy, const std::string& system = "") {
  return json::parse(import_simumax_json(model.dump(), strategy.dump(), system));
}

json only_error(const json& envelope) {
  EXPECT_FALSE(envelope.value("ok", true)) << envelope.dump().substr(0, 400);
  EXPECT_EQ(envelope.value("errors", json::array()).size(), 1u) << envelope.dump().substr(0, 400);
  return envelope.value("errors", json::array()).empty() ? json::object() : envelope["errors"][0];
}

TEST(SimumaxImportTest, WrongTypedOptionalFieldsAreErrors) {
  json mla = kModel;
  mla.update({{"attention_type", "mla"}, {"q_lora_rank", "1536"}, {"kv_lora_rank", 512},
              {"qk_head_dim", 128}, {"qk_pos_emb_head_dim", 64}, {"v_head_dim", 128}});
  json error = only_error(import(mla, kStrategy));
  EXPECT_EQ(error["path"], "/simumax_model/q_lora_rank");
  EXPECT_EQ(error["message"], "expected integer, got string \"1536\"");
  mla["q_lora_rank"] = nullptr;  // Python None: no q compression
  EXPECT_TRUE(import(mla, kStrategy)["ok"].get<bool>());

  json moe = kModel;
  moe.update({{"expert_num", 8}, {"topk", 2}, {"moe_ffn_hidden_size", 1024},
              {"moe_shared_expert_intermediate_size", 1024.5}});
  error = only_error(import(moe, kStrategy));
  EXPECT_EQ(error["path"], "/simumax_model/moe_shared_expert_intermediate_size");
  EXPECT_EQ(error["message"], "expected integer, got number 1024.5");

  json strategy = kStrategy;
  strategy["num_layers_in_first_pipeline_stage"] = "2";
  error = only_error(import(kModel, strategy));
  EXPECT_EQ(error["path"], "/simumax_strategy/num_layers_in_first_pipeline_stage");

  json system = b200_like_system();
  system["accelerator"]["mem_gbs"] = "180";
  error = only_error(import(kModel, kStrategy, system.dump()));
  EXPECT_EQ(error["path"], "/simumax_system/accelerator/mem_gbs");
  EXPECT_EQ(error["message"], "expected number, got string \"180\"");
  system = b200_like_system();
  system["networks"]["inter_node"]["bandwidth"]["gbps"] = true;
  error = only_error(import(kModel, kStrategy, system.dump()));
  EXPECT_EQ(error["path"], "/simumax_system/networks/inter_node/bandwidth/gbps");
}

TEST(SimumaxImportTest, AnEmptySystemDocumentIsAnError) {
  const json input = {{"model", kModel.dump()}, {"strategy", kStrategy.dump()}, {"system", ""}};
  const json error = only_error(json::parse(call_json("import_simumax", input.dump())));
  EXPECT_EQ(error["path"], "/system");
  json without = input;
  without.erase("system");
  EXPECT_TRUE(json::parse(call_json("import_simumax", without.dump()))["ok"].get<bool>());
}

TEST(SimumaxImportTest, UnmeasuredFiguresAreLeftOutWithANote) {
  const json envelope = import(kModel, kStrategy, b200_like_system().dump());
  ASSERT_TRUE(envelope["ok"].get<bool>()) << envelope.dump();
  const json& efficiency = envelope["result"]["config"]["system"]["efficiency"];
  EXPECT_FALSE(efficiency["gemm"].contains("fp8")) << efficiency.dump();
  EXPECT_FALSE(efficiency["grouped_gemm"].contains("fp8")) << efficiency.dump();
  EXPECT_TRUE(has_note(envelope["result"]["notes"],
                       "the SimuMax system gives fp8_matmul efficient_factor 0 (not measured): "
                       "efficiency.gemm.fp8 is left out"));
  EXPECT_TRUE(has_note(envelope["result"]["notes"],
                       "the SimuMax system gives fp8_group_matmul efficient_factor 0 (not measured): "
                       "efficiency.grouped_gemm.fp8 is left out"));
  json config = envelope["result"]["config"];
  const json estimate = testing::run_estimate(config);
  EXPECT_TRUE(estimate["ok"].get<bool>()) << estimate.dump().substr(0, 400);
  // An fp8 run needs the figure the file does not give: an error naming it, not a guess.
  config["training"]["dtype"] = "fp8";
  EXPECT_FALSE(testing::run_estimate(config)["ok"].get<bool>());
}

}  // namespace
}  // namespace trainsim
