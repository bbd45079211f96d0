// Megatron-LM's --pipeline-model-parallel-layout (training.pipeline_layout):
// the grammar of pipeline_parallel_layer_layout.py parse_str_to_list, its
// validation (validate_layer_layout), the rank/chunk placement of each
// schedule, and what a layout changes in the estimate.
#include <gtest/gtest.h>

#include "model/pipeline_layout.h"
#include "test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;

std::vector<LayoutStage> parse(const std::string& text) {
  std::string error;
  auto stages = parse_pipeline_layout(text, &error);
  EXPECT_TRUE(stages.has_value()) << text << ": " << error;
  return stages.value_or(std::vector<LayoutStage>{});
}

std::string parse_error(const std::string& text) {
  std::string error;
  EXPECT_FALSE(parse_pipeline_layout(text, &error).has_value()) << text;
  return error;
}

TEST(PipelineLayoutGrammarTest, DocstringExampleUnrolls) {
  // parse_str_to_list's docstring: "Ettt|(tt|)*29,m|L" is
  // [["E","t","t","t"]] + [["t","t"]]*29 + [["m"],["L"]].
  const auto stages = parse("Ettt|(tt|)*29,m|L");
  ASSERT_EQ(stages.size(), 32u);
  EXPECT_TRUE(stages[0].embedding);
  EXPECT_EQ(stages[0].decoder_layers, 3);
  for (size_t k = 1; k <= 29; ++k) EXPECT_EQ(stages[k].decoder_layers, 2) << k;
  EXPECT_EQ(stages[30].mtp_layers, 1);
  EXPECT_EQ(stages[30].decoder_layers, 0);
  EXPECT_TRUE(stages[31].loss);
  EXPECT_EQ(stages[31].decoder_layers, 0);
}

TEST(PipelineLayoutGrammarTest, RepeatsAndEmptyStagesFollowTheRegexes) {
  // "(|ab)*2,cd -> |ab|abcd" (the comment on the first regex): empty stages count.
  const auto a = parse("(|tt)*2,tt");
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].decoder_layers, 0);
  EXPECT_EQ(a[1].decoder_layers, 2);
  EXPECT_EQ(a[2].decoder_layers, 4);
  // x*n after the group pass, and x*0 removes the character.
  const auto b = parse("Et*4|(t*4|)*14tmL");
  ASSERT_EQ(b.size(), 16u);
  EXPECT_EQ(b[0].decoder_layers, 4);
  EXPECT_EQ(b[14].decoder_layers, 4);
  EXPECT_EQ(b[15].decoder_layers, 1);
  EXPECT_EQ(b[15].mtp_layers, 1);
  EXPECT_TRUE(b[15].loss);
  EXPECT_EQ(parse("Et*0|tL")[0].decoder_layers, 0);
}

TEST(PipelineLayoutGrammarTest, MalformedTextsAreErrors) {
  EXPECT_NE(parse_error("Et|x|L").find("invalid character 'x'"), std::string::npos);
  EXPECT_NE(parse_error("((t|)*2)*3L").find("invalid character"), std::string::npos);  // no nesting
  EXPECT_NE(parse_error("tE|L").find("out of order"), std::string::npos);
  EXPECT_NE(parse_error("Et|mt|L").find("out of order"), std::string::npos);
  EXPECT_NE(parse_error("EEt|L").find("out of order"), std::string::npos);
  EXPECT_NE(parse_error("(t|)*999999999L").find("unrolls to more than"), std::string::npos);
}

TEST(PipelineLayoutGrammarTest, FormatParsesBackToTheSameStages) {
  for (const char* text : {"Et|(tt|)*30mL", "Et*4|(t*4|)*14tmL", "Et*3|(tt|)*29,m|L", "E||t|tL",
                           "EL", "Et*2|(tt|)*5t|tmL", "(Et|)*1(t|)*3tL"}) {
    const auto stages = parse(text);
    const std::string written = format_pipeline_layout(stages);
    EXPECT_EQ(parse(written), stages) << text << " -> " << written;
  }
  EXPECT_EQ(format_pipeline_layout(parse("Et|(tt|)*30mL")), "Et|(t*2|)*30mL");
}

ModelSpec model(int64_t layers, int64_t mtp) {
  ModelSpec m;
  m.num_layers = layers;
  m.mtp_num_layers = mtp;
  return m;
}

