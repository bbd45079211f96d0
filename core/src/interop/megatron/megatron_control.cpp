// Control-flow contexts of a launch script's commands (megatron_control.h).
#include "interop/megatron/megatron_control.h"

#include <algorithm>
#include <optional>

namespace trainsim::interop {
namespace {

std::optional<std::string> keyword(const ShellWord& raw) {
  if (raw.segments.size() != 1 || raw.segments[0].kind != ShellSegment::Kind::kLiteral ||
      raw.segments[0].quoted) {
    return std::nullopt;
  }
  return raw.segments[0].text;
}

}  // namespace

int ControlFlow::new_context(int parent, const std::string& reason) {
  contexts_.push_back({parent, reason + " (line " + std::to_string(line_) + ")"});
  return static_cast<int>(contexts_.size()) - 1;
}

bool ControlFlow::is_ancestor(int ancestor, int context) const {
  for (int c = context; c != -1; c = contexts_[static_cast<size_t>(c)].parent) {
    if (c == ancestor) return true;
  }
  return false;
}

std::string ControlFlow::condition_of(int context) const {
  int last = -1;
  for (int c = context; c != -1 && !is_ancestor(c, current_);
       c = contexts_[static_cast<size_t>(c)].parent) {
    last = c;
  }
  return last == -1 ? "" : contexts_[static_cast<size_t>(last)].reason;
}

void ControlFlow::push_construct(const std::string& kind) {
  if (constructs_.size() >= kMaxControlDepth) {
    if (error_.empty()) {
      error_ = "control flow nested deeper than " + std::to_string(kMaxControlDepth) + " levels";
    }
    return;
  }
  constructs_.push_back({kind, current_, false});
}

void ControlFlow::enter(const std::string& reason) {
  if (constructs_.empty()) return;
  current_ = list_base_ = new_context(constructs_.back().parent, reason);
}

void ControlFlow::pop_construct(const std::vector<std::string>& kinds) {
  if (constructs_.empty() ||
      std::find(kinds.begin(), kinds.end(), constructs_.back().kind) == kinds.end()) {
    return;
  }
  current_ = list_base_ = constructs_.back().parent;
  constructs_.pop_back();
}

// Returns true when the word was a reserved word.
bool ControlFlow::reserved_word(const std::string& word) {
  const std::string top = constructs_.empty() ? "" : constructs_.back().kind;
  if (word == "if" || word == "while" || word == "until") {
    push_construct(word);
    enter("the condition of " + word);
  } else if (word == "then" && top == "if") {
    enter("an if branch");
  } else if (word == "elif" && top == "if") {
    enter("the condition of elif");
  } else if (word == "else" && top == "if") {
    enter("an else branch");
  } else if (word == "do" && (top == "while" || top == "until" || top == "for" || top == "select")) {
    enter("a " + top + " loop body");
  } else if (word == "fi") {
    pop_construct({"if"});
  } else if (word == "done") {
    pop_construct({"while", "until", "for", "select"});
  } else if (word == "esac") {
    pop_construct({"case"});
    case_pattern_ = false;
  } else if (word == "for" || word == "select" || word == "case") {
    push_construct(word);
    header_ = word;
    loop_variable_pending_ = word != "case";
  } else if (word == "function") {
    header_ = "function";
  } else if (word.size() > 2 && word.compare(word.size() - 2, 2, "()") == 0) {
    push_construct("function");  // name() { ... }
    enter("the function " + word.substr(0, word.size() - 2));
  } else if (word == "{") {
    if (top == "function" && !constructs_.back().opened) {
      constructs_.back().opened = true;
    } else {
      push_construct("{");
    }
  } else if (word == "}") {
    pop_construct({"{", "function"});
  } else if (word != "!" && word != "time" && word != "(" && word != ")") {
    return false;
  }
  return true;
}

// A case pattern: "small)", "\"small\")" or "*)".
bool ControlFlow::case_pattern(const ShellWord& raw) {
  if (!case_pattern_ || constructs_.empty() || constructs_.back().kind != "case" ||
      raw.segments.empty()) {
    return false;
  }
  const ShellSegment& last = raw.segments.back();
  if (last.kind != ShellSegment::Kind::kLiteral || last.quoted || last.text.empty() ||
      last.text.back() != ')') {
    return false;
  }
  enter("a case branch");
  case_pattern_ = false;
  return true;
}

void ControlFlow::header_word(const ShellWord& raw, const std::string& word,
                              std::string& loop_variable) {
  if (header_ == "function") {  // function NAME [()] { ... }
    push_construct("function");
    enter("the function " + word);
    header_.clear();
    return;
  }
  if (header_ == "case") {
    if (word == "in") {
      header_.clear();
      case_pattern_ = true;
    }
    return;
  }
  // for NAME in ...: the loop variable changes on every pass.
  if (loop_variable_pending_ && !raw.segments.empty()) {
    loop_variable = raw.segments[0].text;
    loop_variable_pending_ = false;
  }
}

bool ControlFlow::command_word(const ShellWord& raw, int line, std::string& loop_variable) {
  line_ = line;
  const std::optional<std::string> word = keyword(raw);
  if (!header_.empty()) {  // for NAME in ...; case WORD in; function NAME
    header_word(raw, word.value_or(""), loop_variable);
    return true;
  }
  if (case_pattern(raw)) return true;
  return word && reserved_word(*word);
}

void ControlFlow::end_command(const std::string& op, int line) {
  line_ = line;
  if (header_ == "for" || header_ == "select") header_.clear();  // ends at ; or a newline
  if (op == "&&" || op == "||") {
    current_ = new_context(current_, "a command after " + op);
  } else if (op != "|") {
    current_ = list_base_;
  }
  if (op == ";;") case_pattern_ = true;
}

}  // namespace trainsim::interop
