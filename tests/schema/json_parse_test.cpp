// The one JSON parser (schema/json_parse.h) and the bounds on what a bad
// document can make trainsim report: inputs that nlohmann's default parser
// accepted silently (duplicate keys, text after a NUL byte, integers at or above
// 2^63, UTF-16) or that crashed or grew without bound (deep nesting, thousands
// of errors, megabyte keys) each give a path-named error of bounded size.
#include <gtest/gtest.h>

#include <string>

#include "schema/json_parse.h"
#include "schema/json_reader.h"
#include "test_util.h"

namespace trainsim {
namespace {

using nlohmann::json;

json errors_of(const std::string& envelope_text) {
  const json envelope = json::parse(envelope_text);
  EXPECT_FALSE(envelope.value("ok", true)) << envelope_text.substr(0, 300);
  EXPECT_FALSE(envelope.contains("internal")) << envelope_text.substr(0, 300);
  return envelope.value("errors", json::array());
}

std::string config_text() { return testing::base_config().dump(); }

// Every document the core reads goes through parse_document: a repeated key is
// an error at its path in each of them (nlohmann kept the last value).
TEST(JsonParseTest, DuplicateKeysAreErrorsInEveryDocument) {
  const std::string config = R"({"model":"llama3-8b","training":{"seq_len":4096,"micro_batch_size":1,
      "global_batch_size":64,"tp":2,"pp":2,"tp":4},"system":{"preset":"h100-sxm-80gb","num_gpus":16}})";
  json errors = errors_of(estimate_json(config));
  ASSERT_EQ(errors.size(), 1u) << errors.dump();
  EXPECT_EQ(errors[0]["path"], "/training/tp");
  EXPECT_EQ(errors[0]["message"],
            "duplicate key: \"tp\" is given more than once in this object (each key may appear once)");

  errors = errors_of(search_json(
      R"({"model":"llama3-8b","system":"h100-sxm-80gb","num_gpus":8,"global_batch_size":32,"seq_len":4096,"seq_len":8192})"));
  EXPECT_EQ(errors[0]["path"], "/seq_len");

  json whatif = testing::base_config();
  errors = errors_of(whatif_json(whatif.dump().substr(0, whatif.dump().size() - 1) +
                                 R"(,"whatif":{"factors":[2],"factors":[3]}})"));
  EXPECT_EQ(errors[0]["path"], "/whatif/factors");

  errors = errors_of(import_hf_json(R"({"model_type":"llama","hidden_size":1,"hidden_size":2})"));
  EXPECT_EQ(errors[0]["path"], "/hf/hidden_size");

  errors = errors_of(import_simumax_json(R"({"layer_num":2,"layer_num":4})", "{}", ""));
  EXPECT_EQ(errors[0]["path"], "/simumax_model/layer_num");
  errors = errors_of(import_simumax_json("{}", "{}", R"({"networks":{"a":{"b":[{"c":1,"c":2}]}}})"));
  bool found = false;  // the empty model and strategy have their own errors
  for (const json& error : errors) found = found || error["path"] == "/simumax_system/networks/a/b/0/c";
  EXPECT_TRUE(found) << errors.dump();

  errors = errors_of(call_json("import_megatron", R"({"args":"--bf16","args":"--fp16"})"));
  EXPECT_EQ(errors[0]["path"], "/args");
}

TEST(JsonParseTest, DuplicatesAreReportedUpToABoundThenTheDocumentIsNotRead) {
  std::string text = "{";
  for (int i = 0; i < 100000; ++i) text += std::string(i > 0 ? "," : "") + "\"model\":1";
  const json errors = errors_of(estimate_json(text + "}"));
  ASSERT_EQ(errors.size(), schema::kMaxDocumentProblems + 1);
  EXPECT_EQ(errors.back()["message"],
            "too many duplicate keys or out-of-range integers: the rest of the document is not read");
}

