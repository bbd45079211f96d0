// --moe-layer-freq (Megatron-LM arguments.py moe_freq_type / _eval_pattern):
// an int N means layer i is MoE iff i % N == 0; a string with '[' is a Python
// expression over int lists, '*' and '+' (characters [,\d\[\]\(\)\+\*] only),
// one 0 (dense) / 1 (MoE) entry per layer.
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// Fills moe["num_dense_layers"] (a leading dense block, DeepSeek's
// first_k_dense_replace) or moe["moe_layer_freq"] (any other 0/1 pattern, e.g.
// Llama-4 Maverick's "([0,1]*24)"). False after an error.
bool read_moe_layer_freq(FlagReader& r, int64_t num_layers, nlohmann::json& moe) {
  const char* name = "--moe-layer-freq";
  moe["num_dense_layers"] = 0;
  const auto text = r.text(name);
  if (!text) return !r.has(name);
  std::vector<int64_t> pattern;
  if (text->find('[') == std::string::npos) {
    // moe_freq_type: an int N; gpt_layer_specs.py: layer i is MoE iff i % N == 0.
    const auto every = r.integer(name, 1, num_layers);
    if (!every) return false;
    if (*every == 1) return true;
    for (int64_t i = 0; i < num_layers; ++i) pattern.push_back(i % *every == 0 ? 1 : 0);
  } else {
    const auto evaluated = PatternEvaluator(*text).run();
    if (!evaluated) {
      r.error(name, "expected a list expression of 0s and 1s such as " + std::string(kExample) +
                        ", got \"" + *text + "\"");
      return false;
    }
    pattern = *evaluated;
  }
  if (static_cast<int64_t>(pattern.size()) != num_layers) {
    r.error(name, "has " + std::to_string(pattern.size()) + " entries, expected one per layer (" +
                      std::to_string(num_layers) + ")");
    return false;
  }
  int64_t moe_layers = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != 0 && pattern[i] != 1) {
      r.error(name, "layer " + std::to_string(i) + " is neither 0 nor 1");
      return false;
    }
    moe_layers += pattern[i];
  }
  if (moe_layers == 0) {
    r.error(name, "has no MoE layer (all entries are 0)");
    return false;
  }
  int64_t dense = 0;
  while (pattern[static_cast<size_t>(dense)] == 0) ++dense;
  if (dense + moe_layers == num_layers) {
    moe["num_dense_layers"] = dense;
  } else {
    moe["moe_layer_freq"] = pattern;
  }
  return true;
}

}  // namespace trainsim::interop
