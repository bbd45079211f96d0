// The published schema (the "schema" op) and the one parser every document
// goes through.
#include <gtest/gtest.h>

#include <set>

#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

Json schema() {
  const Json envelope = Json::parse(call_json("schema", ""));
  EXPECT_TRUE(envelope["ok"].get<bool>());
  return envelope["result"];
}

const Json* find_field(const Json& fields, const std::string& key) {
  for (const Json& field : fields) {
    if (field["key"] == key) return &field;
  }
  return nullptr;
}

TEST(SchemaTest, PublishesEverySectionInTheContractFormat) {
  const Json s = schema();
  EXPECT_EQ(s["schema_version"], 1);
  EXPECT_EQ(s["enums"]["activation"], Json::parse(R"(["swiglu", "gelu", "squared_relu", "geglu"])"));
  EXPECT_EQ(s["enums"]["cp_comm_type"], Json::parse(R"(["a2a", "p2p", "all_gather"])"));
  EXPECT_EQ(s["enums"]["recompute_module"].size(), 13u);
  for (const char* list : {"search", "search_constraints", "whatif"}) EXPECT_FALSE(s[list].empty()) << list;
  const std::set<std::string> types = {"int", "number", "bool", "string", "enum", "object", "array", "map"};
  for (const char* section : {"model", "training", "system"}) {
    ASSERT_FALSE(s["config"][section].empty()) << section;
    for (const Json& field : s["config"][section]) {
      const std::string key = field["key"];
      EXPECT_TRUE(types.count(field["type"].get<std::string>())) << key;
      EXPECT_FALSE(field["label"].get<std::string>().empty()) << key;
      EXPECT_FALSE(field["help"].get<std::string>().empty()) << key;
      EXPECT_TRUE(field["required"].is_boolean()) << key;
      if (field.contains("enum")) {
        EXPECT_TRUE(s["enums"].contains(field["enum"].get<std::string>())) << key;
      }
      if (field["required"].get<bool>()) {
        EXPECT_FALSE(field.contains("default")) << key;
      }
    }
  }
  const Json& model = s["config"]["model"];
  ASSERT_NE(find_field(model, "moe"), nullptr);
  EXPECT_EQ((*find_field(model, "moe"))["type"], "object");
  const Json* experts = find_field(model, "moe.num_experts");
  ASSERT_NE(experts, nullptr);
  EXPECT_EQ((*experts)["type"], "int");
  EXPECT_TRUE((*experts)["required"].get<bool>());
  EXPECT_EQ((*experts)["min"], 1);
  EXPECT_EQ((*find_field(model, "activation"))["default"], "swiglu");
  EXPECT_EQ((*find_field(model, "make_vocab_size_divisible_by"))["default"], 128);
  EXPECT_FALSE(find_field(model, "num_kv_heads")->contains("default"));  // derived from the heads
  const Json& training = s["config"]["training"];
  EXPECT_EQ((*find_field(training, "tp"))["default"], 1);
  EXPECT_EQ((*find_field(training, "te_version"))["default"], "2.11");
  EXPECT_EQ((*find_field(training, "recompute.modules"))["default"], Json::parse(R"(["core_attn"])"));
  EXPECT_EQ((*find_field(training, "recompute.modules"))["enum"], "recompute_module");
  const Json* hbm = find_field(s["config"]["system"], "gpu.hbm_capacity_gib");
  ASSERT_NE(hbm, nullptr);
  EXPECT_EQ((*hbm)["unit"], "GiB");
  EXPECT_EQ((*hbm)["type"], "number");
  ASSERT_NE(find_field(s["config"]["system"], "intra_node.collectives.all_reduce.latency_us"), nullptr);
  EXPECT_EQ(s["whatif_figures"].size(), 8u);
  EXPECT_EQ(s["whatif_figures"][5], Json::parse(R"({"id": "intra_node_latency", "label": "Intra-node latency", "smaller_is_better": true})"));
}

