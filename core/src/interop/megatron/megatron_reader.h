// Typed, issue-collecting access to the flags of a Megatron-LM command line,
// the command-line twin of ObjectReader. Every accessor marks the flag as
// read; finish() turns the flags nobody read into notes (unknown flags,
// flags trainsim does not model, flags without effect in this command).
// Issue paths are "/args/<flag>", e.g. "/args/--num-layers".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "interop/megatron/megatron_args.h"
#include "trainsim/issue.h"

namespace trainsim::interop {

class FlagReader {
 public:
  FlagReader(const std::vector<CommandFlag>& flags, Issues& issues,
             std::vector<std::string>& notes);

  bool has(const char* name);  ///< present at least once
  bool given(const char* name) const { return by_name_.count(name) != 0; }  ///< has(), not marking it read
  bool flag(const char* name);  ///< a no-value flag
  std::optional<int64_t> integer(const char* name, int64_t min_value, int64_t max_value);
  int64_t required_integer(const char* name, int64_t min_value, int64_t max_value);
  std::optional<double> number(const char* name, double min_value, double max_value);
  std::optional<std::string> text(const char* name);
  // The raw text of a value bash computes at run time ("$NNODES"), or "".
  std::string run_time_value(const char* name);
  // Like text(), but a value bash computes at run time is simply unknown (no issue).
  std::optional<std::string> text_if_resolved(const char* name);
  std::optional<size_t> choice(const char* name, const std::vector<std::string>& allowed);
  std::optional<std::vector<std::string>> list(const char* name);

  void error(const char* name, const std::string& message);
  void note(const std::string& message) { notes_.push_back(message); }

  // Notes every flag no accessor asked for.
  void finish();

 private:
  void point_at_typo(const std::string& typo, const std::string& meant);
  const CommandFlag* last(const char* name);  ///< last occurrence wins, as in argparse
  std::optional<std::string> single(const char* name);

  std::map<std::string, std::vector<const CommandFlag*>> by_name_;
  std::vector<std::string> order_;  ///< first-seen order of the names
  std::set<std::string> read_;
  std::set<std::string> dropped_;  ///< depends on control flow (noted once)
  Issues& issues_;
  std::vector<std::string>& notes_;
};

}  // namespace trainsim::interop
