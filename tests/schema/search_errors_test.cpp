// Bad search, what-if and page-merge documents: every problem comes back as
// an error envelope naming its JSON path, like config errors. Each row pins
// one message.
#include <gtest/gtest.h>

#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

Json base_search() {
  return Json::parse(R"({"model": {"preset": "llama3-8b", "num_layers": 4},
    "system": "h100-sxm-80gb", "num_gpus": 8, "global_batch_size": 32, "seq_len": 4096})");
}

struct BadSearchCase {
  const char* name;
  const char* patch;  ///< JSON merge patch applied to base_search()
  const char* path;
  const char* message;
};

const BadSearchCase kSearchCases[] = {
    {"model_missing", R"({"model": null})", "/model", "missing required key"},
    {"model_unknown_preset", R"({"model": "llama3-9b"})", "/model",
     "unknown model preset \"llama3-9b\" (did you mean \"llama3-8b\"?)"},
    {"unknown_key", R"({"constraint": {}})", "/constraint",
     "unknown key (did you mean \"constraints\"?)"},
    {"gpus_missing", R"({"num_gpus": null})", "/num_gpus", "missing required key"},
    {"gpus_string", R"({"num_gpus": "64"})", "/num_gpus",
     "expected integer or non-empty array of integers, got string \"64\""},
    {"gpus_zero", R"({"num_gpus": 0})", "/num_gpus", "must be at least 1, got 0"},
    {"gpus_duplicate", R"({"num_gpus": [8, 8]})", "/num_gpus/1", "duplicate value 8"},
    {"gpus_range_reversed", R"({"num_gpus": {"min": 64, "max": 8}})", "/num_gpus/max",
     "must be at least min (64), got 8"},
    {"gpus_range_too_long", R"({"num_gpus": {"min": 1, "max": 5000}})", "/num_gpus",
     "range holds 5000 GPU counts, at most 1024 allowed"},
    {"gpus_range_unknown_key", R"({"num_gpus": {"min": 8, "max": 16, "stride": 8}})",
     "/num_gpus/stride", "unknown key; expected one of \"max\", \"min\", \"step\""},
    {"batch_missing", R"({"global_batch_size": null})", "/global_batch_size",
     "missing required key (or set global_batch_tokens)"},
    {"batch_both", R"({"global_batch_tokens": 131072})", "/global_batch_tokens",
     "set either global_batch_size or global_batch_tokens, not both"},
    {"tokens_not_multiple", R"({"global_batch_size": null, "global_batch_tokens": 1000})",
     "/global_batch_tokens", "must be a multiple of seq_len (4096), got 1000"},
    {"seq_len_missing", R"({"seq_len": null})", "/seq_len", "missing required key"},
    {"dtype_unknown", R"({"dtype": "int8"})", "/dtype",
     "expected one of \"bf16\", \"fp16\", \"fp8\", \"fp4\", got \"int8\""},
    {"training_searched_key", R"({"training": {"tp": 8}})", "/training/tp",
     "is chosen by the search (constrain it with /constraints/tp)"},
    {"training_recompute", R"({"training": {"recompute": {"granularity": "full"}}})",
     "/training/recompute", "is chosen by the search (list the modes in /constraints/recompute)"},
    {"training_seq_len", R"({"training": {"seq_len": 2048}})", "/training/seq_len",
     "is set at /seq_len in a search document"},
    {"training_unknown_key", R"({"training": {"overlap_grad": true}})", "/training/overlap_grad",
     "unknown key (did you mean \"overlap_grad_reduce\"?)"},
    {"training_wrong_type", R"({"training": {"overlap_grad_reduce": 1}})",
     "/training/overlap_grad_reduce", "expected boolean, got number 1"},
    {"system_gpu_count", R"({"system": {"preset": "h100-sxm-80gb", "num_gpus": 64}})",
     "/system/num_gpus", "is set at /num_gpus in a search document"},
    {"constraints_not_object", R"({"constraints": [1]})", "/constraints",
     "expected object, got array"},
    {"constraints_unknown_key", R"({"constraints": {"micro_batch": 2}})",
     "/constraints/micro_batch", "unknown key (did you mean \"micro_batch_size\"?)"},
    {"tp_fraction", R"({"constraints": {"tp": [1, 2.5]}})", "/constraints/tp/1",
     "expected integer, got number 2.5"},
    {"tp_empty", R"({"constraints": {"tp": []}})", "/constraints/tp",
     "expected integer or non-empty array of integers, got array"},
    {"max_tp_zero", R"({"constraints": {"max_tp": 0}})", "/constraints/max_tp",
     "must be at least 1, got 0"},
    {"zero_stage_four", R"({"constraints": {"zero_stage": 4}})", "/constraints/zero_stage",
     "must be at most 3, got 4"},
    {"sequence_parallel_word", R"({"constraints": {"sequence_parallel": "yes"}})",
     "/constraints/sequence_parallel", "expected true, false or \"both\", got string \"yes\""},
    {"uneven_not_bool", R"({"constraints": {"uneven_stages": "on"}})", "/constraints/uneven_stages",
     "expected true, false or \"auto\", got string \"on\""},
    {"cp_comm_type_unknown", R"({"constraints": {"cp_comm_type": ["p2p", "ring"]}})",
     "/constraints/cp_comm_type/1",
     "expected one of \"a2a\", \"p2p\", \"all_gather\", got string \"ring\""},
    {"cp_comm_type_duplicate", R"({"constraints": {"cp_comm_type": ["a2a", "a2a"]}})",
     "/constraints/cp_comm_type/1", "duplicate value \"a2a\""},
    {"cp_comm_type_twice", R"({"training": {"cp_comm_type": "a2a"},
       "constraints": {"cp_comm_type": "p2p"}})",
     "/constraints/cp_comm_type", "is fixed at /training/cp_comm_type; set one of the two"},
    {"max_gpus_below_every_count", R"({"num_gpus": [8, 16], "constraints": {"max_gpus": 4}})",
     "/constraints/max_gpus", "leaves none of the GPU counts of /num_gpus, got 4"},
    {"max_gpu_hours_without_tokens", R"({"constraints": {"max_gpu_hours": 1000}})",
     "/constraints/max_gpu_hours", "needs the token budget: set /training/train_tokens"},
    {"objective_without_tokens", R"({"objective": "gpu_hours"})", "/objective",
     "\"gpu_hours\" needs the token budget: set /training/train_tokens"},
    {"diversity_unknown", R"({"diversity": "per_plan"})", "/diversity",
     "expected one of \"none\", \"per_layout\", got \"per_plan\""},
    {"recompute_empty", R"({"constraints": {"recompute": []}})", "/constraints/recompute",
     "expected a non-empty array of recompute objects, got array"},
    {"recompute_granularity", R"({"constraints": {"recompute": [{"granularity": "none"},
       {"granularity": "partial"}]}})",
     "/constraints/recompute/1/granularity",
     "expected one of \"none\", \"full\", \"selective\", got \"partial\""},
    {"recompute_not_object", R"({"constraints": {"recompute": ["full"]}})",
     "/constraints/recompute/0", "expected object, got string \"full\""},
    {"recompute_full_no_method", R"({"constraints": {"recompute": [{"granularity": "full",
       "num_layers": 1}]}})",
     "/constraints/recompute/0/method", "missing required key (granularity is \"full\")"},
    {"recompute_all_selective", R"({"constraints": {"recompute": [{"granularity": "selective",
       "num_layers": "all"}]}})",
     "/constraints/recompute/0/num_layers", "expected integer, got string \"all\""},
    {"recompute_bad_module", R"({"constraints": {"recompute": [{"granularity": "selective",
       "modules": ["attention"]}]}})",
     "/constraints/recompute/0/modules/0",
     "expected one of \"core_attn\", \"layernorm\", \"mla_up_proj\", \"mlp\", \"moe_act\", "
     "\"moe\", \"shared_experts\", \"attn\", \"attn_norm\", \"attn_proj\", \"mlp_block\", "
     "\"mlp_norm\", \"mlp_linear\", got string \"attention\""},
    {"recompute_layer_count_bad", R"({"constraints": {"recompute": [{"granularity": "full",
       "method": "block", "num_layers": [1, 0]}]}})",
     "/constraints/recompute/0/num_layers/1",
     "expected a positive integer or \"all\", got number 0"},
    {"recompute_duplicate", R"({"constraints": {"recompute": [{"granularity": "none"},
       {"granularity": "none"}]}})",
     "/constraints/recompute/1", "duplicate mode"},
    {"headroom_one", R"({"memory_headroom": 1})", "/memory_headroom",
     "must be at most 0.99, got 1"},
    {"top_k_zero", R"({"top_k": 0})", "/top_k", "must be at least 1, got 0"},
    {"objective_unknown", R"({"objective": "speed"})", "/objective",
     "expected one of \"step_time\", \"tokens_per_s_per_gpu\", \"time_to_train\", "
     "\"gpu_hours\", got \"speed\""},
    {"page_empty", R"({"page": {}})", "/page",
     "expected \"plan\": true, a list of \"classes\" or \"offset\" and \"limit\""},
    {"page_range_and_classes", R"({"page": {"classes": [0], "offset": 0, "limit": 4}})",
     "/page/offset", "a range (offset, limit) takes no plan, classes or bound"},
    {"page_limit_zero", R"({"page": {"offset": 0, "limit": 0}})", "/page/limit",
     "must be at least 1, got 0"},
    {"page_plan_and_classes", R"({"page": {"plan": true, "classes": [0]}})", "/page/classes",
     "set either plan or classes, not both"},
    {"page_class_negative", R"({"page": {"classes": [-1]}})", "/page/classes/0",
     "must be at least 0, got -1"},
    {"page_unknown_key", R"({"page": {"start": 0}})", "/page/start",
     "unknown key; expected one of \"bound\", \"classes\", \"limit\", \"offset\", \"plan\""},
    {"page_bound_front_pair", R"({"page": {"classes": [0], "bound": {"front": [[1]]}}})",
     "/page/bound/front/0", "expected [peak_bytes, iteration_s], got array"},
    {"page_bound_front_overflow", R"({"page": {"classes": [0], "bound": {"front": [[1, 1e31]]}}})",
     "/page/bound/front/0/1", "expected a number from 0 to 1e30, got number 1e+31"},
    {"page_bound_top_metrics", R"({"page": {"classes": [0], "bound": {"top": [{"peak_bytes": 1}]}}})",
     "/page/bound/top/0/iteration_s", "missing required key"},
    {"too_many_combinations", R"({"model": "deepseek-v3", "num_gpus": {"min": 1024, "max": 4096, "step": 8}})",
     "/constraints/uneven_stages",
     "the search holds more than 40,000,000 combinations; narrow the constraints that multiply "
     "them: stage splits, vpp and recompute modes (1803 values), num_gpus (385 counts), cp (32 "
     "values), pp (21 values), ep (9 values), tp (7 values), etp (7 values), micro_batch_size (4 "
     "values), recompute (3 values)"},
};