TEST(PipelineLayoutTest, MegatronBridgeDeepSeekV3LayoutsPerRank) {
  // Megatron-Bridge perf_recipes deepseek h100: "Et|(tt|)*30mL" with PP 8, VP 4: rank 0 holds
  // 7 decoder layers and the embedding, ranks 1-6 8, rank 7 6 plus MTP and loss.
  ParallelSpec p;
  p.pp = 8;
  p.vpp = 4;
  p.layout = parse("Et|(tt|)*30mL");
  ASSERT_TRUE(pipeline_layout_issues(model(61, 1), p).empty());
  const PipelineLayout layout = pipeline_layout(model(61, 1), p);
  std::vector<int64_t> per_rank;
  for (const auto& rank : layout) {
    int64_t layers = 0;
    for (const ChunkLayers& c : rank) layers += c.num_layers;
    per_rank.push_back(layers);
  }
  EXPECT_EQ(per_rank, (std::vector<int64_t>{7, 8, 8, 8, 8, 8, 8, 6}));
  EXPECT_TRUE(layout[0][0].embedding);
  EXPECT_EQ(layout[7][3].num_layers, 0);
  EXPECT_EQ(layout[7][3].mtp_layers, 1);
  EXPECT_TRUE(layout[7][3].loss);
  // Stage k is chunk k / pp of rank k % pp; layer ids follow the model order.
  EXPECT_EQ(layout[1][0].first_layer, 1);
  EXPECT_EQ(layout[0][1].first_layer, 1 + 7 * 2);
  // GB200 / GB300 recipe "Et*4|(t*4|)*14tmL" at PP 2 VP 8: 32 and 29 layers.
  p.pp = 2;
  p.vpp = 8;
  p.layout = parse("Et*4|(t*4|)*14tmL");
  ASSERT_TRUE(pipeline_layout_issues(model(61, 1), p).empty());
  const PipelineLayout two = pipeline_layout(model(61, 1), p);
  int64_t rank0 = 0, rank1 = 0;
  for (const ChunkLayers& c : two[0]) rank0 += c.num_layers;
  for (const ChunkLayers& c : two[1]) rank1 += c.num_layers;
  EXPECT_EQ(rank0, 32);
  EXPECT_EQ(rank1, 29);
}

TEST(PipelineLayoutTest, ValidationFollowsValidateLayerLayout) {
  ParallelSpec p;
  p.pp = 2;
  auto first_message = [&](const std::string& text, const ModelSpec& m) {
    p.layout = parse(text);
    const Issues issues = pipeline_layout_issues(m, p);
    EXPECT_FALSE(issues.empty()) << text;
    if (issues.empty()) return std::string();
    EXPECT_EQ(issues[0].path, "/training/pipeline_layout");
    return issues[0].message;
  };
  EXPECT_EQ(first_message("Et|t|tL", model(3, 0)), "has 3 stages, expected pp * vpp = 2 * 1");
  EXPECT_EQ(first_message("Et|(t|)*2tL", model(4, 0)), "has 4 stages, expected pp * vpp = 2 * 1 (set vpp to 2)");
  EXPECT_EQ(first_message("t|EtL", model(2, 0)), "needs exactly one embedding 'E', as the first item");
  EXPECT_EQ(first_message("Et|ttL", model(4, 0)), "has 3 decoder layers 't', expected num_layers (4)");
  EXPECT_EQ(first_message("Et|ttL", model(3, 1)), "has 0 MTP layers 'm', expected mtp_num_layers (1)");
  p.vpp = 2;
  EXPECT_EQ(first_message("Et|tm|t|L", model(3, 1)),
            "decoder layers must be placed before MTP layers (stage 2)");
  EXPECT_EQ(first_message("Et|t|tm|", model(3, 1)), "needs exactly one loss 'L', as the last item");
  EXPECT_EQ(first_message("Et|tm||L", model(2, 1)),
            "MTP layers must be in the last virtual stage of their pp rank (Megatron-LM), got stage 1 "
            "(chunk 0 of rank 1)");
  p.vpp = 1;
  p.num_layers_in_first_stage = 1;
  EXPECT_EQ(first_message("Et|tL", model(2, 0)),
            "cannot be combined with num_layers_in_first/last_stage or "
            "account_for_embedding/loss_in_pipeline_split");
}

