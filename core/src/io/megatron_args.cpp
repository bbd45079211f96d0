// Shell-like splitting of a Megatron-LM launch command into flags. Three
// passes: lex bash words (quotes, escapes, comments, continuations, $-forms),
// expand variables in script order (assignments, arrays, word splitting of
// unquoted expansions, as bash does), then group words into argparse flags.
#include "io/megatron_args.h"

#include <cctype>
#include <cstdlib>
#include <map>
#include <set>

namespace trainsim::io {
namespace {

struct Segment {
  enum class Kind { kLiteral, kVariable, kComputed };
  Kind kind = Kind::kLiteral;
  std::string text;  ///< literal text or variable name
  std::string raw;   ///< source form for messages, e.g. "${NUM_LAYERS}"
  std::string fallback;
  bool has_fallback = false;
  bool quoted = false;
};

struct RawWord {
  std::vector<Segment> segments;
  bool separator = false;
  int line = 0;
};

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Lexer {
 public:
  Lexer(std::string_view text, Issues& issues) : text_(text), issues_(issues) {}

  bool run(std::vector<RawWord>& words) {
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
      separator();
      ++line_;
      ++pos_;
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
        current_ = RawWord{};
        in_word_ = false;
      }
      separator();
      ++pos_;
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
    const Segment& s = current_.segments[0];
    if (s.kind != Segment::Kind::kLiteral || s.quoted || s.text.empty()) return false;
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
    current_ = RawWord{};
    in_word_ = false;
  }

  void separator() {
    end_word();
    if (!out_->empty() && !out_->back().separator) {
      RawWord sep;
      sep.separator = true;
      sep.line = line_;
      out_->push_back(sep);
    }
  }

  void start_word() {
    if (!in_word_) current_.line = line_;
    in_word_ = true;
  }

  void literal(char c, bool quoted) {
    start_word();
    if (c == '\n') ++line_;
    auto& segments = current_.segments;
    if (segments.empty() || segments.back().kind != Segment::Kind::kLiteral ||
        segments.back().quoted != quoted) {
      segments.push_back({Segment::Kind::kLiteral, "", "", "", false, quoted});
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
    current_.segments.push_back({Segment::Kind::kLiteral, "", "", "", false, true});
    for (size_t i = pos_ + 1; i < end; ++i) literal(text_[i], true);
    pos_ = end + 1;
    return true;
  }

  bool double_quoted() {
    const int line = line_;
    start_word();
    current_.segments.push_back({Segment::Kind::kLiteral, "", "", "", false, true});
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
    current_.segments.push_back({Segment::Kind::kComputed, raw, raw, "", false, quoted});
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
      current_.segments.push_back({Segment::Kind::kVariable, name, "$" + name, "", false, quoted});
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
    Segment segment{Segment::Kind::kVariable, body.substr(0, end), raw, "", false, quoted};
    const std::string rest = body.substr(end);
    if (rest.rfind(":-", 0) == 0 || rest.rfind("-", 0) == 0) {
      segment.fallback = rest.substr(rest[0] == ':' ? 2 : 1);
      const size_t n = segment.fallback.size();
      if (n >= 2 && (segment.fallback[0] == '"' || segment.fallback[0] == '\'') &&
          segment.fallback[n - 1] == segment.fallback[0]) {
        segment.fallback = segment.fallback.substr(1, n - 2);  // ${NAME:-"value"}
      }
      segment.has_fallback = segment.fallback.find('$') == std::string::npos;
      if (!segment.has_fallback) segment.kind = Segment::Kind::kComputed;
    } else if (!rest.empty()) {
      segment.kind = Segment::Kind::kComputed;
    }
    start_word();
    current_.segments.push_back(segment);
  }

  std::string_view text_;
  Issues& issues_;
  size_t pos_ = 0;
  int line_ = 1;
  RawWord current_;
  bool in_word_ = false;
  std::vector<RawWord>* out_ = nullptr;
};

struct Word {
  std::string text;
  std::string unresolved;
  bool separator = false;
  int line = 0;
};

class Expander {
 public:
  std::vector<Word> run(const std::vector<RawWord>& raw_words) {
    bool command_start = true;
    for (const RawWord& raw : raw_words) {
      if (raw.separator) {
        push_separator(raw.line);
        command_start = true;
        continue;
      }
      if (command_start && assignment(raw)) continue;
      if (command_start && is_keyword(raw)) continue;
      command_start = false;
      word(raw);
    }
    return out_;
  }

 private:
  static bool is_keyword(const RawWord& raw) {
    if (raw.segments.size() != 1 || raw.segments[0].kind != Segment::Kind::kLiteral ||
        raw.segments[0].quoted) {
      return false;
    }
    static const std::set<std::string> kKeywords = {"export", "local", "declare", "readonly", "env",
                                                    "then", "else", "do", "time", "!", "{", "("};
    return kKeywords.count(raw.segments[0].text) != 0;
  }

  void push_separator(int line) {
    if (!out_.empty() && !out_.back().separator) out_.push_back({"", "", true, line});
  }

