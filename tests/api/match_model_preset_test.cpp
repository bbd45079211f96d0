// The match_model_preset op: a model equal to a preset in every field but its
// name (and, without a learned position table, its size) is that preset, so
// the page selects it after an import.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

Json matched(const Json& model) {
  const Json envelope = Json::parse(call_json("match_model_preset", Json{{"model", model}}.dump()));
  EXPECT_TRUE(envelope["ok"].get<bool>()) << envelope.dump();
  return envelope["result"]["preset"];
}

Json preset_model(const std::string& id) { return Json::parse(preset_json(id))["result"]["model"]; }

// Every preset, written out inline under another name, is found again. Two
// presets share one architecture (llama3.1-405b and llama3-405b differ only in
// their names): the first id wins; any other repeat fails here.
TEST(MatchModelPresetTest, EveryPresetWrittenInlineIsItself) {
  const std::map<std::string, std::string> same_as = {{"llama3.1-405b", "llama3-405b"}};
  const Json presets = Json::parse(presets_json())["result"]["models"];
  ASSERT_GT(presets.size(), 10u);
  for (const Json& preset : presets) {
    const std::string id = preset["id"];
    Json model = preset_model(id);
    model["name"] = "my import";
    EXPECT_EQ(matched(model), same_as.count(id) != 0 ? same_as.at(id) : id) << id;
  }
}

TEST(MatchModelPresetTest, OneChangedFieldIsNoPreset) {
  for (const char* patch : {R"({"num_layers": 31})", R"({"vocab_size": 128000})", R"({"qk_layernorm": true})",
                            R"({"make_vocab_size_divisible_by": 64})", R"({"head_dim": 64})"}) {
    Json model = preset_model("llama3-8b");
    model.merge_patch(Json::parse(patch));
    EXPECT_EQ(matched(model), nullptr) << patch;
  }
  Json moe = preset_model("deepseek-v3");
  moe["moe"]["top_k"] = 6;
  EXPECT_EQ(matched(moe), nullptr);
}

TEST(MatchModelPresetTest, DefaultsAndUnusedTableSizesDoNotCount) {
  // A preset reference with overrides equal to the preset's values.
  EXPECT_EQ(matched({{"preset", "llama3-8b"}, {"num_layers", 32}}), "llama3-8b");
  // The position-table size of a RoPE model (a config.json's context length) shapes nothing.
  Json model = preset_model("llama3-8b");
  model["max_position_embeddings"] = 131072;
  EXPECT_EQ(matched(model), "llama3-8b");
  // The key the writer would add with its default value.
  model["make_vocab_size_divisible_by"] = 128;
  EXPECT_EQ(matched(model), "llama3-8b");
  const Json envelope = Json::parse(call_json("match_model_preset", Json{{"model", "llama3-8b"}}.dump()));
  EXPECT_EQ(envelope["result"]["label"], Json::parse(preset_json("llama3-8b"))["result"]["label"]);
}

TEST(MatchModelPresetTest, BadInputsNameTheirPath) {
  const auto first_error = [](const std::string& input) {
    const Json envelope = Json::parse(call_json("match_model_preset", input));
    EXPECT_FALSE(envelope["ok"].get<bool>()) << envelope.dump();
    return envelope["errors"][0];
  };
  EXPECT_EQ(first_error("{}")["path"], "/model");
  EXPECT_EQ(first_error("{}")["message"], "missing required key");
  const Json bad_layers = first_error(R"({"model": {"preset": "llama3-8b", "num_layers": 0}})");
  EXPECT_EQ(bad_layers["path"], "/model/num_layers");
  EXPECT_EQ(first_error(R"({"model": "llama3-8b", "extra": 1})")["path"], "/extra");
  EXPECT_EQ(first_error("[1]")["path"], "");
}

}  // namespace
}  // namespace trainsim
