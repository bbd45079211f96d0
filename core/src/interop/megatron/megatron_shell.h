// Bash word lexing for the Megatron-LM importer (megatron_args.cpp): quotes,
// escapes, comments, line continuations, separators and $-forms, without
// expanding anything. Internal to interop/megatron/.
#pragma once

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/issue.h"

namespace trainsim::interop {

struct ShellSegment {
  enum class Kind { kLiteral, kVariable, kComputed };
  Kind kind = Kind::kLiteral;
  std::string text;  ///< literal text or variable name
  std::string raw;   ///< source form for messages, e.g. "${NUM_LAYERS}"
  std::string fallback;
  std::string subscript;  ///< kVariable of an array: "@", "*" or an index ("${A[@]}")
  bool has_fallback = false;
  bool quoted = false;
};

struct ShellWord {
  std::vector<ShellSegment> segments;
  bool separator = false;
  std::string op;  ///< a separator's operator: "\n", ";", ";;", "&", "&&", "|", "||", "<", ">"
  int line = 0;
};

inline bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
inline bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Splits `text` into words and separators (newline ; & | < >, and the
// operators ;; && ||). Here-document bodies (<<WORD ... WORD) are skipped: they
// are data, not commands. Returns false with an issue at "/args" for an
// unterminated quote, ${, $( or backquote.
bool lex_shell_words(std::string_view text, std::vector<ShellWord>& words, Issues& issues);

}  // namespace trainsim::interop
