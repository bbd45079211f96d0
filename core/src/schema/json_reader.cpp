#include "schema/json_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "schema/spelling.h"

namespace trainsim::schema {
namespace {

std::string shorten(std::string text, size_t max_chars) {
  if (text.size() > max_chars) text = text.substr(0, max_chars) + "...";
  return text;
}

}  // namespace

std::string describe_json_value(const nlohmann::json& value) {
  using nlohmann::json;
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return std::string("boolean ") + (value.get<bool>() ? "true" : "false");
    case json::value_t::string:
      return "string " + shorten(value.dump(), 40);
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "number " + shorten(value.dump(), 40);
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    default:
      return "unsupported value";
  }
}

std::string dump(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string format_number(double value, int significant_digits) {
  char text[40];
  std::snprintf(text, sizeof text, "%.*g", significant_digits, value);
  return text;
}

std::string json_pointer_escape(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  // No key is this long: a hint would cost an edit distance over the whole word.
  if (word.size() > kMaxHintedWordChars) return "";
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const auto& candidate : candidates) {
    // A key that is a prefix of a known one ("micro_batch") is almost surely it.
    if (word.size() >= 4 && candidate.rfind(word, 0) == 0) return candidate;
    const size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

ObjectReader::ObjectReader(const nlohmann::json& value, std::string path, Issues& issues)
    : path_(std::move(path)), issues_(issues) {
  if (value.is_object()) {
    object_ = &value;
  } else {
    issues_.push_back({path_, "expected object, got " + describe_json_value(value)});
  }
}

bool ObjectReader::has(const char* key) const {
  return object_ != nullptr && object_->contains(key);
}

void ObjectReader::add_issue(const char* key, std::string message) {
  issues_.push_back({path_of(key), std::move(message)});
}

const nlohmann::json* ObjectReader::raw(const char* key) {
  known_.insert(key);
  if (object_ == nullptr) return nullptr;
  const auto it = object_->find(key);
  if (it == object_->end()) return nullptr;
  return &*it;
}

std::optional<int64_t> ObjectReader::optional_int(const char* key, int64_t min_value,
                                                  int64_t max_value) {
  const nlohmann::json* value = raw(key);
  if (value == nullptr) return std::nullopt;
  int64_t result = 0;
  if (value->is_number_integer()) {
    result = value->get<int64_t>();
  } else if (value->is_number_unsigned()) {
    add_issue(key, "must be at most " + std::to_string(max_value) + ", got " + value->dump());
    return std::nullopt;
  } else {
    add_issue(key, "expected integer, got " + describe_json_value(*value));
    return std::nullopt;
  }
  if (result < min_value) {
    add_issue(key, "must be at least " + std::to_string(min_value) + ", got " + std::to_string(result));
    return std::nullopt;
  }
  if (result > max_value) {
    add_issue(key, "must be at most " + std::to_string(max_value) + ", got " + std::to_string(result));
    return std::nullopt;
  }
  return result;
}

int64_t ObjectReader::required_int(const char* key, int64_t min_value, int64_t max_value) {
  if (ok() && !has(key)) {
    raw(key);
    add_issue(key, "missing required key");
    return min_value;
  }
  return optional_int(key, min_value, max_value).value_or(min_value);
}

int64_t ObjectReader::int_or(const char* key, int64_t default_value, int64_t min_value,
                             int64_t max_value) {
  const bool present = has(key);
  const auto value = optional_int(key, min_value, max_value);
  if (value) return *value;
  return present ? min_value : default_value;
}

std::optional<double> ObjectReader::optional_number(const char* key, double min_value,
                                                    double max_value, bool min_exclusive) {
  const nlohmann::json* value = raw(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_number()) {
    add_issue(key, "expected number, got " + describe_json_value(*value));
    return std::nullopt;
  }
  const double result = value->get<double>();
  if (!std::isfinite(result)) {
    add_issue(key, "expected a finite number, got " + value->dump());
    return std::nullopt;
  }
  if (min_exclusive ? result <= min_value : result < min_value) {
    add_issue(key, std::string(min_exclusive ? "must be greater than " : "must be at least ") +
                       format_number(min_value) + ", got " + format_number(result));
    return std::nullopt;
  }
  if (result > max_value) {
    add_issue(key, "must be at most " + format_number(max_value) + ", got " + format_number(result));
    return std::nullopt;
  }
  return result;
}

double ObjectReader::required_number(const char* key, double min_value, double max_value,
                                     bool min_exclusive) {
  if (ok() && !has(key)) {
    raw(key);
    add_issue(key, "missing required key");
    return min_value;
  }
  return optional_number(key, min_value, max_value, min_exclusive).value_or(min_value);
}

double ObjectReader::number_or(const char* key, double default_value, double min_value,
                               double max_value, bool min_exclusive) {
  const bool present = has(key);
  const auto value = optional_number(key, min_value, max_value, min_exclusive);
  if (value) return *value;
  return present ? min_value : default_value;
}

std::optional<bool> ObjectReader::optional_bool(const char* key) {
  const nlohmann::json* value = raw(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) {
    add_issue(key, "expected boolean, got " + describe_json_value(*value));
    return std::nullopt;
  }
  return value->get<bool>();
}

bool ObjectReader::bool_or(const char* key, bool default_value) {
  return optional_bool(key).value_or(default_value);
}

std::optional<std::string> ObjectReader::optional_string(const char* key) {
  const nlohmann::json* value = raw(key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) {
    add_issue(key, "expected string, got " + describe_json_value(*value));
    return std::nullopt;
  }
  return value->get<std::string>();
}

namespace {

// "\"a\", \"b\", ..." of the first `max_listed` words.
std::string quoted_list(const std::vector<std::string>& words, size_t max_listed) {
  std::string list;
  for (size_t i = 0; i < words.size() && i < max_listed; ++i) {
    list += (list.empty() ? "\"" : ", \"") + words[i] + "\"";
  }
  return list;
}

// "one of \"a\", \"b\", ..." naming the keys an object accepts (sorted; long
// lists end with how many more there are).
std::string expected_keys(const std::vector<std::string>& known) {
  constexpr size_t kMaxListed = 12;
  std::string list = quoted_list(known, kMaxListed);
  if (known.size() > kMaxListed) {
    list += " and " + std::to_string(known.size() - kMaxListed) + " more (README: Config reference)";
  }
  return known.size() == 1 ? list : "one of " + list;
}

}  // namespace

std::optional<size_t> ObjectReader::optional_enum(const char* key,
                                                  const std::vector<std::string>& allowed) {
  const auto text = optional_string(key);
  if (!text) return std::nullopt;
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (allowed[i] == *text) return i;
  }
  add_issue(key, "expected one of " + quoted_list(allowed, allowed.size()) + ", got \"" +
                     shorten(*text, 40) + "\"");
  return std::nullopt;
}

size_t ObjectReader::enum_or(const char* key, const std::vector<std::string>& allowed,
                             size_t default_index) {
  return optional_enum(key, allowed).value_or(default_index);
}

void ObjectReader::finish() {
  if (object_ == nullptr) return;
  const std::vector<std::string> known(known_.begin(), known_.end());
  // Hints cost an edit distance per known key: only the first few unknown keys get one.
  constexpr size_t kMaxHinted = 20;
  size_t unknown = 0;
  for (const auto& [key, value] : object_->items()) {
    if (known_.count(key) != 0) continue;
    const std::string hint = ++unknown <= kMaxHinted ? closest_match(key, known) : "";
    std::string message = "unknown key";
    if (!hint.empty()) {
      message += " (did you mean \"" + hint + "\"?)";
    } else if (!known.empty() && unknown <= kMaxHinted) {
      message += "; expected " + expected_keys(known);
    }
    issues_.push_back({shorten_pointer(path_ + "/" + json_pointer_escape(key)), message});
  }
}

}  // namespace trainsim::schema
