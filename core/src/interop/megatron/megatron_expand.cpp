// Bash expansion in script order, one pass: assignments (scalar and array),
// parameter expansion with word splitting of unquoted results, and the control
// flow each value depends on. Semantics: bash(1) "SIMPLE COMMAND EXPANSION"
// (prefix assignments), "Arrays", "Word Splitting", "Compound Commands".
#include "interop/megatron/megatron_expand.h"

#include <cctype>
#include <map>
#include <optional>
#include <utility>

#include "interop/megatron/megatron_control.h"

namespace trainsim::interop {
namespace {

// A run of a value's text that shares one origin: the control-flow context it
// was assigned in, or the run-time form bash would compute.
struct Piece {
  std::string text;
  std::string unresolved;
  int context = 0;
};
using Value = std::vector<Piece>;

// An assignment to undo when its command turns out to have a command word.
struct Undo {
  std::string name;
  std::optional<Value> scalar;
  std::optional<std::vector<Value>> array;
};

// The word's text when it is one unquoted literal (a keyword or an option).
std::optional<std::string> literal_word(const ShellWord& raw) {
  if (raw.segments.size() != 1 || raw.segments[0].kind != ShellSegment::Kind::kLiteral ||
      raw.segments[0].quoted) {
    return std::nullopt;
  }
  return raw.segments[0].text;
}

size_t length(const Value& value) {
  size_t n = 0;
  for (const Piece& p : value) n += p.text.size();
  return n;
}

class Expander {
 public:
  Expander(std::vector<ShellCommand>& out, Issues& issues) : out_(out), issues_(issues) {}

  bool run(const std::vector<ShellWord>& raw_words) {
    for (const ShellWord& raw : raw_words) {
      line_ = raw.line;
      if (raw.separator) {
        if (!array_.empty()) continue;  // newlines inside NAME=( ... )
        end_command(raw.op);
      } else if (!array_.empty()) {
        array_word(raw);
      } else if (in_command_) {
        expand_word(raw);
      } else {
        command_start(raw);
      }
      if (failed_) return false;
    }
    end_command("\n");
    return !failed_;
  }

 private:
  void command_start(const ShellWord& raw) {
    std::string loop_variable;
    if (control_.command_word(raw, line_, loop_variable)) {
      if (!loop_variable.empty()) {  // for NAME in ...: bash sets it on every pass
        computed_[loop_variable] = kWhereUsed;
        vars_.erase(loop_variable);
      }
      if (!control_.error().empty()) fail(control_.error());
      return;
    }
    const std::optional<std::string> word = literal_word(raw);
    if (word && (*word == "export" || *word == "declare" || *word == "local" ||
                 *word == "readonly" || *word == "typeset")) {
      declaration_ = true;
      return;
    }
    if (word && *word == "env") {
      has_command_word_ = true;  // env NAME=value cmd: the assignments are env's arguments
      return;
    }
    if (declaration_ && word && word->size() > 1 && (*word)[0] == '-') return;  // declare -a
    if (assignment(raw)) return;
    if (declaration_) return;  // export NAME (no value)
    in_command_ = true;
    has_command_word_ = true;
    command_.line = raw.line;
    expand_word(raw);
  }

  void end_command(const std::string& op) {
    if (in_command_ && !command_.words.empty()) out_.push_back(std::move(command_));
    if (has_command_word_) {
      for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) restore(*it);
    }
    undo_.clear();
    command_ = ShellCommand{};
    in_command_ = has_command_word_ = declaration_ = false;
    control_.end_command(op, line_);
  }

  void restore(const Undo& undo) {
    if (undo.scalar) {
      vars_[undo.name] = *undo.scalar;
    } else {
      vars_.erase(undo.name);
    }
    if (undo.array) {
      arrays_[undo.name] = *undo.array;
    } else {
      arrays_.erase(undo.name);
    }
  }

