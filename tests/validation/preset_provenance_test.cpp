// Every figure of every system preset states where it comes from (the
// preset's system.provenance, keyed by JSON pointer; an ancestor pointer covers
// its subtree), and an estimate lists the figures it used (result.calibration).
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "test_util.h"

namespace trainsim {
namespace {

std::vector<std::filesystem::path> system_presets() {
  std::vector<std::filesystem::path> out;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(TRAINSIM_PRESETS_DIR) + "/systems")) {
    if (entry.path().extension() == ".json") out.push_back(entry.path());
  }
  return out;
}

nlohmann::json load(const std::filesystem::path& path) {
  return nlohmann::json::parse(testing::read_text_file(path.string()));
}

// The pointers of every numeric leaf under `node` (arrays and objects walked).
void numeric_leaves(const nlohmann::json& node, const std::string& at,
                    std::vector<std::string>& out) {
  if (node.is_number()) {
    out.push_back(at);
  } else if (node.is_object()) {
    for (const auto& [key, value] : node.items()) numeric_leaves(value, at + "/" + key, out);
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) numeric_leaves(node[i], at + "/" + std::to_string(i), out);
  }
}

const nlohmann::json* covering(const nlohmann::json& provenance, std::string pointer) {
  while (!pointer.empty()) {
    if (provenance.contains(pointer)) return &provenance[pointer];
    pointer.resize(pointer.rfind('/'));
  }
  return nullptr;
}

// The figure blocks PLAN contract 3 covers: the GPU, the kernel efficiencies,
// the links and the host.
const char* const kCovered[] = {"gpu", "efficiency", "intra_node", "inter_node", "intra_node_tiers",
                                "host", "collectives"};

TEST(PresetProvenanceTest, EveryNumericFigureHasAProvenanceEntry) {
  const auto presets = system_presets();
  ASSERT_GE(presets.size(), 8u);
  for (const auto& path : presets) {
    const nlohmann::json system = load(path)["system"];
    ASSERT_TRUE(system.contains("provenance")) << path.filename();
    const nlohmann::json& provenance = system["provenance"];
    std::vector<std::string> leaves;
    for (const char* block : kCovered) {
      if (system.contains(block)) numeric_leaves(system[block], std::string("/") + block, leaves);
    }
    ASSERT_FALSE(leaves.empty()) << path.filename();
    for (const std::string& leaf : leaves) {
      EXPECT_NE(covering(provenance, leaf), nullptr)
          << path.filename().string() << ": no provenance for " << leaf;
    }
  }
}

TEST(PresetProvenanceTest, EntriesNameAKindASourceAndTheirFitCases) {
  const std::set<std::string> kinds = {"datasheet", "microbenchmark", "fitted", "assumed"};
  for (const auto& path : system_presets()) {
    const nlohmann::json system = load(path)["system"];
    for (const auto& [pointer, entry] : system["provenance"].items()) {
      const std::string where = path.filename().string() + " " + pointer;
      ASSERT_TRUE(entry.contains("kind") && entry.contains("source")) << where;
      EXPECT_TRUE(kinds.count(entry["kind"].get<std::string>())) << where << ": " << entry["kind"];
      EXPECT_GE(entry["source"].get<std::string>().size(), 10u) << where << ": source too short";
      // A pointer that names nothing in the system is a stale entry.
      EXPECT_TRUE(system.contains(nlohmann::json::json_pointer(pointer))) << where << ": stale";
      if (entry["kind"] == "fitted") {
        ASSERT_TRUE(entry.contains("cases")) << where;
        EXPECT_FALSE(entry["cases"].empty()) << where << ": a fitted figure names its cases";
      }
    }
  }
}

// A figure measured on one GPU is never copied to another GPU as if it were
// its own: each GEMM plateau a preset calls a microbenchmark cites its own GPU
// in the source (a borrowed figure is "assumed" and says from where).
TEST(PresetProvenanceTest, MicrobenchmarkGemmPlateausCiteTheirOwnGpu) {
  for (const auto& path : system_presets()) {
    const nlohmann::json doc = load(path);
    const nlohmann::json& system = doc["system"];
    if (!system["efficiency"].contains("gemm")) continue;
    // The GPU of the preset id: "h100-sxm-80gb" -> "H100", "mi300x-192gb" -> "MI300X".
    std::string gpu = path.stem().string();
    gpu = gpu.substr(0, gpu.find('-'));
    for (char& ch : gpu) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    for (const auto& [format, value] : system["efficiency"]["gemm"].items()) {
      const std::string pointer = "/efficiency/gemm/" + format;
      const nlohmann::json* entry = covering(system["provenance"], pointer);
      ASSERT_NE(entry, nullptr) << path.filename() << pointer;
      if ((*entry)["kind"] != "microbenchmark") continue;
      EXPECT_NE((*entry)["source"].get<std::string>().find(gpu), std::string::npos)
          << path.filename().string() << pointer << " (" << value
          << ") is called a microbenchmark but its source does not name " << gpu;
    }
  }
}

