#include "validation/published_cases.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "model/flops.h"
#include "test_util.h"

namespace trainsim::validation {
namespace {

FlopConvention convention_of(const std::string& name) {
  if (name == "narayanan2021") return FlopConvention::kNarayanan2021;
  if (name == "korthikanti2022") return FlopConvention::kKorthikanti2022;
  if (name == "megatron_legacy") return FlopConvention::kMegatronLegacy;
  if (name == "megatron") return FlopConvention::kMegatron;
  throw std::runtime_error("unknown flop_convention " + name);
}

nlohmann::json with_layers(nlohmann::json config, int64_t layers) {
  if (config["model"].is_string()) {
    config["model"] = {{"preset", config["model"]}, {"num_layers", layers}};
  } else {
    config["model"]["num_layers"] = layers;
  }
  return config;
}

// Forward + backward (+ recompute) of one micro-batch on the first stage.
double stage_micro_batch_s(const nlohmann::json& config) {
  const nlohmann::json stage = testing::estimate_ok(config)["time"]["stages"][0];
  return stage["forward_per_micro_batch_s"].get<double>() +
         stage["backward_per_micro_batch_s"].get<double>();
}

std::vector<std::string> data_files() {
  std::vector<std::string> files;
  const std::filesystem::path dir = testing::test_data_path("validation/data");
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("published_runs", 0) == 0 && entry.path().extension() == ".json") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<PublishedCase> load_cases() {
  std::vector<PublishedCase> out;
  for (const std::string& file : data_files()) {
    const nlohmann::json doc = nlohmann::json::parse(testing::read_text_file(file));
    for (const auto& c : doc["cases"]) {
      out.push_back({c["id"], c["source"], c["gpu"], c.value("role", std::string("held_out")),
                     std::filesystem::path(file).filename().string(), c["measured"], c["config"],
                     c.value("known_deviation", std::string())});
    }
  }
  return out;
}

}  // namespace

double Outcome::step_ratio() const {
  return time_like ? predicted / measured : measured / predicted;
}

const std::vector<PublishedCase>& published_cases() {
  static const std::vector<PublishedCase> all = load_cases();
  return all;
}

std::vector<nlohmann::json> skipped_rows() {
  std::vector<nlohmann::json> out;
  for (const std::string& file : data_files()) {
    const nlohmann::json doc = nlohmann::json::parse(testing::read_text_file(file));
    if (!doc.contains("skipped")) continue;
    for (const auto& s : doc["skipped"]) out.push_back(s);
  }
  return out;
}

std::string generation_of(const std::string& gpu) {
  if (gpu.rfind("a100", 0) == 0) return "ampere";
  if (gpu.rfind("h100", 0) == 0 || gpu.rfind("h200", 0) == 0 || gpu.rfind("h800", 0) == 0) {
    return "hopper";
  }
  if (gpu.rfind("b200", 0) == 0 || gpu.rfind("gb200", 0) == 0) return "blackwell";
  if (gpu.rfind("gb300", 0) == 0 || gpu.rfind("b300", 0) == 0) return "blackwell_ultra";
  return "other";
}

Outcome evaluate(const PublishedCase& c, const nlohmann::json& system_patch) {
  Outcome o;
  o.measured = c.measured["value"].get<double>();
  const std::string quantity = c.measured["quantity"];
  nlohmann::json config = c.config;
  config["system"].merge_patch(system_patch);
  try {
    if (quantity == "layer_time_s") {
      // One transformer layer: the difference between a 2-layer and a 1-layer model.
      o.predicted = stage_micro_batch_s(with_layers(config, 2)) -
                    stage_micro_batch_s(with_layers(config, 1));
      return o;
    }
    const nlohmann::json result = testing::estimate_ok(config);
    const double step_s = result["time"]["iteration_s"];
    const double gpus = config["system"]["num_gpus"];
    if (quantity == "iteration_s") {
      o.predicted = step_s;
    } else if (quantity == "tokens_per_s_per_gpu") {
      o.predicted = result["throughput"]["tokens_per_s_per_gpu"];
      o.time_like = false;
    } else if (quantity == "model_tflops_per_gpu") {
      Config parsed;
      Issues issues;
      if (!parse_config(config.dump(), parsed, issues)) throw std::runtime_error("bad config");
      const double tokens = result["throughput"]["tokens_per_step"];
      const double sequences = tokens / static_cast<double>(parsed.training.seq_len);
      const double flops = model_flops_per_step(parsed.model, parsed.training.seq_len, sequences,
                                                convention_of(c.measured["flop_convention"]));
      o.predicted = flops / step_s / gpus / 1e12;
      o.time_like = false;
    } else {
      o.error = "unknown quantity " + quantity;
    }
  } catch (const std::exception& e) {
    o.error = e.what();
  }
  return o;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace trainsim::validation
