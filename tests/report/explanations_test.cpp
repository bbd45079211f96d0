// Explain every number (result.explanations): every memory part of every stage
// and every part of the critical stage's time breakdown has one explanation;
// its value is the number at its JSON pointer, its formula evaluated over its
// terms gives that value, every symbol of the formula is a term, and it names
// a source. Over each pipeline schedule, interleaving, CP, MoE with EP, ZeRO 3
// and a plan that does not fit.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <string>

#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

struct Case {
  const char* name;
  const char* patch;  // merged into testing::base_config()
};

const Case kCases[] = {
    {"1f1b_tp2_pp2", R"({})"},
    {"1f1b_cp2_zero1", R"({"training": {"cp": 2, "cp_comm_type": "a2a", "global_batch_size": 32, "zero_stage": 1}})"},
    {"interleaved", R"({"training": {"pp": 4, "vpp": 2, "global_batch_size": 32}})"},
    {"zero_bubble_h1", R"({"training": {"pp": 4, "pipeline_schedule": "zero_bubble_h1", "global_batch_size": 32}})"},
    {"zero3_recompute", R"({"training": {"pp": 1, "zero_stage": 3, "recompute": {"granularity": "full", "method": "uniform", "num_layers": 1}, "global_batch_size": 32}})"},
    {"dualpipe_moe", R"({"model": "mixtral-8x7b", "training": {"tp": 1, "pp": 4, "ep": 4, "sequence_parallel": false,
                         "pipeline_schedule": "dualpipe", "global_batch_size": 32}})"},
    {"activation_offload", R"({"training": {"pp": 1, "activation_offload_layers": 8, "global_batch_size": 32},
                              "system": {"host": {"link_gb_per_s": 1}}})"},
    {"moe_1f1b_out_of_memory", R"({"model": "mixtral-8x7b", "training": {"tp": 1, "pp": 1, "ep": 2,
                                  "sequence_parallel": false, "global_batch_size": 32}})"},
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// The formula grammar of trainsim/result.h: numbers, symbols, + - * / ( ),
// unary minus, min(a, b), max(a, b).
class Formula {
 public:
  Formula(const std::string& text, const std::map<std::string, double>& values)
      : text_(text), values_(values) {}

  double evaluate() {
    const double value = sum();
    skip();
    if (at_ < text_.size()) throw std::runtime_error("trailing text at " + std::to_string(at_) + " in " + text_);
    return value;
  }
  std::set<std::string> symbols;

 private:
  void skip() {
    while (at_ < text_.size() && text_[at_] == ' ') ++at_;
  }
  bool take(char c) {
    skip();
    if (at_ < text_.size() && text_[at_] == c) return ++at_, true;
    return false;
  }
  double sum() {
    double value = product();
    for (;;) {
      if (take('+')) value += product();
      else if (take('-')) value -= product();
      else return value;
    }
  }
  double product() {
    double value = unary();
    for (;;) {
      if (take('*')) value *= unary();
      else if (take('/')) value /= unary();
      else return value;
    }
  }
  double unary() { return take('-') ? -atom() : atom(); }
  double atom() {
    if (take('(')) {
      const double value = sum();
      if (!take(')')) throw std::runtime_error("missing ) in " + text_);
      return value;
    }
    skip();
    const size_t start = at_;
    if (at_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[at_])) || text_[at_] == '.')) {
      size_t used = 0;
      const double value = std::stod(text_.substr(at_), &used);
      at_ += used;
      return value;
    }
    while (at_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_')) ++at_;
    const std::string name = text_.substr(start, at_ - start);
    if (name.empty()) throw std::runtime_error("expected a term at " + std::to_string(start) + " in " + text_);
    if (name == "min" || name == "max") {
      if (!take('(')) throw std::runtime_error(name + " without ( in " + text_);
      const double a = sum();
      if (!take(',')) throw std::runtime_error(name + " without , in " + text_);
      const double b = sum();
      if (!take(')')) throw std::runtime_error(name + " without ) in " + text_);
      return name == "min" ? std::min(a, b) : std::max(a, b);
    }
    symbols.insert(name);
    const auto it = values_.find(name);
    if (it == values_.end()) throw std::runtime_error("no term " + name + " in " + text_);
    return it->second;
  }
  std::string text_;
  const std::map<std::string, double>& values_;
  size_t at_ = 0;
};

class ExplanationsTest : public ::testing::TestWithParam<Case> {};