class BadSearchTest : public ::testing::TestWithParam<BadSearchCase> {};

TEST_P(BadSearchTest, ReportsPathAndMessage) {
  Json document = base_search();
  document.merge_patch(Json::parse(GetParam().patch));
  const Json envelope = Json::parse(search_json(document.dump()));
  ASSERT_FALSE(envelope["ok"].get<bool>()) << envelope;
  EXPECT_FALSE(envelope.contains("internal"));
  bool found = false;
  for (const Json& error : envelope["errors"]) {
    found = found || (error["path"] == GetParam().path && error["message"] == GetParam().message);
  }
  EXPECT_TRUE(found) << "got " << envelope["errors"].dump();
}

INSTANTIATE_TEST_SUITE_P(SearchErrors, BadSearchTest, ::testing::ValuesIn(kSearchCases),
                         [](const auto& test) { return std::string(test.param.name); });

TEST(SearchErrorsTest, InvalidJsonNamesTheByte) {
  const Json envelope = Json::parse(search_json("{\"model\": "));
  ASSERT_EQ(envelope["errors"].size(), 1u);
  EXPECT_EQ(envelope["errors"][0]["path"], "");
  EXPECT_EQ(
      envelope["errors"][0]["message"].get<std::string>().rfind("invalid JSON at byte 11: ", 0),
      0u);
}

