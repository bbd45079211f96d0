// Megatron-LM's --pipeline-model-parallel-layout grammar
// (megatron/core/transformer/pipeline_parallel_layer_layout.py,
// PipelineParallelLayerLayout.parse_str_to_list): commas are removed, then
// r'\(([^)]+)\)\*(\d+)' and r'(.)\*(\d+)' are unrolled by re.sub (leftmost,
// non-overlapping, one pass each), then the text is split at '|' into stages
// of 'E', 't', 'm', 'L'.
#include <cctype>
#include <string>

#include "input_limits.h"
#include "model/pipeline_layout.h"

namespace trainsim {
namespace {

// Unrolled text longer than this is refused (4 characters per layer is plenty).
constexpr size_t kMaxUnrolledChars = 4 * static_cast<size_t>(kMaxLayers) + 4096;

// Reads \d+ at text[pos...]; npos when none. A count beyond the unroll limit
// saturates (the caller then fails on the length).
size_t read_count(const std::string& text, size_t pos, size_t& end) {
  size_t count = 0;
  end = pos;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) != 0) {
    count = std::min(count * 10 + static_cast<size_t>(text[end] - '0'), kMaxUnrolledChars + 1);
    ++end;
  }
  return end == pos ? std::string::npos : count;
}

bool append_repeated(std::string& out, const std::string& item, size_t times) {
  if (times > 0 && item.size() > (kMaxUnrolledChars - out.size()) / times) return false;
  for (size_t i = 0; i < times; ++i) out += item;
  return true;
}

// One re.sub pass. group_pattern: r'\(([^)]+)\)\*(\d+)', else r'(.)\*(\d+)'.
bool unroll(const std::string& text, bool group_pattern, std::string& out) {
  out.clear();
  size_t i = 0;
  while (i < text.size()) {
    size_t item_end = std::string::npos;  // one past the repeated item (at the '*')
    std::string item;
    if (group_pattern && text[i] == '(') {
      const size_t close = text.find(')', i + 1);
      if (close != std::string::npos && close > i + 1) {
        item = text.substr(i + 1, close - i - 1);
        item_end = close + 1;
      }
    } else if (!group_pattern) {
      item = text.substr(i, 1);
      item_end = i + 1;
    }
    size_t end = 0;
    if (item_end != std::string::npos && item_end < text.size() && text[item_end] == '*') {
      const size_t times = read_count(text, item_end + 1, end);
      if (times != std::string::npos) {
        if (!append_repeated(out, item, times)) return false;
        i = end;
        continue;
      }
    }
    if (out.size() >= kMaxUnrolledChars) return false;
    out += text[i++];
  }
  return true;
}

std::string stage_text(const LayoutStage& s) {
  auto run = [](char c, int64_t n) {
    if (n == 0) return std::string();
    return n == 1 ? std::string(1, c) : std::string(1, c) + "*" + std::to_string(n);
  };
  return (s.embedding ? "E" : "") + run('t', s.decoder_layers) + run('m', s.mtp_layers) +
         (s.loss ? "L" : "");
}

}  // namespace

std::optional<std::vector<LayoutStage>> parse_pipeline_layout(std::string_view text,
                                                              std::string* error) {
  auto fail = [&](const std::string& message) {
    if (error != nullptr) *error = message;
    return std::optional<std::vector<LayoutStage>>();
  };
  if (text.size() > kMaxUnrolledChars) return fail("is too long");
  std::string plain;
  for (const char c : text) {
    if (c != ',') plain += c;
  }
  std::string grouped, unrolled;
  if (!unroll(plain, true, grouped) || !unroll(grouped, false, unrolled)) {
    return fail("unrolls to more than " + std::to_string(kMaxUnrolledChars) + " characters");
  }
  std::vector<LayoutStage> stages(1);
  // Order inside the model: E first, t before m, L last (validate_layer_layout);
  // so within a stage E, t..., m..., L.
  int rank_in_stage = 0;  // 0 start, 1 after E, 2 after t, 3 after m, 4 after L
  for (const char c : unrolled) {
    LayoutStage& s = stages.back();
    int rank = 0;
    switch (c) {
      case '|':
        stages.emplace_back();
        rank_in_stage = 0;
        continue;
      case 'E':
        s.embedding = true;
        rank = 1;
        break;
      case 't':
        ++s.decoder_layers;
        rank = 2;
        break;
      case 'm':
        ++s.mtp_layers;
        rank = 3;
        break;
      case 'L':
        s.loss = true;
        rank = 4;
        break;
      default:
        return fail(std::string("invalid character '") + c +
                    "' (known: E embedding, t decoder layer, m MTP layer, L loss, | stage "
                    "separator, (...)*n and x*n repeats)");
    }
    if (rank < rank_in_stage || (rank == rank_in_stage && (rank == 1 || rank == 4))) {
      return fail(std::string("'") + c +
                  "' is out of order: the embedding comes first, decoder layers before MTP "
                  "layers, the loss last, each of E and L once");
    }
    rank_in_stage = rank;
  }
  return stages;
}

std::string format_pipeline_layout(const std::vector<LayoutStage>& stages) {
  std::string out;
  size_t i = 0;
  while (i < stages.size()) {
    size_t same = 1;
    while (i + same < stages.size() && stages[i + same] == stages[i]) ++same;
    const bool last_run = i + same == stages.size();
    const std::string text = stage_text(stages[i]);
    // "(s|)*n" ends with a separator: the final run keeps its last stage apart.
    const size_t folded = last_run ? same - 1 : same;
    if (folded >= 2 && !text.empty()) {
      out += "(" + text + "|)*" + std::to_string(folded);
    } else {
      for (size_t k = 0; k < folded; ++k) out += text + "|";
    }
    if (last_run) out += text;
    i += same;
  }
  return out;
}

}  // namespace trainsim