TEST_P(ExplanationsTest, EveryPartHasOneWhoseNumbersGiveItsValue) {
  Json config = testing::base_config();
  config.merge_patch(Json::parse(GetParam().patch));
  const Json result = testing::estimate_ok(config);
  ASSERT_TRUE(result["explanations"].is_array());

  // The parts that must be explained.
  std::set<std::string> required;
  for (const Json& stage : result["memory"]["stages"]) {
    for (const char* key : {"parameters_bytes", "gradients_bytes", "optimizer_bytes", "buffers_bytes",
                            "activations_bytes", "transient_bytes", "peak_bytes", "reserved_bytes",
                            "outside_allocator_bytes", "device_bytes"}) {
      required.insert("/memory/stages/" + std::to_string(stage["stage"].get<int64_t>()) + "/" + key);
    }
  }
  if (result.contains("time") && result["time"].contains("breakdown")) {
    for (const auto& [key, value] : result["time"]["breakdown"].items()) required.insert("/time/breakdown/" + key);
  }
  ASSERT_GT(required.size(), 20u);

  std::set<std::string> seen;
  for (const Json& x : result["explanations"]) {
    const std::string part = x["part"];
    SCOPED_TRACE(part + " = " + x["formula"].get<std::string>());
    EXPECT_TRUE(seen.insert(part).second) << "explained twice";
    const Json::json_pointer pointer(part);
    ASSERT_TRUE(result.contains(pointer)) << "no such number in the result";
    const double value = x["value"];
    const double actual = result.at(pointer);
    EXPECT_NEAR(value, actual, 1e-12 * std::max(1.0, std::abs(actual)));
    EXPECT_FALSE(x["source"].get<std::string>().empty());
    std::map<std::string, double> values;
    double scale = std::abs(value);
    for (const Json& t : x["terms"]) {
      EXPECT_TRUE(values.emplace(t["symbol"].get<std::string>(), t["value"].get<double>()).second)
          << "term " << t["symbol"] << " twice";
      EXPECT_FALSE(t["unit"].get<std::string>().empty()) << t;
      EXPECT_FALSE(t["meaning"].get<std::string>().empty()) << t;
      scale = std::max(scale, std::abs(t["value"].get<double>()));
    }
    Formula formula(x["formula"], values);
    double evaluated = 0.0;
    ASSERT_NO_THROW(evaluated = formula.evaluate());
    EXPECT_NEAR(evaluated, value, 1e-9 * scale + 1e-12) << x.dump(1);
    for (const auto& [symbol, v] : values) EXPECT_TRUE(formula.symbols.count(symbol)) << symbol << " is not in the formula";
  }
  for (const std::string& part : required) EXPECT_TRUE(seen.count(part)) << part << " has no explanation";
}

INSTANTIATE_TEST_SUITE_P(Plans, ExplanationsTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<Case>& param) { return std::string(param.param.name); });

// A wrong term must be caught: the evaluator is not a formality.
TEST(ExplanationsFormula, EvaluatesTheGrammarAndFailsOnUnknownTerms) {
  const std::map<std::string, double> values = {{"T", 10.0}, {"W", 4.0}, {"P", 1.5}, {"m", 3.0}};
  EXPECT_DOUBLE_EQ(Formula("min(max(0, T - W), P)", values).evaluate(), 1.5);
  EXPECT_DOUBLE_EQ(Formula("max(0, T - W) - P", values).evaluate(), 4.5);
  EXPECT_DOUBLE_EQ(Formula("(m - 1) * W + T / 2", values).evaluate(), 13.0);
  EXPECT_THROW(Formula("m * Q", values).evaluate(), std::runtime_error);
  EXPECT_THROW(Formula("m *", values).evaluate(), std::runtime_error);
}

// The explanation follows the plan: ZeRO 1 divides the optimizer states by the
// data-parallel group, the weights not.
TEST(ExplanationsContent, ZeroOneShardsOptimizerStatesNotWeights) {
  Json config = testing::base_config();
  config.merge_patch(Json::parse(R"({"training": {"zero_stage": 1}})"));
  const Json result = testing::estimate_ok(config);
  std::map<std::string, Json> by_part;
  for (const Json& x : result["explanations"]) by_part[x["part"]] = x;
  auto term = [&](const std::string& part, const std::string& symbol) {
    for (const Json& t : by_part.at(part)["terms"]) {
      if (t["symbol"] == symbol) return t["value"].get<double>();
    }
    ADD_FAILURE() << symbol << " not in " << part;
    return 0.0;
  };
  const double dp = result["memory"]["stages"].size() > 0 ? term("/memory/stages/0/optimizer_bytes", "g_dense") : 0.0;
  EXPECT_GT(dp, 1.0);
  EXPECT_EQ(term("/memory/stages/0/parameters_bytes", "g_dense"), 1.0);
  EXPECT_EQ(term("/memory/stages/0/optimizer_bytes", "b_adam"), 12.0);
}

}  // namespace
}  // namespace trainsim
