// --moe-layer-freq (Megatron-LM arguments.py moe_freq_type / _eval_pattern):
// an int N means layer i is MoE iff i % N == 0; a string with '[' is a Python
// expression over int lists, '*' and '+' (characters [,\d\[\]\(\)\+\*] only),
// one 0 (dense) / 1 (MoE) entry per layer. trainsim models dense layers only
// as a leading block (DeepSeek's first_k_dense_replace).
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "interop/megatron/megatron_import.h"

namespace trainsim::interop {
namespace {

constexpr size_t kMaxPatternLength = 1'000'000;

// Recursive-descent evaluator: expr := term ('+' term)*, term := atom ('*' atom)*,
// atom := INT | '[' INT (',' INT)* ']' | '(' expr ')'. A value is an int or a list.
class PatternEvaluator {
 public:
  explicit PatternEvaluator(const std::string& text) : text_(text) {}

  std::optional<std::vector<int64_t>> run() {
    Value value;
    if (!expr(value) || pos_ != text_.size() || !value.is_list) return std::nullopt;
    return value.list;
  }

 private:
  struct Value {
    bool is_list = false;
    int64_t number = 0;
    std::vector<int64_t> list;
  };

  bool expr(Value& out) {
    if (!term(out)) return false;
    while (pos_ < text_.size() && text_[pos_] == '+') {
      ++pos_;
      Value rhs;
      if (!term(rhs) || rhs.is_list != out.is_list) return false;
      if (out.is_list) {
        if (out.list.size() + rhs.list.size() > kMaxPatternLength) return false;
        out.list.insert(out.list.end(), rhs.list.begin(), rhs.list.end());
      } else {
        out.number += rhs.number;
      }
    }
    return true;
  }

  bool term(Value& out) {
    if (!atom(out)) return false;
    while (pos_ < text_.size() && text_[pos_] == '*') {
      ++pos_;
      Value rhs;
      if (!atom(rhs) || (out.is_list && rhs.is_list)) return false;
      const int64_t times = out.is_list ? rhs.number : out.number;
      std::vector<int64_t> items = out.is_list ? out.list : rhs.list;
      if (!out.is_list && !rhs.is_list) {
        out.number *= rhs.number;
        continue;
      }
      if (times < 0 || items.size() * static_cast<size_t>(times) > kMaxPatternLength) return false;
      out.is_list = true;
      out.list.clear();
      for (int64_t i = 0; i < times; ++i) out.list.insert(out.list.end(), items.begin(), items.end());
    }
    return true;
  }

  bool atom(Value& out) {
    if (pos_ >= text_.size()) return false;
    if (text_[pos_] == '(') {
      if (++depth_ > kMaxDepth) return false;
      ++pos_;
      if (!expr(out) || pos_ >= text_.size() || text_[pos_] != ')') return false;
      ++pos_;
      --depth_;
      return true;
    }
    if (text_[pos_] == '[') {
      ++pos_;
      out.is_list = true;
      while (pos_ < text_.size() && text_[pos_] != ']') {
        int64_t item = 0;
        if (!integer(item)) return false;
        out.list.push_back(item);
        if (pos_ < text_.size() && text_[pos_] == ',') ++pos_;
      }
      if (pos_ >= text_.size()) return false;
      ++pos_;
      return true;
    }
    return integer(out.number);
  }

  bool integer(int64_t& out) {
    const size_t start = pos_;
    out = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) &&
           pos_ - start < 9) {
      out = out * 10 + (text_[pos_++] - '0');
    }
    return pos_ > start;
  }

  static constexpr int kMaxDepth = 64;  ///< nesting of parentheses (bounds the recursion)

  const std::string& text_;
  size_t pos_ = 0;
  int depth_ = 0;
};

const char* const kExample = "\"([0]*3+[1]*58)\"";

}  // namespace

int64_t leading_dense_layers(FlagReader& r, int64_t num_layers) {
  const char* name = "--moe-layer-freq";
  const auto text = r.text(name);
  if (!text) return r.has(name) ? -1 : 0;
  std::vector<int64_t> pattern;
  if (text->find('[') == std::string::npos) {
    const auto every = r.integer(name, 1, num_layers);
    if (!every) return -1;
    if (*every == 1 || num_layers == 1) return 0;
    r.error(name, std::to_string(*every) + " (one MoE layer every " + std::to_string(*every) +
                      " layers) is not supported: trainsim models leading dense layers followed "
                      "by MoE layers, e.g. " + kExample);
    return -1;
  }
  const auto evaluated = PatternEvaluator(*text).run();
  if (!evaluated) {
    r.error(name, "expected a list expression of 0s and 1s such as " + std::string(kExample) +
                      ", got \"" + *text + "\"");
    return -1;
  }
  pattern = *evaluated;
  if (static_cast<int64_t>(pattern.size()) != num_layers) {
    r.error(name, "has " + std::to_string(pattern.size()) + " entries, expected one per layer (" +
                      std::to_string(num_layers) + ")");
    return -1;
  }
  int64_t dense = 0;
  while (dense < num_layers && pattern[static_cast<size_t>(dense)] == 0) ++dense;
  for (int64_t i = dense; i < num_layers; ++i) {
    if (pattern[static_cast<size_t>(i)] != 1) {
      r.error(name, "layer " + std::to_string(i) + " is " +
                        (pattern[static_cast<size_t>(i)] == 0 ? "dense after MoE layers"
                                                              : "neither 0 nor 1") +
                        ": trainsim models leading dense layers followed by MoE layers, e.g. " +
                        kExample);
      return -1;
    }
  }
  if (dense == num_layers) {
    r.error(name, "has no MoE layer (all entries are 0)");
    return -1;
  }
  return dense;
}

}  // namespace trainsim::interop
