// The match_model_preset op: a model equal to a preset in every field but its
// name (and, without a learned position table, its size) is that preset, so
// the page selects it after an import.
#include <gtest/gtest.h>

#include <map>
#include <set>
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

// Every preset, written out inline under another name, is found again: no two
// presets share one architecture (a second name of a model is an alias of its
// preset, as "llama3-405b" of "llama3.1-405b").
TEST(MatchModelPresetTest, EveryPresetWrittenInlineIsItself) {
  const Json presets = Json::parse(presets_json())["result"]["models"];
  ASSERT_GT(presets.size(), 10u);
  for (const Json& preset : presets) {
    const std::string id = preset["id"];
    Json model = preset_model(id);
    model["name"] = "my import";
    EXPECT_EQ(matched(model), id) << id;
  }
}

// An alias resolves to its preset everywhere an id is read (configs, the preset op),
// and lists name the preset once, with its aliases; no alias is another preset's id.
TEST(MatchModelPresetTest, AnAliasIsItsPresetAndListedOnce) {
  const Json listed = Json::parse(presets_json())["result"];
  std::set<std::string> ids;
  for (const char* kind : {"models", "systems"}) {
    for (const Json& preset : listed[kind]) ids.insert(preset["id"].get<std::string>());
  }
  int aliases = 0;
  for (const char* kind : {"models", "systems"}) {
    for (const Json& preset : listed[kind]) {
      for (const Json& alias : preset.value("aliases", Json::array())) {
        ++aliases;
        EXPECT_EQ(ids.count(alias.get<std::string>()), 0u) << alias;
        const Json resolved = Json::parse(preset_json(alias.get<std::string>()));
        ASSERT_TRUE(resolved["ok"].get<bool>()) << alias;
        EXPECT_EQ(resolved["result"]["id"], preset["id"]) << alias;
      }
    }
  }
  EXPECT_GE(aliases, 1);
  EXPECT_EQ(ids.count("llama3-405b"), 0u);
  const Json config = {{"model", "llama3-405b"}, {"system", {{"preset", "h100-sxm-80gb"}, {"num_gpus", 576}}},
                       {"training", {{"global_batch_size", 1024}, {"micro_batch_size", 1}, {"seq_len", 8192}, {"tp", 8}, {"pp", 9}}}};
  const Json by_alias = Json::parse(call_json("estimate", config.dump()));
  Json by_id_config = config;
  by_id_config["model"] = "llama3.1-405b";
  const Json by_id = Json::parse(call_json("estimate", by_id_config.dump()));
  ASSERT_TRUE(by_alias["ok"].get<bool>()) << by_alias.dump().substr(0, 400);
  EXPECT_EQ(by_alias["result"]["time"]["iteration_s"], by_id["result"]["time"]["iteration_s"]);
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