  // Keeps the variable's value for end_command; the copy counts as expansion
  // work (NAME+=(x) on every line would otherwise copy the array each time).
  void remember(const std::string& name) {
    Undo undo{name, std::nullopt, std::nullopt};
    if (const auto it = vars_.find(name); it != vars_.end()) {
      if (!check_size(it->second, name)) return;
      undo.scalar = it->second;
    }
    if (const auto it = arrays_.find(name); it != arrays_.end()) {
      for (const Value& item : it->second) {
        if (!check_size(item, name)) return;
      }
      undo.array = it->second;
    }
    undo_.push_back(std::move(undo));
  }

  // NAME=value, NAME+=value, NAME=( or NAME+=( starting an array.
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
    remember(name);
    computed_.erase(name);
    if (value.segments[0].text.rfind('(', 0) == 0) {
      value.segments[0].text.erase(0, 1);
      std::vector<Value>& items = arrays_[name];
      if (!append) items.clear();
      if (const auto it = vars_.find(name); it != vars_.end()) {
        if (append) items.insert(items.begin(), it->second);  // a scalar is element 0
        vars_.erase(it);
      }
      array_ = name;
      if (!value.segments[0].text.empty() || value.segments.size() > 1) array_word(value);
      return true;
    }
    Value text = append ? scalar(name) : Value{};
    for (const ShellSegment& s : value.segments) append_value(text, segment_value(s, true));
    arrays_.erase(name);
    for (const Piece& p : text) {
      if (p.unresolved.empty()) continue;
      // bash computes it at run time: "$NAME" stays unresolved, and keeps the
      // control flow it was assigned in.
      computed_[name] = control_.current();
      vars_.erase(name);
      return true;
    }
    if (check_size(text, name)) vars_[name] = std::move(text);
    return true;
  }

  // One word of an array literal; a final unquoted ")" closes it.
  void array_word(ShellWord raw) {
    bool closes = false;
    ShellSegment& last = raw.segments.back();
    if (last.kind == ShellSegment::Kind::kLiteral && !last.quoted && !last.text.empty() &&
        last.text.back() == ')') {
      last.text.pop_back();
      closes = true;
    }
    std::vector<Value>& items = arrays_[array_];
    for (Value& item : split_word(raw)) {
      if (!check_size(item, array_)) return;
      items.push_back(std::move(item));
    }
    if (closes) array_.clear();
  }

  // --- expansion ---------------------------------------------------------
  void fail(const std::string& message) {
    if (!failed_) issues_.push_back({"/args", message + " (line " + std::to_string(line_) + ")"});
    failed_ = true;
  }

  bool check_size(const Value& value, const std::string& name) {
    work_ += length(value) + 16 * value.size();
    if (length(value) > kMaxVariableChars) {
      fail("the value of " + name + " grows beyond " + std::to_string(kMaxVariableChars >> 20) +
           " MiB: trainsim stops expanding the script (is a variable doubled over and over?)");
    } else if (work_ > kMaxExpansionWork) {
      fail("expanding the script's variables copies more than " +
           std::to_string(kMaxExpansionWork >> 20) +
           " MiB of text: trainsim stops there (is a variable doubled over and over?)");
    }
    return !failed_;
  }

  static void append_value(Value& to, Value from) {
    for (Piece& p : from) {
      if (!to.empty() && to.back().context == p.context && to.back().unresolved.empty() &&
          p.unresolved.empty()) {
        to.back().text += p.text;
      } else {
        to.push_back(std::move(p));
      }
    }
  }

  Value scalar(const std::string& name) const {
    if (const auto it = vars_.find(name); it != vars_.end()) return it->second;
    if (const auto it = arrays_.find(name); it != arrays_.end() && !it->second.empty()) {
      return it->second.front();  // $NAME of an array is its first element
    }
    return {};
  }

  bool is_set(const std::string& name) const {
    return vars_.count(name) != 0 || arrays_.count(name) != 0;
  }

