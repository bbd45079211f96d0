// The control flow around each command of a launch script, for the Megatron-LM
// importer's expansion (megatron_expand.h): which if/elif/else branch, case
// branch, loop body, function body or && / || list a command runs in, so a
// value assigned there is named as depending on control flow wherever it is
// expanded outside it. Semantics: bash(1) "Compound Commands", "Lists",
// "Shell Function Definitions". Internal to interop/megatron/.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "interop/megatron/megatron_shell.h"

namespace trainsim::interop {

inline constexpr size_t kMaxControlDepth = 64;  // nested if/case/loops/functions

class ControlFlow {
 public:
  ControlFlow() { contexts_.push_back({-1, ""}); }

  // Reads the first word of a command: a reserved word (if, then, fi, for,
  // do, done, case ... esac, function, {, }), a case pattern or a word of a
  // for/case/function header. Returns false for an ordinary command word.
  // `loop_variable` is set to the variable of a for/select loop when read.
  bool command_word(const ShellWord& raw, int line, std::string& loop_variable);

  // The end of a simple command at separator `op` ("\n", ";", "&&", "||", ...).
  void end_command(const std::string& op, int line);

  int current() const { return current_; }  ///< context of the command being read
  // The control flow a value assigned in `context` depends on when expanded in
  // the current context: "" when `context` encloses the current one.
  std::string condition_of(int context) const;
  const std::string& error() const { return error_; }  ///< nesting beyond kMaxControlDepth

 private:
  struct Context {
    int parent = -1;
    std::string reason;  ///< "an if branch (line 3)"
  };
  struct Construct {
    std::string kind;  ///< if, case, for, while, until, select, function, {
    int parent = 0;    ///< the context around it
    bool opened = false;  ///< function: its "{" was seen
  };

  int new_context(int parent, const std::string& reason);
  bool is_ancestor(int ancestor, int context) const;
  void push_construct(const std::string& kind);
  void enter(const std::string& reason);
  void pop_construct(const std::vector<std::string>& kinds);
  bool reserved_word(const std::string& word);
  bool case_pattern(const ShellWord& raw);
  void header_word(const ShellWord& raw, const std::string& word, std::string& loop_variable);

  std::vector<Context> contexts_;
  std::vector<Construct> constructs_;
  int current_ = 0;    ///< context of the command being read
  int list_base_ = 0;  ///< context before a && / || chain
  int line_ = 1;
  std::string header_;  ///< reading a for/select/case/function header
  bool loop_variable_pending_ = false;
  bool case_pattern_ = false;
  std::string error_;
};

}  // namespace trainsim::interop