// ~150,000 nested arrays overflowed the stack of every later recursive walk.
TEST(JsonParseTest, NestingIsBoundedAtParseTime) {
  const std::string deep = std::string(150000, '[') + std::string(150000, ']');
  const json errors = errors_of(estimate_json(R"({"model":)" + deep + "}"));
  ASSERT_EQ(errors.size(), 1u);
  std::string path = "/model";
  for (size_t i = 1; i < schema::kMaxJsonDepth; ++i) path += "/0";
  EXPECT_EQ(errors[0]["path"], path);
  EXPECT_EQ(errors[0]["message"],
            "nesting deeper than 64 levels of arrays and objects: the document is not read further");
  // 64 levels are fine as far as the parser is concerned.
  std::string ok = std::string(63, '[') + std::string(63, ']');
  nlohmann::json out;
  Issues issues;
  EXPECT_TRUE(schema::parse_document("{\"a\":" + ok + "}", "", out, issues));
}

TEST(JsonParseTest, NulByteIsAnErrorNotTheEndOfTheDocument) {
  const json errors = errors_of(estimate_json(config_text() + std::string(1, '\0') + "garbage"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0]["path"], "");
  EXPECT_EQ(errors[0]["message"], "invalid JSON at byte " + std::to_string(config_text().size() + 1) +
                                      ": a NUL byte (JSON text cannot contain one; inside a string "
                                      "write \\u0000)");
}

std::string utf16le(const std::string& ascii, bool bom) {
  std::string out = bom ? std::string("\xFF\xFE") : "";
  for (char c : ascii) {
    out += c;
    out += '\0';
  }
  return out;
}

TEST(JsonParseTest, Utf16AndUtf32AreNamed) {
  const std::string doc = config_text();
  const std::string tail =
      " text; trainsim reads JSON in UTF-8: convert it (for example iconv -t UTF-8)";
  EXPECT_EQ(errors_of(estimate_json(utf16le(doc, true)))[0]["message"],
            "the document is UTF-16 (little-endian)" + tail);
  EXPECT_EQ(errors_of(estimate_json(utf16le(doc, false)))[0]["message"],
            "the document is UTF-16 (little-endian)" + tail);
  std::string be = "\xFE\xFF";
  for (char c : doc) be += std::string(1, '\0') + c;
  EXPECT_EQ(errors_of(estimate_json(be))[0]["message"], "the document is UTF-16 (big-endian)" + tail);
  std::string utf32 = std::string("\0\0\xFE\xFF", 4);
  for (char c : doc) utf32 += std::string(3, '\0') + c;
  EXPECT_EQ(errors_of(estimate_json(utf32))[0]["message"], "the document is UTF-32 (big-endian)" + tail);
  // A UTF-8 byte-order mark is fine.
  EXPECT_TRUE(json::parse(estimate_json("\xEF\xBB\xBF" + doc))["ok"].get<bool>());
}

// nlohmann keeps 2^63..2^64-1 unsigned; int64 readers echoed them negative.
TEST(JsonParseTest, IntegersFromTwoToThe63AreErrorsAtTheirPath) {
  json config = testing::base_config();
  config["training"]["tp"] = 9223372036854775808ULL;
  config["model"] = {{"preset", "llama3-8b"}, {"moe_layer_freq", json::array({18446744073709551615ULL})}};
  const json errors = errors_of(estimate_json(config.dump()));
  ASSERT_EQ(errors.size(), 2u) << errors.dump();
  EXPECT_EQ(errors[0]["path"], "/model/moe_layer_freq/0");
  EXPECT_EQ(errors[0]["message"],
            "integer 18446744073709551615 is beyond the 64-bit range trainsim reads (at most "
            "9223372036854775807)");
  EXPECT_EQ(errors[1]["path"], "/training/tp");
  for (const json& error : errors) {
    EXPECT_EQ(error["message"].get<std::string>().find("-9"), std::string::npos) << error;
  }
}

TEST(JsonParseTest, LargeDocumentsAreRefusedBeforeParsing) {
  const std::string big = "{\"name\":\"" + std::string(schema::kMaxDocumentBytes, 'x') + "\"}";
  const json errors = errors_of(estimate_json(big));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0]["message"], "the document is " + std::to_string(big.size()) +
                                      " bytes; trainsim reads documents of at most 4194304 bytes");
}

