// parse_document: nlohmann's SAX parser (iterative, so it never recurses on
// nesting) feeding a DOM builder that checks depth and duplicate keys as the
// document is read, with a JSON pointer for each problem.
#include "schema/json_parse.h"

#include "schema/json_reader.h"

#include <cstdint>
#include <deque>
#include <limits>
#include <utility>
#include <vector>

namespace trainsim::schema {
namespace {

using nlohmann::json;

std::string shorten(std::string text, size_t max_chars) {
  if (text.size() > max_chars) text = text.substr(0, max_chars) + "...";
  return text;
}

// Builds the DOM like nlohmann's json_sax_dom_parser, but knows where it is:
// stack_[i] is an open container and keys_[i] the key being filled in it.
class DomBuilder {
 public:
  DomBuilder(json& root, std::string base, Issues& issues)
      : root_(root), base_(std::move(base)), issues_(issues) {}

  bool null() { return add(nullptr); }
  bool boolean(bool value) { return add(value); }
  bool number_integer(json::number_integer_t value) { return add(value); }
  // nlohmann keeps 2^63..2^64-1 as unsigned, which int64 readers would see as
  // negative numbers; no trainsim number comes near, so they stop here.
  bool number_unsigned(json::number_unsigned_t value) {
    if (value > static_cast<json::number_unsigned_t>(std::numeric_limits<int64_t>::max())) {
      issues_.push_back({shorten_pointer(value_pointer()),
                         "integer " + std::to_string(value) +
                             " is beyond the 64-bit range trainsim reads (at most " +
                             std::to_string(std::numeric_limits<int64_t>::max()) + ")"});
      return problem();
    }
    return add(value);
  }
  bool number_float(json::number_float_t value, const std::string&) { return add(value); }
  bool string(std::string& value) { return add(std::move(value)); }
  bool binary(json::binary_t& value) { return add(std::move(value)); }

