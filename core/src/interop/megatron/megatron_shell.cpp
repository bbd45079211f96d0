// Bash word lexer: what bash sees before it expands anything.
#include "interop/megatron/megatron_shell.h"

#include <algorithm>
#include <utility>

namespace trainsim::interop {
namespace {

class Lexer {
 public:
  Lexer(std::string_view text, Issues& issues) : text_(text), issues_(issues) {}

  bool run(std::vector<ShellWord>& words) {
    out_ = &words;
    while (pos_ < text_.size()) {
      if (!step()) return false;
    }
    end_word();
    return true;
  }

 private:
  bool step() {
    const char c = text_[pos_];
    if (c == '\\') {
      if (peek(1) == '\n' || (peek(1) == '\r' && peek(2) == '\n')) {
        pos_ += peek(1) == '\n' ? 2 : 3;
        ++line_;
      } else {
        if (pos_ + 1 < text_.size()) literal(text_[pos_ + 1], false);
        pos_ += 2;
      }
      return true;
    }
    if (c == '\n') {
      separator("\n");
      ++line_;
      ++pos_;
      skip_heredoc_bodies();
      return true;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      end_word();
      ++pos_;
      return true;
    }
    if (c == '#' && !in_word_) {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      return true;
    }
    if (c == ';' || c == '&' || c == '|' || c == '<' || c == '>') {
      if ((c == '<' || c == '>') && is_fd_number()) {  // "2>&1": the 2 is a descriptor
        current_ = ShellWord{};
        in_word_ = false;
      }
      if (c == '<' && peek(1) == '<' && peek(2) != '<') return heredoc();
      const bool doubled = c != '<' && c != '>' && peek(1) == c;
      separator(std::string(doubled ? 2 : 1, c));
      pos_ += doubled ? 2 : 1;
      return true;
    }
    if (c == '\'') return single_quoted();
    if (c == '"') return double_quoted();
    if (c == '`') return backquoted();
    if (c == '$') return dollar(false);
    literal(c, false);
    ++pos_;
    return true;
  }

  bool is_fd_number() const {
    if (!in_word_ || current_.segments.size() != 1) return false;
    const ShellSegment& s = current_.segments[0];
    if (s.kind != ShellSegment::Kind::kLiteral || s.quoted || s.text.empty()) return false;
    for (char c : s.text) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    }
    return true;
  }

  char peek(size_t ahead) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  void end_word() {
    if (in_word_) out_->push_back(current_);
    current_ = ShellWord{};
    in_word_ = false;
  }

  // Runs of separators collapse into one; "a &&\n b" keeps its "&&" (bash
  // continues the list on the next line).
  void separator(const std::string& op) {
    end_word();
    if (out_->empty()) return;
    ShellWord& last = out_->back();
    if (last.separator) {
      if (last.op != "&&" && last.op != "||" && last.op != "|" && last.op != ";;") last.op = op;
      return;
    }
    ShellWord sep;
    sep.separator = true;
    sep.op = op;
    sep.line = line_;
    out_->push_back(sep);
  }

  // "<<WORD" or "<<-WORD" (WORD possibly quoted): the body starts on the next
  // line and ends at a line that is exactly WORD (leading tabs removed for <<-).
  bool heredoc() {
    pos_ += 2;
    const bool strip_tabs = peek(0) == '-';
    if (strip_tabs) ++pos_;
    while (peek(0) == ' ' || peek(0) == '\t') ++pos_;
    std::string delimiter;
    while (pos_ < text_.size() && std::string_view(" \t\r\n;&|<>()").find(text_[pos_]) == std::string_view::npos) {
      const char c = text_[pos_++];
      if (c != '\'' && c != '"' && c != '\\') delimiter += c;
    }
    separator("<");
    if (!delimiter.empty()) heredocs_.push_back({delimiter, strip_tabs});
    return true;
  }

  void skip_heredoc_bodies() {
    for (const auto& [delimiter, strip_tabs] : heredocs_) {
      while (pos_ < text_.size()) {
        size_t end = text_.find('\n', pos_);
        if (end == std::string_view::npos) end = text_.size();
        std::string_view line = text_.substr(pos_, end - pos_);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        while (strip_tabs && !line.empty() && line.front() == '\t') line.remove_prefix(1);
        pos_ = std::min(end + 1, text_.size());
        ++line_;
        if (line == delimiter) break;
      }
    }
    heredocs_.clear();
  }

  void start_word() {
    if (!in_word_) current_.line = line_;
    in_word_ = true;
  }

  void literal(char c, bool quoted) {
    start_word();
    if (c == '\n') ++line_;
    auto& segments = current_.segments;
    if (segments.empty() || segments.back().kind != ShellSegment::Kind::kLiteral ||
        segments.back().quoted != quoted) {
      segments.push_back({ShellSegment::Kind::kLiteral, "", "", "", "", false, quoted});
    }
    segments.back().text += c;
    segments.back().raw += c;
  }

  bool fail(const std::string& what, int line) {
    issues_.push_back({"/args", what + " (line " + std::to_string(line) + ")"});
    return false;
  }

  bool single_quoted() {
    const int line = line_;
    const size_t end = text_.find('\'', pos_ + 1);
    if (end == std::string_view::npos) return fail("unterminated single quote", line);
    start_word();
    current_.segments.push_back({ShellSegment::Kind::kLiteral, "", "", "", "", false, true});
    for (size_t i = pos_ + 1; i < end; ++i) literal(text_[i], true);
    pos_ = end + 1;
    return true;
  }

