// The op table: every operation by name, its status without reading the text,
// and the JSON inputs of the ops that take several texts.
#include <gtest/gtest.h>

#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

TEST(CallTest, StatusFollowsTheEnvelope) {
  const ApiResult ok = call("estimate", testing::base_config().dump());
  EXPECT_TRUE(ok.ok);
  EXPECT_FALSE(ok.internal);
  EXPECT_EQ(ok.envelope, estimate_json(testing::base_config().dump()));
  const ApiResult bad = call("estimate", R"({"model": "llama3-8b"})");
  EXPECT_FALSE(bad.ok);
  EXPECT_FALSE(bad.internal);
  EXPECT_EQ(Json::parse(bad.envelope)["errors"][0]["path"], "/training");
}

TEST(CallTest, UnknownOperationIsAnErrorAtTheEmptyPath) {
  const ApiResult result = call("estimat", "{}");
  EXPECT_FALSE(result.ok);
  const Json error = Json::parse(result.envelope)["errors"][0];
  EXPECT_EQ(error["path"], "");
  EXPECT_EQ(error["message"].get<std::string>().rfind("unknown operation \"estimat\"; expected one of \"estimate\"", 0), 0u);
  EXPECT_EQ(call_json("estimat", "{}"), result.envelope);
}

// The page's two modules answer disjoint groups that together are every op.
TEST(CallTest, PageAndToolGroupsSplitTheOps) {
  const std::string config = testing::base_config().dump();
  EXPECT_EQ(call_json_page("estimate", config), call_json("estimate", config));
  EXPECT_EQ(call_json_tools("export_megatron", config), call_json("export_megatron", config));
  for (const char* op : {"search", "search_merge", "whatif", "scale_system", "import_hf",
                         "import_megatron", "import_simumax", "match_model_preset", "export_megatron",
                         "allocation_trace"}) {
    const Json page = Json::parse(call_json_page(op, "{}"));
    EXPECT_FALSE(page["ok"].get<bool>()) << op;
    EXPECT_EQ(page["errors"][0]["message"].get<std::string>().rfind("unknown operation", 0), 0u) << op;
    EXPECT_EQ(call_json_tools(op, "{}").find("unknown operation"), std::string::npos) << op;
  }
  for (const char* op : {"estimate", "presets", "preset", "schema", "export_config", "export_csv"}) {
    EXPECT_NE(call_json_tools(op, "{}").find("unknown operation"), std::string::npos) << op;
    EXPECT_EQ(call_json_page(op, "{}").find("unknown operation"), std::string::npos) << op;
  }
}

TEST(CallTest, NamedFunctionsAreTheirOps) {
  const std::string config = testing::base_config().dump();
  EXPECT_EQ(call_json("export_config", config), export_config_json(config));
  EXPECT_EQ(call_json("export_csv", config), export_csv_json(config));
  EXPECT_EQ(call_json("export_megatron", config), export_megatron_json(config));
  EXPECT_EQ(call_json("presets", ""), presets_json());
  EXPECT_EQ(call_json("preset", "llama3-8b"), preset_json("llama3-8b"));
  EXPECT_EQ(call_json("whatif", config), whatif_json(config));
}

TEST(CallTest, ImportMegatronTakesArgsAndSystem) {
  const std::string script = testing::read_text_file(testing::test_data_path("data/megatron/llama3_8b_fp8.sh"));
  const Json input = {{"args", script}, {"system", "h200-sxm-141gb"}};
  EXPECT_EQ(call_json("import_megatron", input.dump()), import_megatron_json(script, "h200-sxm-141gb"));
  const Json missing = Json::parse(call_json("import_megatron", R"({"system": ""})"));
  EXPECT_EQ(missing["errors"][0]["path"], "/args");
  EXPECT_EQ(missing["errors"][0]["message"], "missing required key");
}

TEST(CallTest, ImportSimumaxTakesThreeTexts) {
  const Json bad = Json::parse(call_json("import_simumax", R"({"model": "{", "strategy": "{}"})"));
  EXPECT_FALSE(bad["ok"].get<bool>());
  EXPECT_EQ(bad["errors"][0]["path"], "/simumax_model");
  const Json unknown = Json::parse(call_json("import_simumax", R"({"model": "{}", "strategy": "{}", "sytem": ""})"));
  EXPECT_EQ(unknown["errors"][0]["path"], "/sytem");
}

}  // namespace
}  // namespace trainsim
