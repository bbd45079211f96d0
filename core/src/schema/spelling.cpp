#include "schema/spelling.h"

#include <algorithm>

namespace trainsim::schema {
namespace {

constexpr size_t kMaxWordChars = 80;

// Lower case, without leading dashes, '_' read as '-'.
std::string normalized(std::string_view name) {
  const size_t start = name.find_first_not_of('-');
  std::string out(start == std::string_view::npos ? std::string_view() : name.substr(start));
  for (char& c : out) {
    if (c == '_') c = '-';
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

size_t allowed_edits(size_t chars) { return chars <= 5 ? 1 : chars <= 12 ? 2 : 3; }

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic-programming table: i-2, i-1 and i.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::string likely_name(std::string_view word, const std::vector<std::string>& candidates) {
  if (word.size() > kMaxWordChars) return "";
  const std::string mine = normalized(word);
  if (mine.empty()) return "";
  std::string best;
  size_t best_distance = allowed_edits(mine.size()) + 1;
  for (const std::string& candidate : candidates) {
    // The distance is at least the difference of the lengths (after the dashes).
    const size_t dashes = std::min(candidate.find_first_not_of('-'), candidate.size());
    const size_t chars = candidate.size() - dashes;
    if ((chars > mine.size() ? chars - mine.size() : mine.size() - chars) >= best_distance) continue;
    const size_t distance = edit_distance(mine, normalized(candidate));
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

}  // namespace trainsim::schema