  bool double_quoted() {
    const int line = line_;
    start_word();
    current_.segments.push_back({ShellSegment::Kind::kLiteral, "", "", "", "", false, true});
    ++pos_;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      const char c = text_[pos_];
      if (c == '\\' && std::string_view("$`\"\\\n").find(peek(1)) != std::string_view::npos &&
          peek(1) != '\0') {
        if (peek(1) == '\n') {
          ++line_;
        } else {
          literal(peek(1), true);
        }
        pos_ += 2;
      } else if (c == '$') {
        if (!dollar(true)) return false;
      } else if (c == '`') {
        if (!backquoted()) return false;
      } else {
        literal(c, true);
        ++pos_;
      }
    }
    if (pos_ >= text_.size()) return fail("unterminated double quote", line);
    ++pos_;
    return true;
  }

  bool backquoted() {
    const int line = line_;
    const size_t end = text_.find('`', pos_ + 1);
    if (end == std::string_view::npos) return fail("unterminated backquote", line);
    computed(std::string(text_.substr(pos_, end + 1 - pos_)), false);
    pos_ = end + 1;
    return true;
  }

  void computed(const std::string& raw, bool quoted) {
    start_word();
    for (char c : raw) {
      if (c == '\n') ++line_;
    }
    current_.segments.push_back({ShellSegment::Kind::kComputed, raw, raw, "", "", false, quoted});
  }

  // Finds the bracket closing the one at `open`, counting nesting.
  size_t closing(size_t open, char open_char, char close_char) const {
    int depth = 0;
    for (size_t i = open; i < text_.size(); ++i) {
      if (text_[i] == open_char) ++depth;
      if (text_[i] == close_char && --depth == 0) return i;
    }
    return std::string_view::npos;
  }

  bool dollar(bool quoted) {
    const char next = peek(1);
    if (next == '{' || next == '(') {
      const size_t end = closing(pos_ + 1, next, next == '{' ? '}' : ')');
      if (end == std::string_view::npos) {
        return fail(std::string("unterminated $") + next, line_);
      }
      const std::string raw(text_.substr(pos_, end + 1 - pos_));
      pos_ = end + 1;
      if (next == '(') {
        computed(raw, quoted);
        return true;
      }
      braced(raw, quoted);
      return true;
    }
    if (is_name_start(next)) {
      size_t end = pos_ + 1;
      while (end < text_.size() && is_name_char(text_[end])) ++end;
      start_word();
      const std::string name(text_.substr(pos_ + 1, end - pos_ - 1));
      current_.segments.push_back({ShellSegment::Kind::kVariable, name, "$" + name, "", "", false, quoted});
      pos_ = end;
      return true;
    }
    if (next != '\0' && std::string_view("0123456789@*#?$!-").find(next) != std::string_view::npos) {
      computed(std::string(text_.substr(pos_, 2)), quoted);
      pos_ += 2;
      return true;
    }
    literal('$', quoted);
    ++pos_;
    return true;
  }

  // ${NAME}, ${NAME:-fallback} or ${NAME-fallback}; anything else is computed.
  void braced(const std::string& raw, bool quoted) {
    const std::string body = raw.substr(2, raw.size() - 3);
    size_t end = 0;
    while (end < body.size() && is_name_char(body[end])) ++end;
    if (end == 0 || !is_name_start(body[0])) {
      computed(raw, quoted);
      return;
    }
    ShellSegment segment{ShellSegment::Kind::kVariable, body.substr(0, end), raw, "", "", false, quoted};
    const std::string rest = body.substr(end);
    if (rest.size() >= 3 && rest.front() == '[' && rest.back() == ']' &&
        rest.find(']') == rest.size() - 1) {
      segment.subscript = rest.substr(1, rest.size() - 2);  // ${NAME[@]}, ${NAME[0]}
    } else if (rest.rfind(":-", 0) == 0 || rest.rfind("-", 0) == 0) {
      segment.fallback = rest.substr(rest[0] == ':' ? 2 : 1);
      const size_t n = segment.fallback.size();
      if (n >= 2 && (segment.fallback[0] == '"' || segment.fallback[0] == '\'') &&
          segment.fallback[n - 1] == segment.fallback[0]) {
        segment.fallback = segment.fallback.substr(1, n - 2);  // ${NAME:-"value"}
      }
      segment.has_fallback = segment.fallback.find('$') == std::string::npos;
      if (!segment.has_fallback) segment.kind = ShellSegment::Kind::kComputed;
    } else if (!rest.empty()) {
      segment.kind = ShellSegment::Kind::kComputed;
    }
    start_word();
    current_.segments.push_back(segment);
  }

  std::string_view text_;
  Issues& issues_;
  size_t pos_ = 0;
  int line_ = 1;
  ShellWord current_;
  bool in_word_ = false;
  std::vector<ShellWord>* out_ = nullptr;
  std::vector<std::pair<std::string, bool>> heredocs_;  ///< delimiter, <<- (strip tabs)
};

}  // namespace

bool lex_shell_words(std::string_view text, std::vector<ShellWord>& words, Issues& issues) {
  return Lexer(text, issues).run(words);
}

}  // namespace trainsim::interop