  // NAME=value, NAME+=value or NAME=( ... array start.
  bool assignment(const RawWord& raw) {
    if (raw.segments.empty() || raw.segments[0].kind != Segment::Kind::kLiteral ||
        raw.segments[0].quoted) {
      return false;
    }
    const std::string& head = raw.segments[0].text;
    size_t end = 0;
    while (end < head.size() && is_name_char(head[end])) ++end;
    if (end == 0 || !is_name_start(head[0])) return false;
    const bool append = head.compare(end, 2, "+=") == 0;
    if (!append && head.compare(end, 1, "=") != 0) return false;
    const std::string name = head.substr(0, end);
    RawWord value = raw;
    value.segments[0].text = head.substr(end + (append ? 2 : 1));
    if (value.segments[0].text.rfind('(', 0) == 0) {  // bash array: its words are scanned as-is
      value.segments[0].text.erase(0, 1);
      in_array_ = true;
      if (!value.segments[0].text.empty() || value.segments.size() > 1) word(value);
      return true;
    }
    std::string unresolved;
    const std::string text = join(value, unresolved);
    if (!unresolved.empty()) {
      vars_.erase(name);
      computed_vars_.insert(name);
    } else {
      vars_[name] = append ? vars_[name] + text : text;
      computed_vars_.erase(name);
    }
    return true;
  }

  // Expands without word splitting (assignment values).
  std::string join(const RawWord& raw, std::string& unresolved) const {
    std::string text;
    for (const Segment& s : raw.segments) text += value_of(s, unresolved);
    return text;
  }

  std::string value_of(const Segment& s, std::string& unresolved) const {
    if (s.kind == Segment::Kind::kLiteral) return s.text;
    if (s.kind == Segment::Kind::kVariable && computed_vars_.count(s.text) == 0) {
      const auto it = vars_.find(s.text);
      if (it != vars_.end()) return it->second;
      if (s.has_fallback) return s.fallback;
    }
    if (unresolved.empty()) unresolved = s.raw;
    return s.raw;
  }

  // Expands one word; unquoted expansions are split on whitespace like bash.
  void word(RawWord raw) {
    bool closes_array = false;
    if (in_array_ && !raw.segments.empty()) {
      Segment& last = raw.segments.back();
      if (last.kind == Segment::Kind::kLiteral && !last.quoted && !last.text.empty() &&
          last.text.back() == ')') {
        last.text.pop_back();
        closes_array = true;
      }
    }
    Word current{"", "", false, raw.line};
    bool has_content = false;
    for (const Segment& s : raw.segments) {
      std::string unresolved;
      const std::string text = value_of(s, unresolved);
      if (!unresolved.empty() && current.unresolved.empty()) current.unresolved = unresolved;
      // Array elements are word-split too: scripts expand them unquoted (${ARGS[@]}).
      const bool split = unresolved.empty() &&
                         (in_array_ || (!s.quoted && s.kind != Segment::Kind::kLiteral));
      if (!split) {
        current.text += text;
        has_content = has_content || s.quoted || !text.empty();
        continue;
      }
      for (char c : text) {
        if (std::isspace(static_cast<unsigned char>(c))) {
          if (has_content) out_.push_back(current);
          current = {"", "", false, raw.line};
          has_content = false;
        } else {
          current.text += c;
          has_content = true;
        }
      }
    }
    if (has_content) out_.push_back(current);
    if (closes_array) {
      in_array_ = false;
      push_separator(raw.line);
    }
  }

  std::map<std::string, std::string> vars_;
  std::set<std::string> computed_vars_;
  bool in_array_ = false;
  std::vector<Word> out_;
};

bool is_number(const std::string& text) {
  if (text.empty()) return false;
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

// argparse (_parse_optional): a word with a space is a value, never an option.
bool looks_like_flag(const Word& word) {
  return word.text.size() > 1 && word.text[0] == '-' && !is_number(word.text) &&
         word.text.find(' ') == std::string::npos;
}

}  // namespace

bool split_command_flags(std::string_view text,
                         const std::function<FlagArity(const std::string&)>& arity,
                         std::vector<CommandFlag>& flags, Issues& issues) {
  std::vector<RawWord> raw_words;
  if (!Lexer(text, issues).run(raw_words)) return false;
  const std::vector<Word> words = Expander().run(raw_words);
  for (size_t i = 0; i < words.size(); ++i) {
    const Word& word = words[i];
    if (word.separator || !looks_like_flag(word) || word.text.compare(0, 2, "--") != 0 ||
        word.text.size() <= 2) {
      continue;
    }
    CommandFlag flag;
    flag.line = word.line;
    const size_t equals = word.text.find('=');
    if (equals != std::string::npos) {
      flag.name = word.text.substr(0, equals);
      flag.values.push_back(word.text.substr(equals + 1));
      flag.unresolved = word.unresolved;
      flags.push_back(flag);
      continue;
    }
    flag.name = word.text;
    const FlagArity kind = arity(flag.name);
    size_t next = i + 1;
    auto takes = [&](size_t j) { return j < words.size() && !words[j].separator && !looks_like_flag(words[j]); };
    if (kind == FlagArity::kNone) {
      for (; takes(next); ++next) flag.stray.push_back(words[next].text);
    } else {
      for (; takes(next) && (kind != FlagArity::kOne || flag.values.empty()); ++next) {
        flag.values.push_back(words[next].text);
        if (flag.unresolved.empty()) flag.unresolved = words[next].unresolved;
      }
    }
    flags.push_back(flag);
    i = next - 1;
  }
  return true;
}

}  // namespace trainsim::io
