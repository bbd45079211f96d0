// Shell-like splitting of a Megatron-LM launch command into flags. Three
// passes: lex bash words (quotes, escapes, comments, continuations, $-forms),
// expand variables in script order (assignments, arrays, word splitting of
// unquoted expansions, as bash does), then group words into argparse flags.
#include "interop/megatron/megatron_args.h"

#include <cctype>
#include <cstdlib>
#include <map>
#include <set>

#include "interop/megatron/megatron_shell.h"

namespace trainsim::interop {
namespace {

struct Word {
  std::string text;
  std::string unresolved;
  bool separator = false;
  int line = 0;
};

class Expander {
 public:
  std::vector<Word> run(const std::vector<ShellWord>& raw_words) {
    bool command_start = true;
    for (const ShellWord& raw : raw_words) {
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
  static bool is_keyword(const ShellWord& raw) {
    if (raw.segments.size() != 1 || raw.segments[0].kind != ShellSegment::Kind::kLiteral ||
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
  bool assignment(const ShellWord& raw) {
    if (raw.segments.empty() || raw.segments[0].kind != ShellSegment::Kind::kLiteral ||
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
    ShellWord value = raw;
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
  std::string join(const ShellWord& raw, std::string& unresolved) const {
    std::string text;
    for (const ShellSegment& s : raw.segments) text += value_of(s, unresolved);
    return text;
  }

  std::string value_of(const ShellSegment& s, std::string& unresolved) const {
    if (s.kind == ShellSegment::Kind::kLiteral) return s.text;
    if (s.kind == ShellSegment::Kind::kVariable && computed_vars_.count(s.text) == 0) {
      const auto it = vars_.find(s.text);
      if (it != vars_.end()) return it->second;
      if (s.has_fallback) return s.fallback;
    }
    if (unresolved.empty()) unresolved = s.raw;
    return s.raw;
  }

  // Expands one word; unquoted expansions are split on whitespace like bash.
  void word(ShellWord raw) {
    bool closes_array = false;
    if (in_array_ && !raw.segments.empty()) {
      ShellSegment& last = raw.segments.back();
      if (last.kind == ShellSegment::Kind::kLiteral && !last.quoted && !last.text.empty() &&
          last.text.back() == ')') {
        last.text.pop_back();
        closes_array = true;
      }
    }
    Word current{"", "", false, raw.line};
    bool has_content = false;
    for (const ShellSegment& s : raw.segments) {
      std::string unresolved;
      const std::string text = value_of(s, unresolved);
      if (!unresolved.empty() && current.unresolved.empty()) current.unresolved = unresolved;
      // Array elements are word-split too: scripts expand them unquoted (${ARGS[@]}).
      const bool split = unresolved.empty() &&
                         (in_array_ || (!s.quoted && s.kind != ShellSegment::Kind::kLiteral));
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
  std::vector<ShellWord> raw_words;
  if (!lex_shell_words(text, raw_words, issues)) return false;
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

}  // namespace trainsim::interop