TEST(SearchErrorsTest, EveryProblemIsReportedAtOnce) {
  Json document = base_search();
  document.merge_patch(Json::parse(R"({"num_gpus": 0, "top_k": 0, "constraints": {"tp": [0]}})"));
  EXPECT_EQ(Json::parse(search_json(document.dump()))["errors"].size(), 3u);
}

struct BadWhatIfCase {
  const char* name;
  const char* patch;  ///< applied to testing::base_config()
  const char* path;
  const char* message;
};

const BadWhatIfCase kWhatIfCases[] = {
    {"factor_zero", R"({"whatif": {"factors": [0.5, 0]}})", "/whatif/factors/1",
     "expected a number greater than 0 and at most 1000, got number 0"},
    {"factors_empty", R"({"whatif": {"factors": []}})", "/whatif/factors",
     "expected a non-empty array of numbers, got array"},
    {"figure_unknown", R"({"whatif": {"figures": ["flops"]}})", "/whatif/figures/0",
     "expected one of \"peak_flops\", \"hbm_bandwidth\", \"hbm_capacity\", "
     "\"intra_node_bandwidth\", \"inter_node_bandwidth\", \"intra_node_latency\", "
     "\"inter_node_latency\", \"kernel_latency\", got string \"flops\""},
    {"whatif_unknown_key", R"({"whatif": {"factor": [2]}})", "/whatif/factor",
     "unknown key (did you mean \"factors\"?)"},
    {"whatif_not_object", R"({"whatif": 2})", "/whatif", "expected object, got number 2"},
    {"config_still_checked", R"({"whatif": {}, "training": {"tp": 3}, "system": {"num_gpus": 12}})",
     "/training/tp", "must divide num_attention_heads (32), got 3"},
};

