// The search over FP8 scaling recipes (constraints.fp8_recipe, Megatron --fp8-recipe):
// each candidate is a config estimate() accepts with the same figures, every asked
// recipe is tried, the fast path finds the exhaustive search's best plan, and the
// constraint is refused where it cannot apply (no fp8 dtype, MXFP8 on a GPU without
// block-scaled tensor cores).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "report/search_result.h"
#include "schema/search_request.h"
#include "search/enumerate.h"
#include "search/evaluator.h"
#include "search/search.h"
#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

Json recipe_search(const std::string& system, const Json& recipes) {
  Json document = Json::parse(R"({"model": {"preset": "llama3-8b", "num_layers": 8},
      "num_gpus": 8, "global_batch_size": 32, "seq_len": 4096, "dtype": "fp8",
      "constraints": {"micro_batch_size": [1, 2], "pp": [1, 2], "tp": [1, 2]}})");
  document["system"] = system;
  document["constraints"]["fp8_recipe"] = recipes;
  return document;
}

std::vector<Issue> search_issues(const Json& document) {
  schema::SearchRequest request;
  Issues issues;
  schema::read_search_request(document.dump(), request, issues);
  return issues;
}

TEST(Fp8RecipeSearchTest, EveryRecipeIsTriedAndEachCandidateIsItsConfig) {
  const Json document = recipe_search("h100-sxm-80gb", Json::parse(R"(["tensorwise", "blockwise"])"));
  schema::SearchRequest request;
  Issues issues;
  ASSERT_TRUE(schema::read_search_request(document.dump(), request, issues))
      << (issues.empty() ? "" : issues[0].path + ": " + issues[0].message);
  const Enumeration all = enumerate_candidates(request.spec);
  CandidateEvaluator evaluator(request.spec, 1e30);
  std::map<std::string, int> per_recipe;
  for (const Candidate& c : all.candidates) {
    const Json config = report::candidate_config_json(request, c);
    const std::string recipe = config["training"].value("fp8_recipe", std::string("delayed"));
    ++per_recipe[recipe];
    Config parsed;
    Issues parse_issues;
    ASSERT_TRUE(parse_config(config.dump(), parsed, parse_issues)) << config;
    EXPECT_EQ(evaluator.exact(c).iteration_s, estimate(parsed).time.iteration_s) << config;
  }
  EXPECT_EQ(per_recipe.size(), 2u);
  EXPECT_EQ(per_recipe["tensorwise"], per_recipe["blockwise"]);
  // The fast path (floors) returns the exhaustive search's best plan; on the H100,
  // per-tensor scaling's GEMM plateau (0.709) is above blockwise's (0.628), so it wins.
  SearchOptions exhaustive;
  exhaustive.floors = false;
  const Json full = report::search_result_json(request, run_search(request.spec, {}, exhaustive));
  const Json fast = report::search_result_json(request, run_search(request.spec, {}, SearchOptions{}));
  ASSERT_FALSE(full["top"].empty());
  EXPECT_EQ(full["top"][0]["config"], fast["top"][0]["config"]);
  EXPECT_EQ(full["top"][0]["config"]["training"]["fp8_recipe"], "tensorwise") << full["top"][0];
}

TEST(Fp8RecipeSearchTest, TheConstraintNeedsFp8AndTheRecipesTheGpuRuns) {
  Json bf16 = recipe_search("h100-sxm-80gb", "tensorwise");
  bf16.erase("dtype");
  auto issues = search_issues(bf16);
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].path, "/constraints/fp8_recipe");
  EXPECT_NE(issues[0].message.find("applies only to dtype \"fp8\""), std::string::npos) << issues[0].message;

  issues = search_issues(recipe_search("h100-sxm-80gb", Json::parse(R"(["tensorwise", "mxfp8"])")));
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues[0].path, "/constraints/fp8_recipe/1");
  EXPECT_NE(issues[0].message.find("block-scaled"), std::string::npos) << issues[0].message;

  // On a Blackwell GPU MXFP8 is a recipe like the others.
  EXPECT_TRUE(search_issues(recipe_search("b200-sxm-180gb", Json::parse(R"(["tensorwise", "mxfp8"])"))).empty());
}

}  // namespace
}  // namespace trainsim
