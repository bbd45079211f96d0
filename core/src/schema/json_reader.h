// Strict, issue-collecting reader over one JSON object. Every accessor records
// the key as known; finish() reports the keys nobody asked for as unknown.
// Wrong types, missing keys and out-of-range values become Issues with a
// JSON-pointer path; nothing is thrown and nothing is silently defaulted
// beyond the defaults the caller documents.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schema/json_parse.h"
#include "trainsim/issue.h"

namespace trainsim::schema {

std::string describe_json_value(const nlohmann::json& value);

std::string json_pointer_escape(const std::string& key);

// Serializes without throwing on invalid UTF-8 (replaced by U+FFFD).
std::string dump(const nlohmann::json& value, int indent = -1);

class ObjectReader {
 public:
  // Reports an issue (and reads nothing) if `value` is not an object.
  ObjectReader(const nlohmann::json& value, std::string path, Issues& issues);

  bool ok() const { return object_ != nullptr; }
  bool has(const char* key) const;
  std::string path_of(const char* key) const { return path_ + "/" + json_pointer_escape(key); }
  const nlohmann::json* raw(const char* key);  ///< marks the key known; null if absent
  Issues& issues() { return issues_; }

  std::optional<int64_t> optional_int(const char* key, int64_t min_value, int64_t max_value);
  int64_t required_int(const char* key, int64_t min_value, int64_t max_value);
  int64_t int_or(const char* key, int64_t default_value, int64_t min_value, int64_t max_value);

  std::optional<double> optional_number(const char* key, double min_value, double max_value,
                                        bool min_exclusive);
  double required_number(const char* key, double min_value, double max_value, bool min_exclusive);
  double number_or(const char* key, double default_value, double min_value, double max_value,
                   bool min_exclusive);

  std::optional<bool> optional_bool(const char* key);
  bool bool_or(const char* key, bool default_value);

  std::optional<std::string> optional_string(const char* key);

  // An enumerated string: returns the index into `allowed`.
  std::optional<size_t> optional_enum(const char* key, const std::vector<std::string>& allowed);
  size_t enum_or(const char* key, const std::vector<std::string>& allowed, size_t default_index);

  // Reports every key that no accessor asked for, with a did-you-mean hint.
  void finish();

 private:
  void add_issue(const char* key, std::string message);

  const nlohmann::json* object_ = nullptr;
  std::string path_;
  Issues& issues_;
  std::set<std::string> known_;
};

// Closest candidate by edit distance, or "" when nothing is close (always ""
// for a word longer than kMaxHintedWordChars).
inline constexpr size_t kMaxHintedWordChars = 64;
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace trainsim::schema