class BadWhatIfTest : public ::testing::TestWithParam<BadWhatIfCase> {};

TEST_P(BadWhatIfTest, ReportsPathAndMessage) {
  Json document = testing::base_config();
  document.merge_patch(Json::parse(GetParam().patch));
  const Json envelope = Json::parse(whatif_json(document.dump()));
  ASSERT_FALSE(envelope["ok"].get<bool>()) << envelope;
  bool found = false;
  for (const Json& error : envelope["errors"]) {
    found = found || (error["path"] == GetParam().path && error["message"] == GetParam().message);
  }
  EXPECT_TRUE(found) << "got " << envelope["errors"].dump();
}

INSTANTIATE_TEST_SUITE_P(WhatIfErrors, BadWhatIfTest, ::testing::ValuesIn(kWhatIfCases),
                         [](const auto& test) { return std::string(test.param.name); });

TEST(SearchErrorsTest, MergeNeedsPagesOfOneSearchCoveringEachClassOnce) {
  EXPECT_EQ(
      Json::parse(search_merge_json(R"({"pages": []})"))["errors"][0],
      (Json{{"path", "/pages"}, {"message", "expected a non-empty array of search results"}}));
  EXPECT_EQ(Json::parse(search_merge_json(R"({"pages": [{"top": []}]})"))["errors"][0],
            (Json{{"path", "/pages/0/objective"}, {"message", "missing required key"}}));
  Json document = base_search();
  document["page"] = {{"classes", {0, 1}}};
  const Json page = Json::parse(search_json(document.dump()));
  ASSERT_TRUE(page["ok"].get<bool>()) << page;
  EXPECT_EQ(Json::parse(search_merge_json(Json{{"pages", {page, page}}}.dump()))["errors"][0],
            (Json{{"path", "/pages/1/page/classes"},
                  {"message", "layout class 0 is in an earlier page too"}}));
  const int64_t classes = page["result"]["search"]["layout_classes"].get<int64_t>();
  EXPECT_EQ(Json::parse(search_merge_json(Json{{"pages", {page}}}.dump()))["errors"][0],
            (Json{{"path", "/pages"},
                  {"message", "the pages cover 2 of the " + std::to_string(classes) +
                                  " layout classes"}}));
  Json other = base_search();
  other["top_k"] = 3;
  other["page"] = {{"classes", {2}}};
  EXPECT_EQ(Json::parse(search_merge_json(
                Json{{"pages", {page, Json::parse(search_json(other.dump()))}}}.dump()))["errors"][0],
            (Json{{"path", "/pages/1/top_k"}, {"message", "differs from the first page (10)"}}));
}

}  // namespace
}  // namespace trainsim
