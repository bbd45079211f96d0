// What-if requests that would push a figure outside what a system may state,
// or ask for an unbounded amount of work, are errors at the request's path
// (a factor of 1e-300 on a system at its floors gave an internal error: an
// infinite step time reached the result).
#include <gtest/gtest.h>

#include <functional>

#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

Json errors_of(const std::string& text) {
  const Json envelope = Json::parse(text);
  EXPECT_FALSE(envelope.value("ok", true)) << text.substr(0, 400);
  EXPECT_FALSE(envelope.contains("internal")) << text.substr(0, 400);
  return envelope.value("errors", Json::array());
}

// The h100 preset with every positive rate at the smallest value accepted.
Json system_at_its_floors() {
  Json system = Json::parse(preset_json("h100-sxm-80gb"))["result"]["system"];
  std::function<void(Json&)> lower = [&](Json& value) {
    if (value.is_object() || value.is_array()) {
      for (Json& item : value) lower(item);
    } else if (value.is_number_float() && value.get<double>() > 0.0) {
      value = 1e-6;
    }
  };
  lower(system["gpu"]);
  system["gpu"]["compute_capability"] = 9.0;  // a version (cuBLAS workspace sizes), not a rate
  lower(system["intra_node"]);
  lower(system["inter_node"]);
  system["num_gpus"] = 16;
  return system;
}

TEST(WhatIfBoundsTest, FactorsBelowAFiguresFloorAreErrorsAtTheFactor) {
  Json document = testing::base_config();
  document["system"] = system_at_its_floors();
  document["whatif"] = {{"factors", {2.0, 1e-300}}};
  const Json errors = errors_of(whatif_json(document.dump()));
  ASSERT_EQ(errors.size(), 1u) << errors.dump();
  EXPECT_EQ(errors[0]["path"], "/whatif/factors/1");
  const std::string message = errors[0]["message"];
  EXPECT_EQ(message.rfind("scales peak_flops outside what a system may state: /system/gpu/peak_tflops/", 0), 0u)
      << message;
  // The same on the preset itself.
  document = testing::base_config();
  document["whatif"] = {{"factors", {1e-30}}};
  EXPECT_EQ(errors_of(whatif_json(document.dump()))[0]["path"], "/whatif/factors/0");
  const Json scaled = errors_of(call_json(
      "scale_system", R"({"system":"h100-sxm-80gb","figure":"hbm_bandwidth","factor":1e-20})"));
  EXPECT_EQ(scaled[0]["path"], "/factor");
}

TEST(WhatIfBoundsTest, TheTableIsBounded) {
  Json document = testing::base_config();
  document["whatif"] = {{"factors", Json::array()}};
  for (int i = 0; i < 33; ++i) document["whatif"]["factors"].push_back(1.5);
  EXPECT_EQ(errors_of(whatif_json(document.dump()))[0]["message"], "at most 32 factors, got 33");
  document["whatif"] = {{"figures", {"hbm_bandwidth", "peak_flops", "hbm_bandwidth"}}};
  const Json errors = errors_of(whatif_json(document.dump()));
  EXPECT_EQ(errors[0]["path"], "/whatif/figures/2");
  EXPECT_EQ(errors[0]["message"], "duplicate figure string \"hbm_bandwidth\"");
  // 57 estimates of 2^17 pipeline passes each: past the passes one request may simulate.
  document = testing::base_config();
  document["training"].erase("global_batch_size");
  document["training"]["num_micro_batches"] = 65536;
  document["whatif"] = Json::object();
  EXPECT_EQ(errors_of(whatif_json(document.dump()))[0]["path"], "/whatif");
}

}  // namespace
}  // namespace trainsim
