// Canonical trainsim JSON (presets expanded, defaults written) reads back to
// the same config for every model and system preset, and estimates the same;
// the CSV export carries the estimate's numbers, one quoted value per row.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "report/result_csv.h"
#include "interop/interop_test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;

json canonical(const json& config) {
  const json envelope = json::parse(export_config_json(config.dump()));
  if (!envelope["ok"].get<bool>()) throw std::runtime_error(envelope.dump());
  return envelope["result"]["config"];
}

class CanonicalConfigTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CanonicalConfigTest, ReadsBackToTheSameConfigWithEverySystem) {
  for (const std::string& system : testing::preset_file_ids("systems")) {
    SCOPED_TRACE(system);
    json config = testing::base_config();
    config["model"] = GetParam();
    config["training"] = {{"seq_len", 2048}, {"micro_batch_size", 1}, {"global_batch_size", 16}};
    config["system"] = {{"preset", system}, {"num_gpus", 8}};
    const json first = canonical(config);
    EXPECT_FALSE(first["model"].contains("preset"));
    EXPECT_EQ(first["training"]["dp"], 8);
    const json second = canonical(first);
    EXPECT_EQ(testing::first_difference(first, second), "");
    const Config a = testing::parse_ok(config);
    const Config b = testing::parse_ok(first);
    EXPECT_DOUBLE_EQ(a.system.gpu.hbm_capacity_bytes, b.system.gpu.hbm_capacity_bytes);
    EXPECT_NEAR(a.system.intra_node.latency_s, b.system.intra_node.latency_s, 1e-12 * a.system.intra_node.latency_s);
    if (system != "h100-sxm-80gb") continue;  // one estimate per model keeps the suite fast
    const double peak_a = json::parse(estimate_json(config.dump()))["result"]["memory"]["peak_bytes"];
    const double peak_b = json::parse(estimate_json(first.dump()))["result"]["memory"]["peak_bytes"];
    EXPECT_NEAR(peak_a, peak_b, 1e-9 * peak_a);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryModelPreset, CanonicalConfigTest, ::testing::ValuesIn(testing::preset_file_ids("models")),
                         [](const auto& p) {
                           std::string name = p.param;
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(CanonicalJsonTest, PresetFilesAreTheEmbeddedPresets) {
  const json list = json::parse(presets_json())["result"];
  for (const char* kind : {"models", "systems"}) {
    std::vector<std::string> embedded;
    for (const auto& entry : list[kind]) embedded.push_back(entry["id"]);
    std::sort(embedded.begin(), embedded.end());
    EXPECT_EQ(embedded, testing::preset_file_ids(kind));
  }
}

TEST(CanonicalJsonTest, WritesEveryTrainingOption) {
  json config = testing::base_config();
  config["training"]["recompute"] = {{"granularity", "selective"}, {"modules", {"mlp"}}, {"num_layers", 3},
                                     {"keep_tail_outputs", true}};
  config["training"]["num_layers_in_first_stage"] = 18;
  config["training"]["te_version"] = "2.3.0";
  const json training = canonical(config)["training"];
  EXPECT_EQ(training["recompute"], json::parse(R"({"granularity":"selective","modules":["mlp"],"num_layers":3,
                                                    "keep_tail_outputs":true})"));
  EXPECT_EQ(training["num_layers_in_first_stage"], 18);
  EXPECT_EQ(training["te_version"], "2.3");
  EXPECT_EQ(training["global_batch_size"], 64);
  EXPECT_EQ(training["zero_stage"], 1);
  EXPECT_EQ(testing::first_difference(canonical(config), canonical(canonical(config))), "");
}

TEST(CanonicalJsonTest, BadConfigsGiveTheConfigErrors) {
  json config = testing::base_config();
  config["training"]["tp"] = 3;
  config["system"]["num_gpus"] = 12;
  const json envelope = json::parse(export_config_json(config.dump()));
  EXPECT_EQ(envelope["errors"][0]["path"], "/training/tp");
  EXPECT_EQ(envelope["errors"][0]["message"], "must divide num_attention_heads (32), got 3");
}

// Splits RFC 4180 CSV into rows of fields.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        rows.back().back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        rows.back().back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\n') {
      rows.emplace_back(1);
    } else {
      rows.back().back() += c;
    }
  }
  rows.pop_back();  // after the final newline
  return rows;
}

TEST(CsvExportTest, CarriesTheEstimatesNumbers) {
  const json config = testing::base_config();
  const json envelope = json::parse(export_csv_json(config.dump()));
  ASSERT_TRUE(envelope["ok"].get<bool>()) << envelope.dump();
  const auto rows = parse_csv(envelope["result"]["csv"]);
  const json estimate = testing::estimate_ok(config);
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0], (std::vector<std::string>{"section", "stage", "metric", "value", "unit"}));
  std::map<std::string, std::string> values;
  size_t stage_rows = 0;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), 5u);
    values[row[0] + "/" + row[1] + "/" + row[2]] = row[3];
    if (row[0] == "memory_stage") ++stage_rows;
  }
  EXPECT_EQ(values.at("memory//peak_bytes"), estimate["memory"]["peak_bytes"].dump());
  EXPECT_EQ(values.at("memory_stage/1/activations_bytes"), estimate["memory"]["stages"][1]["activations_bytes"].dump());
  EXPECT_EQ(values.at("time//iteration_s"), estimate["time"]["iteration_s"].dump());
  EXPECT_EQ(values.at("time_breakdown//bubble_s"), estimate["time"]["breakdown"]["bubble_s"].dump());
  EXPECT_EQ(values.at("throughput//mfu"), estimate["throughput"]["mfu"].dump());
  EXPECT_EQ(values.at("feasibility//fits"), "true");
  EXPECT_EQ(stage_rows, 2u * 14u);
  // The breakdown rows add up to the iteration time.
  double sum = 0.0;
  for (const auto& row : rows) {
    if (row[0] == "time_breakdown") sum += std::stod(row[3]);
  }
  EXPECT_NEAR(sum, estimate["time"]["iteration_s"].get<double>(), 1e-9 * sum);
}

TEST(CsvExportTest, QuotesTextWithCommasQuotesAndNewlines) {
  Estimate estimate;
  estimate.fits = false;
  estimate.reasons = {"stage 0 needs 90 GiB, 80 GiB available"};
  estimate.notes = {"a \"quoted\" note\nover two lines"};
  const std::string csv = report::estimate_to_csv(estimate);
  EXPECT_NE(csv.find("feasibility,,fits,false,text\n"), std::string::npos);
  EXPECT_NE(csv.find("feasibility,,reason,\"stage 0 needs 90 GiB, 80 GiB available\",text\n"), std::string::npos);
  EXPECT_NE(csv.find("feasibility,,note,\"a \"\"quoted\"\" note\nover two lines\",text\n"), std::string::npos);
  const auto rows = parse_csv(csv);
  EXPECT_EQ(rows.back()[3], "a \"quoted\" note\nover two lines");
}

TEST(CsvExportTest, BadConfigsGiveTheConfigErrors) {
  const json envelope = json::parse(export_csv_json(R"({"model":"llama3-8b","training":{}})"));
  EXPECT_FALSE(envelope["ok"].get<bool>());
  EXPECT_EQ(envelope["errors"][0]["path"], "/training/seq_len");
}

}  // namespace
}  // namespace trainsim