// Erasing a key with a published default, or setting it to that default,
// gives the same canonical config: the published defaults are the reader's.
TEST(SchemaTest, PublishedDefaultsAreTheReadersDefaults) {
  const Json s = schema();
  const std::set<std::string> skip = {
      "recompute.modules",          // only with granularity "selective"
      "recompute.keep_tail_outputs",  // idem
  };
  const std::map<std::string, Json> base = {
      {"model", {{"preset", "llama3-8b"}}}, {"moe", {{"preset", "mixtral-8x7b"}}}, {"mla", {{"preset", "deepseek-v2-lite"}}}};
  int checked = 0;
  for (const char* section : {"model", "training", "system"}) {
    for (const Json& field : s["config"][section]) {
      const std::string key = field["key"];
      if (!field.contains("default") || skip.count(key)) continue;
      Json config = testing::base_config();
      const std::string head = key.substr(0, key.find('.'));
      if (std::string(section) == "model") {
        config["model"] = base.count(head) ? base.at(head) : base.at("model");
        config["training"]["pp"] = 1;  // deepseek-v2-lite's 27 layers
      }
      // Expand the section so that the key is really absent, not the preset's.
      const Json canonical = Json::parse(export_config_json(config.dump()))["result"]["config"];
      ASSERT_TRUE(canonical.is_object()) << key << ": " << export_config_json(config.dump());
      config[section] = canonical[section];
      if (std::string(section) == "training") {
        config["training"].erase("dp");
      }
      std::string pointer = "/" + std::string(section) + "/" + key;
      for (size_t i = 0; i < pointer.size(); ++i) if (pointer[i] == '.') pointer[i] = '/';
      if (!config.contains(Json::json_pointer(pointer).parent_pointer())) continue;  // array items
      Json absent = config;
      absent[Json::json_pointer(pointer).parent_pointer()].erase(key.substr(key.rfind('.') + 1));
      Json given = config;
      given[Json::json_pointer(pointer)] = field["default"];
      const std::string from_absent = export_config_json(absent.dump());
      EXPECT_EQ(from_absent, export_config_json(given.dump())) << key;
      EXPECT_TRUE(Json::parse(from_absent)["ok"].get<bool>()) << key << ": " << from_absent;
      ++checked;
    }
  }
  EXPECT_GT(checked, 50);
}

// Every key the published lists name is one the readers accept.
TEST(SchemaTest, EverySearchAndWhatIfKeyIsAccepted) {
  const Json s = schema();
  const Json search = Json::parse(R"({"model": "llama3-8b", "system": "h100-sxm-80gb", "num_gpus": 8,
      "global_batch_size": 32, "seq_len": 4096, "constraints": {}})");
  auto unknown = [](const Json& envelope, const std::string& path) {
    for (const Json& error : envelope.value("errors", Json::array())) {
      if (error["path"] == path && error["message"].get<std::string>().rfind("unknown key", 0) == 0) return true;
    }
    return false;
  };
  for (const Json& field : s["search"]) {
    Json doc = search;
    doc[field["key"].get<std::string>()] = Json::object();
    EXPECT_FALSE(unknown(Json::parse(search_json(doc.dump())), "/" + field["key"].get<std::string>())) << field["key"];
  }
  for (const Json& field : s["search_constraints"]) {
    Json doc = search;
    doc["constraints"][field["key"].get<std::string>()] = Json::object();
    EXPECT_FALSE(unknown(Json::parse(search_json(doc.dump())), "/constraints/" + field["key"].get<std::string>()))
        << field["key"];
  }
  for (const Json& field : s["whatif"]) {
    Json doc = testing::base_config();
    doc["whatif"][field["key"].get<std::string>()] = Json::object();
    EXPECT_FALSE(unknown(Json::parse(whatif_json(doc.dump())), "/whatif/" + field["key"].get<std::string>()))
        << field["key"];
  }
  Json doc = search;
  doc["constraints"]["tpp"] = 1;
  EXPECT_TRUE(unknown(Json::parse(search_json(doc.dump())), "/constraints/tpp"));
}

