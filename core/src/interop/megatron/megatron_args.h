// Splits a Megatron-LM launch command (one pretrain_gpt.py command line, or a
// bash script around it) into its --flags, the way bash and argparse would see
// them: comments, line continuations, quotes, NAME=value assignments and their
// $NAME / ${NAME} / ${NAME:-default} expansions, bash arrays, here-documents
// and separators (newline ; & | < > && ||), megatron_expand.h. Anything bash
// would compute at run time ($(...), $((...)), `...`, $1) stays unresolved
// and is reported only if a flag that trainsim reads depends on it.
//
// Only the training command is read: the one running pretrain_*.py, else a
// torchrun / torch.distributed / deepspeed launcher, else a python script;
// flags of the script's other commands (a checkpoint converter's) are noted
// as ignored. Text with no such command (a bare list of flags) is read whole.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/issue.h"

namespace trainsim::interop {

// How many values an argparse flag takes.
enum class FlagArity {
  kNone,     ///< store_true / store_false
  kOne,      ///< type=... (one value)
  kList,     ///< nargs='+' / nargs='*'
  kUnknown,  ///< not in trainsim's table: takes the following non-flag words
};

struct CommandFlag {
  std::string name;                 ///< "--num-layers" (a "--name=value" form is split)
  std::vector<std::string> values;  ///< after quote removal and variable expansion
  std::string unresolved;           ///< first value bash would compute at run time, e.g. "$NL"
  std::vector<std::string> stray;   ///< words after a no-value flag that are not flags
  std::string conditional;          ///< the control flow its name or value depends on, or ""
  int line = 0;                     ///< 1-based line of the flag in the text
};

// Returns false (with an issue at path "/args") only for text bash could not
// parse either: an unterminated quote, ${ or $(.
// Notes (the commands not read, several training commands) go to `notes`
// when it is given.
bool split_command_flags(std::string_view text,
                         const std::function<FlagArity(const std::string&)>& arity,
                         std::vector<CommandFlag>& flags, Issues& issues,
                         std::vector<std::string>* notes = nullptr);

}  // namespace trainsim::interop