  bool start_object(std::size_t) { return open(json::value_t::object); }
  bool start_array(std::size_t) { return open(json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(std::string& key) {
    json& object = *stack_.back();
    if (object.contains(key)) {
      issues_.push_back({shorten_pointer(pointer() + "/" + json_pointer_escape(key)),
                         "duplicate key: \"" + shorten(key, 60) +
                             "\" is given more than once in this object (each key may appear once)"});
      if (!problem()) return false;
      discarded_.emplace_back();  // the repeated value is read into a slot nobody keeps
      slot_ = &discarded_.back();
    } else {
      slot_ = &object[key];
    }
    keys_.back() = std::move(key);
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& error) {
    std::string what = error.what();
    if (error.id == 406) {  // out_of_range.406: number overflow
      const auto tag_end = what.find("] ");
      if (tag_end != std::string::npos) what = what.substr(tag_end + 2);
      issues_.push_back({base_, "invalid JSON: " + shorten(what, 80) +
                                    " (numbers must be within the range of a double)"});
      return false;
    }
    const auto at = what.find("parse error");
    if (at != std::string::npos) what = what.substr(at);
    issues_.push_back({base_, "invalid JSON at byte " + std::to_string(position) + ": " + what});
    return false;
  }

  bool stopped() const { return stopped_; }
  bool clean() const { return problems_ == 0; }

 private:
  // The pointer of the container on top of the stack.
  std::string pointer() const {
    std::string out = base_;
    for (size_t i = 0; i + 1 < stack_.size(); ++i) {
      if (stack_[i]->is_array()) {
        out += "/" + std::to_string(stack_[i]->size() - 1);
      } else {
        out += "/" + json_pointer_escape(keys_[i]);
      }
    }
    return out;
  }

  // Counts a duplicate key or out-of-range integer; after kMaxDocumentProblems
  // the document is not read further (false stops the parser).
  bool problem() {
    if (++problems_ < kMaxDocumentProblems) return true;
    issues_.push_back({base_, "too many duplicate keys or out-of-range integers: the rest of the "
                              "document is not read"});
    stopped_ = true;
    return false;
  }

  // The pointer of the value about to be placed.
  std::string value_pointer() const {
    if (stack_.empty()) return base_;
    if (stack_.back()->is_array()) return pointer() + "/" + std::to_string(stack_.back()->size());
    return pointer() + "/" + json_pointer_escape(keys_.back());
  }

  template <typename Value>
  json* place(Value&& value) {
    if (stack_.empty()) {
      root_ = json(std::forward<Value>(value));
      return &root_;
    }
    json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.emplace_back(std::forward<Value>(value));
      return &parent.back();
    }
    *slot_ = json(std::forward<Value>(value));
    return slot_;
  }

  template <typename Value>
  bool add(Value&& value) {
    place(std::forward<Value>(value));
    return true;
  }

  bool open(json::value_t type) {
    json* container = place(type);
    stack_.push_back(container);
    keys_.emplace_back();
    if (stack_.size() > kMaxJsonDepth) {
      issues_.push_back({shorten_pointer(pointer()),
                         "nesting deeper than " + std::to_string(kMaxJsonDepth) +
                             " levels of arrays and objects: the document is not read further"});
      stopped_ = true;
      return false;
    }
    return true;
  }

  bool close() {
    stack_.pop_back();
    keys_.pop_back();
    return true;
  }

  json& root_;
  std::string base_;
  Issues& issues_;
  std::vector<json*> stack_;
  std::vector<std::string> keys_;
  json* slot_ = nullptr;
  std::deque<json> discarded_;  // stable addresses while a repeated value is read
  size_t problems_ = 0;
  bool stopped_ = false;
};

// RFC 8259 sec. 8.1 asks for UTF-8; RFC 4627 sec. 3 tells the other encodings
// apart by their byte-order mark or by where the zero bytes of the first two
// (ASCII) characters fall.
std::string foreign_encoding(std::string_view text) {
  auto at = [&](size_t i) { return i < text.size() ? static_cast<unsigned char>(text[i]) : 0x100; };
  if (at(0) == 0x00 && at(1) == 0x00 && at(2) == 0xFE && at(3) == 0xFF) return "UTF-32 (big-endian)";
  if (at(0) == 0xFF && at(1) == 0xFE && at(2) == 0x00 && at(3) == 0x00) return "UTF-32 (little-endian)";
  if (at(0) == 0xFE && at(1) == 0xFF) return "UTF-16 (big-endian)";
  if (at(0) == 0xFF && at(1) == 0xFE) return "UTF-16 (little-endian)";
  if (text.size() >= 4 && at(0) == 0 && at(1) == 0 && at(2) == 0 && at(3) != 0) return "UTF-32 (big-endian)";
  if (text.size() >= 4 && at(0) != 0 && at(1) == 0 && at(2) == 0 && at(3) == 0) return "UTF-32 (little-endian)";
  if (text.size() >= 2 && at(0) == 0 && at(1) != 0) return "UTF-16 (big-endian)";
  if (text.size() >= 2 && at(0) != 0 && at(1) == 0) return "UTF-16 (little-endian)";
  return "";
}

}  // namespace

std::string excerpt(std::string_view text, size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  return std::string(text.substr(0, max_chars)) + "...";
}

std::string shorten_pointer(const std::string& pointer, size_t max_chars) {
  if (pointer.size() <= max_chars) return pointer;
  // Already shortened (a reader cut it, the envelope passes it through).
  static constexpr std::string_view kTail = " more characters)";
  if (pointer.compare(max_chars, 5, "... (") == 0 && pointer.size() < max_chars + 40 &&
      pointer.compare(pointer.size() - kTail.size(), kTail.size(), kTail) == 0) {
    return pointer;
  }
  return pointer.substr(0, max_chars) + "... (" + std::to_string(pointer.size() - max_chars) +
         " more characters)";
}

bool parse_document(std::string_view text, const std::string& path, json& out, Issues& issues) {
  out = json();
  if (text.size() > kMaxDocumentBytes) {
    issues.push_back({path, "the document is " + std::to_string(text.size()) +
                                " bytes; trainsim reads documents of at most " +
                                std::to_string(kMaxDocumentBytes) + " bytes"});
    return false;
  }
  if (const std::string encoding = foreign_encoding(text); !encoding.empty()) {
    issues.push_back({path, "the document is " + encoding +
                                " text; trainsim reads JSON in UTF-8: convert it (for example "
                                "iconv -t UTF-8)"});
    return false;
  }
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    issues.push_back({path, "invalid JSON at byte " + std::to_string(nul + 1) +
                                ": a NUL byte (JSON text cannot contain one; inside a string "
                                "write \\u0000)"});
    return false;
  }
  const size_t issues_before = issues.size();
  DomBuilder builder(out, path, issues);
  const bool parsed = json::sax_parse(text.begin(), text.end(), &builder);
  if (!parsed || !builder.clean() || issues.size() != issues_before) {
    out = json();  // a partial document is never read
    return false;
  }
  return true;
}

}  // namespace trainsim::schema