// 1,000 duplicate recompute modules gave one error per earlier copy (35 MB);
// 10,000 an out-of-memory internal error.
TEST(ErrorBoundsTest, DuplicateModulesAreReportedOncePerRepeatAndListsAreCapped) {
  json config = testing::base_config();
  config["training"]["recompute"] = {{"granularity", "selective"},
                                     {"modules", json::array({"core_attn", "mlp", "core_attn"})}};
  json errors = errors_of(estimate_json(config.dump()));
  ASSERT_EQ(errors.size(), 1u) << errors.dump();
  EXPECT_EQ(errors[0]["path"], "/training/recompute/modules/2");
  EXPECT_EQ(errors[0]["message"], "duplicate module");

  config["training"]["recompute"]["modules"] = std::vector<std::string>(10000, "core_attn");
  const std::string text = estimate_json(config.dump());
  EXPECT_LT(text.size(), 20000u);
  errors = errors_of(text);
  ASSERT_EQ(errors.size(), 101u);
  EXPECT_EQ(errors[99]["path"], "/training/recompute/modules/100");
  EXPECT_EQ(errors[100]["path"], "");
  EXPECT_EQ(errors[100]["message"], "and 9899 more errors (the first 100 are listed)");
}

// A 5 MB unknown key took 5 s (an edit distance per known key) and was echoed
// whole; documents now stop at 4 MiB, so the longest key is just under that.
TEST(ErrorBoundsTest, LongUnknownKeysAreCutAndGetNoHint) {
  json config = testing::base_config();
  const std::string key(3 << 20, 'k');
  config["training"][key] = 1;
  config["training"]["micro_batch_sizes"] = 1;
  const json errors = errors_of(estimate_json(config.dump()));
  ASSERT_EQ(errors.size(), 2u);
  const std::string path = errors[0]["path"];
  EXPECT_EQ(path, "/training/" + std::string(190, 'k') + "... (" + std::to_string(key.size() - 190) +
                      " more characters)");
  EXPECT_EQ(errors[0]["message"].get<std::string>().find("did you mean"), std::string::npos);
  EXPECT_EQ(errors[1]["message"], "unknown key (did you mean \"micro_batch_size\"?)");
  EXPECT_EQ(schema::closest_match(std::string(65, 'a'), {std::string(65, 'a') + "b"}), "");
}

// "2.11rc1" was read as 2.11 by sscanf.
TEST(TeVersionTest, PreReleasesAndTrailingTextAreRejected) {
  for (const char* bad : {"2.11rc1", "2.11.0rc1", "2.11junk", " 2.11", "+2.11", "2", "2.", "2..1",
                          "2.11.0.1", "100.1", "2.1000"}) {
    json config = testing::base_config();
    config["training"]["te_version"] = bad;
    const json errors = errors_of(estimate_json(config.dump()));
    ASSERT_EQ(errors.size(), 1u) << bad;
    EXPECT_EQ(errors[0]["path"], "/training/te_version") << bad;
  }
  for (const char* good : {"2.11", "2.11.0", "1.7", "2.3.100"}) {
    json config = testing::base_config();
    config["training"]["te_version"] = good;
    EXPECT_TRUE(json::parse(estimate_json(config.dump()))["ok"].get<bool>()) << good;
  }
}

TEST(TimeToTrainTest, OmittedWithoutTrainTokens) {
  json result = testing::estimate_ok(testing::base_config());
  EXPECT_FALSE(result["throughput"].contains("time_to_train_s")) << result["throughput"].dump();
  EXPECT_FALSE(result["throughput"].contains("gpu_hours_to_train"));
  json config = testing::base_config();
  config["training"]["train_tokens"] = 1e12;
  result = testing::estimate_ok(config);
  EXPECT_GT(result["throughput"]["time_to_train_s"].get<double>(), 0.0);
}

}  // namespace
}  // namespace trainsim