  // The elements a segment expands to: one for a scalar, one per element for
  // ${NAME[@]}; `joined` joins them with spaces (assignments, ${NAME[*]}).
  std::vector<Value> segment_values(const ShellSegment& s, bool joined) {
    auto run_time = [&] { return std::vector<Value>{{Piece{s.raw, s.raw, control_.current()}}}; };
    auto literal = [&](const std::string& text) {
      return std::vector<Value>{{Piece{text, "", control_.current()}}};
    };
    if (s.kind == ShellSegment::Kind::kLiteral) return literal(s.text);
    if (s.kind == ShellSegment::Kind::kComputed) return run_time();
    if (const auto it = computed_.find(s.text); it != computed_.end()) {
      const int context = it->second == kWhereUsed ? control_.current() : it->second;
      return std::vector<Value>{{Piece{s.raw, s.raw, context}}};
    }
    if (!is_set(s.text)) return s.has_fallback ? literal(s.fallback) : run_time();
    const auto array = arrays_.find(s.text);
    if (array == arrays_.end() || (s.subscript != "@" && s.subscript != "*")) {
      if (s.subscript.empty() || s.subscript == "@" || s.subscript == "*" || s.subscript == "0") {
        return {scalar(s.text)};
      }
      if (array == arrays_.end()) return {Value{}};
      size_t index = 0;
      for (const char c : s.subscript) {
        if (!std::isdigit(static_cast<unsigned char>(c)) || index > 1'000'000) return run_time();
        index = index * 10 + static_cast<size_t>(c - '0');
      }
      return {index < array->second.size() ? array->second[index] : Value{}};
    }
    if (!joined && s.subscript == "@") return array->second;
    Value all;
    for (const Value& item : array->second) {
      if (!all.empty()) append_value(all, {Piece{" ", "", control_.current()}});
      append_value(all, item);
    }
    return {all};
  }

  Value segment_value(const ShellSegment& s, bool joined) {
    Value out;
    for (Value& item : segment_values(s, joined)) append_value(out, std::move(item));
    return out;
  }

  // Expands one word into words: unquoted expansions are split on whitespace;
  // a quoted "${NAME[@]}" gives one word per element.
  std::vector<Value> split_word(const ShellWord& raw) {
    std::vector<Value> words;
    Value current;
    bool has_content = false;
    auto finish = [&] {
      if (has_content) words.push_back(std::move(current));
      current.clear();
      has_content = false;
    };
    for (const ShellSegment& s : raw.segments) {
      const std::vector<Value> items = segment_values(s, false);
      const bool split = !s.quoted && s.kind != ShellSegment::Kind::kLiteral;
      for (size_t i = 0; i < items.size(); ++i) {
        if (i > 0) finish();  // "${A[@]}": each element its own word
        if (s.quoted) has_content = true;
        for (const Piece& p : items[i]) {
          if (!split || !p.unresolved.empty()) {
            append_value(current, {p});
            has_content = true;
            continue;
          }
          for (const char c : p.text) {
            if (std::isspace(static_cast<unsigned char>(c))) {
              finish();
            } else {
              append_value(current, {Piece{std::string(1, c), "", p.context}});
              has_content = true;
            }
          }
        }
      }
    }
    finish();
    return words;
  }

  void expand_word(const ShellWord& raw) {
    for (const Value& value : split_word(raw)) {
      if (!check_size(value, "a word")) return;
      ExpandedWord word;
      word.line = raw.line;
      for (const Piece& p : value) {
        word.text += p.text;
        if (word.unresolved.empty()) word.unresolved = p.unresolved;
        if (word.conditional.empty()) word.conditional = control_.condition_of(p.context);
      }
      command_.words.push_back(std::move(word));
    }
  }

  std::vector<ShellCommand>& out_;
  Issues& issues_;
  std::map<std::string, Value> vars_;
  std::map<std::string, std::vector<Value>> arrays_;
  // Variables bash assigns at run time ($(...), loop variables) and the context
  // they were assigned in (kWhereUsed: a loop variable, known inside its loop).
  static constexpr int kWhereUsed = -1;
  std::map<std::string, int> computed_;
  ControlFlow control_;
  ShellCommand command_;
  std::vector<Undo> undo_;
  std::string array_;   ///< the array whose literal is being read
  bool in_command_ = false;
  bool has_command_word_ = false;
  bool declaration_ = false;
  bool failed_ = false;
  size_t work_ = 0;
  int line_ = 1;
};

}  // namespace

bool expand_commands(const std::vector<ShellWord>& words, std::vector<ShellCommand>& commands,
                     Issues& issues) {
  return Expander(commands, issues).run(words);
}

}  // namespace trainsim::interop
