// Bash expansion for the Megatron-LM importer, without running anything:
// the lexed words of a script (megatron_shell.h) become simple commands whose
// words are expanded the way bash would expand them, in script order.
//   - NAME=value persists only when the command is nothing but assignments
//     (or export/declare/local/readonly); "TP=4 cmd" sets TP for cmd alone.
//   - Arrays (NAME=(...), NAME+=(...)) are read where they are expanded
//     (${NAME[@]}, ${NAME[*]}, ${NAME[i]}, $NAME), never where they are defined.
//   - A value assigned inside a branch of if/elif/else, case, a loop body, a
//     function or after && / || is marked with the control flow it depends on
//     wherever it is expanded outside that branch (megatron_control.h).
//   - Expansion is bounded (kMaxVariableChars, kMaxExpansionWork): a variable
//     doubled on every line stops with an issue instead of growing without bound.
// Internal to interop/megatron/.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "interop/megatron/megatron_shell.h"
#include "trainsim/issue.h"

namespace trainsim::interop {

struct ExpandedWord {
  std::string text;
  std::string unresolved;   ///< first $-form bash computes at run time ("$NNODES"), or ""
  std::string conditional;  ///< the control flow its value depends on ("an if branch (line 3)"), or ""
  int line = 0;
};

struct ShellCommand {
  std::vector<ExpandedWord> words;  ///< after its prefix assignments
  int line = 0;
};

// A real launch script is a few KiB; these bound what a hostile one can make
// the expansion copy.
inline constexpr size_t kMaxVariableChars = size_t{1} << 20;  // one variable's value
inline constexpr size_t kMaxExpansionWork = size_t{16} << 20;  // characters copied in all

// Returns false with an issue at "/args" when a bound above (or
// kMaxControlDepth) is exceeded.
bool expand_commands(const std::vector<ShellWord>& words, std::vector<ShellCommand>& commands,
                     Issues& issues);

}  // namespace trainsim::interop
