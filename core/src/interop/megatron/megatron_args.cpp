// Shell-like splitting of a Megatron-LM launch command into flags. Three
// passes: lex bash words (megatron_shell.h), expand them into simple commands
// in script order (megatron_expand.h), then pick the training command and
// group its words into argparse flags.
#include "interop/megatron/megatron_args.h"

#include <algorithm>
#include <cstdlib>

#include "interop/megatron/megatron_expand.h"
#include "interop/megatron/megatron_shell.h"

namespace trainsim::interop {
namespace {

bool is_number(const std::string& text) {
  if (text.empty()) return false;
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

// argparse (_parse_optional): a word with a space is a value, never an option.
bool looks_like_flag(const ExpandedWord& word) {
  return word.text.size() > 1 && word.text[0] == '-' && !is_number(word.text) &&
         word.text.find(' ') == std::string::npos;
}

bool is_long_flag(const ExpandedWord& word) {
  return looks_like_flag(word) && word.text.compare(0, 2, "--") == 0 && word.text.size() > 2;
}

std::string basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_python(const std::string& word) {
  const std::string name = basename(word);
  return name == "python" || name.rfind("python3", 0) == 0;
}

// How surely a command launches the training: 3 runs pretrain_*.py (Megatron-LM's
// entry points: pretrain_gpt.py, pretrain_mamba.py, ...), 2 is a distributed
// launcher (torchrun, python -m torch.distributed.run/launch, deepspeed), 1 a
// python script; 0 any other command.
int launch_rank(const ShellCommand& command) {
  int rank = 0;
  const auto& words = command.words;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string name = basename(words[i].text);
    if (name.rfind("pretrain_", 0) == 0 && ends_with(name, ".py")) return 3;
    if (name == "torchrun" || name == "deepspeed") rank = std::max(rank, 2);
    if (is_python(words[i].text) && i + 2 < words.size() && words[i + 1].text == "-m" &&
        words[i + 2].text.rfind("torch.distributed.", 0) == 0) {
      rank = std::max(rank, 2);
    }
    if (is_python(words[i].text) && i + 1 < words.size() && ends_with(words[i + 1].text, ".py")) {
      rank = std::max(rank, 1);
    }
  }
  return rank;
}

std::string program_of(const ShellCommand& command) {
  for (const ExpandedWord& word : command.words) {
    if (ends_with(word.text, ".py")) return basename(word.text);
  }
  return basename(command.words.front().text);
}

// "line 7 (convert.py): its flags --a, --b are ignored" for a command not read.
std::string ignored_command_note(const ShellCommand& command, const ShellCommand& training) {
  std::string listed;
  size_t count = 0;
  for (const ExpandedWord& word : command.words) {
    if (!is_long_flag(word)) continue;
    if (++count <= 3) listed += (listed.empty() ? "" : ", ") + word.text.substr(0, 60);
  }
  if (count == 0) return "";
  if (count > 3) listed += " and " + std::to_string(count - 3) + " more";
  return "line " + std::to_string(command.line) + " (" + program_of(command).substr(0, 60) +
         ") is not the training command (line " + std::to_string(training.line) + ", " +
         program_of(training).substr(0, 60) + "): its flags " + listed + " are ignored";
}

void group_flags(const std::vector<ExpandedWord>& words,
                 const std::function<FlagArity(const std::string&)>& arity,
                 std::vector<CommandFlag>& flags) {
  for (size_t i = 0; i < words.size(); ++i) {
    const ExpandedWord& word = words[i];
    if (!is_long_flag(word)) continue;
    CommandFlag flag;
    flag.line = word.line;
    flag.conditional = word.conditional;
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
    auto takes = [&](size_t j) { return j < words.size() && !looks_like_flag(words[j]); };
    if (kind == FlagArity::kNone) {
      for (; takes(next); ++next) flag.stray.push_back(words[next].text);
    } else {
      for (; takes(next) && (kind != FlagArity::kOne || flag.values.empty()); ++next) {
        flag.values.push_back(words[next].text);
        if (flag.unresolved.empty()) flag.unresolved = words[next].unresolved;
        if (flag.conditional.empty()) flag.conditional = words[next].conditional;
      }
    }
    flags.push_back(flag);
    i = next - 1;
  }
}

}  // namespace

bool split_command_flags(std::string_view text,
                         const std::function<FlagArity(const std::string&)>& arity,
                         std::vector<CommandFlag>& flags, Issues& issues,
                         std::vector<std::string>* notes) {
  std::vector<ShellWord> raw_words;
  if (!lex_shell_words(text, raw_words, issues)) return false;
  std::vector<ShellCommand> commands;
  if (!expand_commands(raw_words, commands, issues)) return false;
  int best = 0;
  for (const ShellCommand& command : commands) best = std::max(best, launch_rank(command));
  if (best == 0) {  // a bare list of flags (or no launcher at all): read every command
    for (const ShellCommand& command : commands) group_flags(command.words, arity, flags);
    return true;
  }
  const ShellCommand* training = nullptr;
  std::vector<int> others;
  for (const ShellCommand& command : commands) {
    if (launch_rank(command) != best) continue;
    if (training == nullptr) {
      training = &command;
    } else {
      others.push_back(command.line);
    }
  }
  group_flags(training->words, arity, flags);
  if (notes == nullptr) return true;
  if (!others.empty()) {
    std::string lines;
    for (size_t i = 0; i < others.size() && i < 5; ++i) lines += ", " + std::to_string(others[i]);
    notes->push_back("the script has " + std::to_string(others.size() + 1) +
                     " training commands (lines " + std::to_string(training->line) + lines +
                     (others.size() > 5 ? ", ..." : "") + "): only the first is read");
  }
  for (const ShellCommand& command : commands) {
    if (&command == training) continue;
    if (std::string note = ignored_command_note(command, *training); !note.empty()) {
      notes->push_back(std::move(note));
    }
  }
  return true;
}

}  // namespace trainsim::interop