// One parser, one message for bad JSON, whatever the document.
TEST(SchemaTest, EveryParseSiteReportsBadJsonAlike) {
  const std::string syntax = "invalid JSON at byte 2: parse error at line 1, column 2: syntax error";
  const std::string overflow = "invalid JSON: number overflow parsing '1e400' (numbers must be within the range of a double)";
  struct Site {
    const char* op;
    std::string bad_syntax, bad_number;
    const char* path;
  };
  const Json simumax_syntax = {{"model", "{"}, {"strategy", "{}"}};
  const Json simumax_number = {{"model", R"({"a": 1e400})"}, {"strategy", "{}"}};
  const Site sites[] = {
      {"estimate", "{", R"({"a": 1e400})", ""},
      {"export_config", "{", R"({"a": 1e400})", ""},
      {"whatif", "{", R"({"a": 1e400})", ""},
      {"search", "{", R"({"a": 1e400})", ""},
      {"search_merge", "{", R"({"pages": [1e400]})", ""},
      {"scale_system", "{", R"({"factor": 1e400})", ""},
      {"import_megatron", "{", R"({"args": 1e400})", ""},
      {"import_hf", "{", R"({"a": 1e400})", "/hf"},
      {"import_simumax", simumax_syntax.dump(), simumax_number.dump(), "/simumax_model"},
  };
  for (const Site& site : sites) {
    for (const auto& [text, message] : {std::pair{site.bad_syntax, syntax}, std::pair{site.bad_number, overflow}}) {
      const ApiResult result = call(site.op, text);
      EXPECT_FALSE(result.ok) << site.op;
      EXPECT_FALSE(result.internal) << site.op << ": " << result.envelope;
      const Json error = Json::parse(result.envelope)["errors"][0];
      EXPECT_EQ(error["path"], site.path) << site.op;
      EXPECT_EQ(error["message"].get<std::string>().rfind(message, 0), 0u) << site.op << ": " << error;
    }
  }
}

TEST(SchemaTest, ScaleSystemScalesOneFigureOfAPresetOrAnObject) {
  const Json preset = Json::parse(preset_json("h100-sxm-80gb"))["result"]["system"];
  const Json scaled = Json::parse(call_json("scale_system", R"({"system": "h100-sxm-80gb", "figure": "hbm_capacity", "factor": 2})"));
  ASSERT_TRUE(scaled["ok"].get<bool>()) << scaled;
  const Json& system = scaled["result"]["system"];
  EXPECT_EQ(system["gpu"]["hbm_capacity_gib"], 2 * preset["gpu"]["hbm_capacity_gib"].get<double>());
  EXPECT_EQ(system["gpu"]["hbm_bandwidth_gb_per_s"], preset["gpu"]["hbm_bandwidth_gb_per_s"]);
  EXPECT_FALSE(system.contains("num_gpus"));
  const Json latency = Json::parse(call_json("scale_system", Json{{"system", system}, {"figure", "inter_node_latency"}, {"factor", 0.5}}.dump()));
  EXPECT_EQ(latency["result"]["system"]["inter_node"]["latency_us"], system["inter_node"]["latency_us"].get<double>() / 2);
  // The scaled system estimates like the what-if analysis' own scaling.
  Json config = testing::base_config();
  config["system"] = latency["result"]["system"];
  config["system"]["num_gpus"] = 16;
  EXPECT_TRUE(Json::parse(estimate_json(config.dump()))["ok"].get<bool>());
  const Json bad = Json::parse(call_json("scale_system", R"({"system": "h100-sxm-80gb", "figure": "hbm", "factor": 0})"));
  ASSERT_EQ(bad["errors"].size(), 2u) << bad;
  EXPECT_EQ(bad["errors"][0]["path"], "/figure");
  EXPECT_EQ(bad["errors"][1], Json::parse(R"({"path": "/factor", "message": "must be greater than 0, got 0"})"));
}

}  // namespace
}  // namespace trainsim