// The H800 is the H100 SXM5's GH100 die with NVLink cut to 400 GB/s (NVIDIA H800
// datasheet): its kernel figures are the H100's (marked assumed there), so the two
// presets must not drift apart when one is recalibrated.
TEST(PresetProvenanceTest, TheH800CarriesTheKernelFiguresOfItsH100Die) {
  const std::string dir = std::string(TRAINSIM_PRESETS_DIR) + "/systems/";
  const nlohmann::json h100 = load(dir + "h100-sxm-80gb.json")["system"];
  const nlohmann::json h800 = load(dir + "h800-sxm-80gb.json")["system"];
  EXPECT_EQ(h800["efficiency"], h100["efficiency"]);
  EXPECT_EQ(h800["gpu"]["peak_tflops"], h100["gpu"]["peak_tflops"]);
  EXPECT_EQ(h800["gpu"]["hbm_bandwidth_gb_per_s"], h100["gpu"]["hbm_bandwidth_gb_per_s"]);
  EXPECT_LT(h800["intra_node"]["bandwidth_gb_per_s"].get<double>() *
                h800["intra_node"]["efficiency"].get<double>(),
            h100["intra_node"]["bandwidth_gb_per_s"].get<double>() *
                h100["intra_node"]["efficiency"].get<double>());
}

// Same compute, slower NVLink: a tp 8 plan (NVLink-bound tensor-parallel collectives) is
// slower on H800 than on H100, by no more than its exposed communication.
TEST(PresetProvenanceTest, ATensorParallelPlanIsSlowerOnTheH800sNvlink) {
  nlohmann::json config = testing::base_config();
  config["training"]["tp"] = 8;
  config["training"]["sequence_parallel"] = true;
  config["system"]["preset"] = "h100-sxm-80gb";
  const nlohmann::json h100 = testing::estimate_ok(config);
  config["system"]["preset"] = "h800-sxm-80gb";
  const nlohmann::json h800 = testing::estimate_ok(config);
  EXPECT_GT(h800["time"]["iteration_s"].get<double>(), h100["time"]["iteration_s"].get<double>());
  EXPECT_EQ(h800["memory"]["peak_bytes"], h100["memory"]["peak_bytes"]);
}

TEST(CalibrationTest, AnEstimateListsTheFiguresItUsedWithTheirProvenance) {
  const nlohmann::json result = testing::estimate_ok(testing::base_config());
  const nlohmann::json& calibration = result["calibration"];
  std::set<std::string> figures;
  for (const auto& f : calibration["figures"]) {
    figures.insert(f["figure"].get<std::string>());
    EXPECT_FALSE(f["kind"].get<std::string>().empty()) << f;
  }
  EXPECT_TRUE(figures.count("/efficiency/gemm/bf16"));
  EXPECT_TRUE(figures.count("/gpu/peak_tflops/bf16"));
  EXPECT_TRUE(figures.count("/gpu/hbm_bandwidth_gb_per_s"));
  EXPECT_FALSE(figures.count("/efficiency/gemm/fp8")) << "a bf16 run uses no fp8 figure";
}

TEST(CalibrationTest, AnEstimateOnAssumedFiguresSaysItIsUncalibrated) {
  nlohmann::json config = testing::base_config();
  config["system"]["preset"] = "mi300x-192gb";
  const nlohmann::json result = testing::estimate_ok(config);
  EXPECT_FALSE(result["calibration"]["calibrated"].get<bool>());
  bool assumed_attention = false;
  for (const auto& f : result["calibration"]["figures"]) {
    if (f["figure"] == "/efficiency/attention/forward" && f["kind"] == "assumed") assumed_attention = true;
  }
  EXPECT_TRUE(assumed_attention) << result["calibration"];
}

}  // namespace
}  // namespace trainsim