TEST(PipelineLayoutTest, SchedulesPlaceVirtualStages) {
  ParallelSpec p;
  p.pp = 4;
  p.vpp = 2;
  p.schedule = PipelineSchedule::kZeroBubbleV;
  // A V: rank r holds stage r and stage 2pp - 1 - r (zbv.py, dualpipev.py).
  EXPECT_EQ(chunk_virtual_stages(p), (std::vector<std::vector<int32_t>>{{0, 7}, {1, 6}, {2, 5}, {3, 4}}));
  const PipelineLayout v = pipeline_layout(model(16, 0), p);
  EXPECT_TRUE(v[0][0].embedding);
  EXPECT_TRUE(v[0][1].loss);
  EXPECT_EQ(v[3][1].first_layer, 8);
  // DualPipe: both directions of a pp-way split, stage r and pp - 1 - r on rank r.
  p.vpp = 1;
  p.schedule = PipelineSchedule::kDualPipe;
  EXPECT_EQ(chunk_virtual_stages(p), (std::vector<std::vector<int32_t>>{{0, 3}, {1, 2}, {2, 1}, {3, 0}}));
  const PipelineLayout dual = pipeline_layout(model(16, 0), p);
  EXPECT_TRUE(dual[0][0].embedding && dual[0][1].loss && dual[3][1].embedding && dual[3][0].loss);
  // An uneven split is one of the pp-way split: DualPipe's rank 0 holds the light first
  // and last stages (2 layers each), the middle ranks two stages of 6.
  p.num_layers_in_first_stage = 2;
  p.num_layers_in_last_stage = 2;
  EXPECT_TRUE(pipeline_layout_issues(model(16, 0), p).empty());
  const PipelineLayout uneven = pipeline_layout(model(16, 0), p);
  EXPECT_EQ(uneven[0][0].num_layers, 2);
  EXPECT_EQ(uneven[0][1].num_layers, 2);
  EXPECT_EQ(uneven[1][0].num_layers, 6);
  EXPECT_EQ(uneven[1][1].first_layer, 8);
  // A V folds 2pp virtual stages over the ranks: its uneven split is given as a layout.
  p.vpp = 2;
  p.schedule = PipelineSchedule::kZeroBubbleV;
  const Issues issues = pipeline_layout_issues(model(16, 0), p);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].path, "/training/pipeline_schedule");
}

json deepseek_layout(const std::string& layout, int64_t pp, int64_t vpp) {
  return {{"model", {{"preset", "deepseek-v3"}, {"num_layers", 14}}},
          {"training",
           {{"seq_len", 4096}, {"micro_batch_size", 1}, {"num_micro_batches", 8}, {"pp", pp},
            {"vpp", vpp}, {"tp", 2}, {"ep", 4}, {"sequence_parallel", true},
            {"pipeline_layout", layout}}},
          {"system", {{"preset", "h100-sxm-80gb"}, {"num_gpus", 8 * pp}}}};
}

TEST(PipelineLayoutTest, LayoutDrivesParametersMemoryAndTime) {
  // Megatron-LM's functional test deepseekv3_proxy: "Et*2|(tt|)*5t|tmL" at PP 4 (VPP 2).
  const json r = testing::estimate_ok(deepseek_layout("Et*2|(tt|)*5t|tmL", 4, 2));
  const json& stages = r["memory"]["stages"];
  EXPECT_EQ(stages[0]["layers_per_chunk"], json({2, 2}));
  EXPECT_EQ(stages[3]["layers_per_chunk"], json({2, 1}));
  // The same model with the loss and MTP alone in the last chunk moves their weights and
  // time there: rank 3 holds fewer decoder layers, and nothing else changes elsewhere.
  const json moved = testing::estimate_ok(deepseek_layout("Et*2|(tt|)*5tt|mL", 4, 2));
  const json& moved_stages = moved["memory"]["stages"];
  EXPECT_EQ(moved_stages[3]["layers_per_chunk"], json({2, 0}));
  EXPECT_EQ(moved_stages[2]["layers_per_chunk"], json({2, 2}));
  EXPECT_LT(moved_stages[3]["expert_parameters"].get<double>(), stages[3]["expert_parameters"].get<double>());
  EXPECT_LT(moved["time"]["stages"][3]["forward_per_micro_batch_s"].get<double>(),
            r["time"]["stages"][3]["forward_per_micro_batch_s"].get<double>());
  // Without vpp the layout sets it (stages / pp), as Megatron-LM's arguments.py does.
  json no_vpp = deepseek_layout("Et*2|(tt|)*5t|tmL", 4, 1);
  no_vpp["training"].erase("vpp");
  EXPECT_EQ(testing::estimate_ok(no_vpp)["memory"]["stages"][0]["layers_per_chunk"], json({2, 2}));
}

TEST(PipelineLayoutTest, AStandaloneMtpStageHoldsTheMtpLayers) {
  // set_deepseek_v3_pipeline_model_parallel_layout's standalone form: MTP in the
  // penultimate virtual stage (the last one of rank pp - 2), the loss alone last.
  json config = deepseek_layout("Et*4|t*4|t*4|t*2m|L", 5, 1);
  config["system"]["num_gpus"] = 40;
  const json r = testing::estimate_ok(config);
  const json& stages = r["memory"]["stages"];
  EXPECT_EQ(stages[4]["layers_per_chunk"], json::array({0}));  // json({0}) is null under clang
  EXPECT_GT(stages[3]["expert_parameters"].get<double>(), 0.0);
  // The loss stage holds the output layer only: far fewer parameters than the MTP stage.
  EXPECT_LT(stages[4]["dense_parameters"].get<double>(), stages[3]["dense_parameters"].get<double>());
}

}  // namespace
}  // namespace trainsim
