#include "interop/megatron/megatron_reader.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "interop/megatron/megatron_flags.h"
#include "schema/json_reader.h"

namespace trainsim::interop {
namespace {

std::string quoted(const std::string& text) {
  return "\"" + (text.size() > 60 ? text.substr(0, 60) + "..." : text) + "\"";
}

std::string join_values(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& value : values) out += (out.empty() ? "" : " ") + value;
  return out;
}

}  // namespace

FlagReader::FlagReader(const std::vector<CommandFlag>& flags, Issues& issues,
                       std::vector<std::string>& notes)
    : issues_(issues), notes_(notes) {
  for (const CommandFlag& flag : flags) {
    auto& list = by_name_[flag.name];
    if (list.empty()) order_.push_back(flag.name);
    list.push_back(&flag);
  }
  // A flag whose last occurrence depends on control flow has no value trainsim
  // can know: it is dropped (as if absent) with a note, never a branch picked.
  // Conditional occurrences before an unconditional one are overridden anyway.
  for (auto it = by_name_.begin(); it != by_name_.end();) {
    auto& list = it->second;
    if (!list.back()->conditional.empty()) {
      note(it->first + " " + quoted(join_values(list.back()->values)) +
           " is ignored: its value depends on control flow (set in " + list.back()->conditional +
           "), so trainsim does not pick a branch; give the value unconditionally");
      dropped_.insert(it->first);
      it = by_name_.erase(it);
      continue;
    }
    std::erase_if(list, [](const CommandFlag* flag) { return !flag->conditional.empty(); });
    ++it;
  }
}

void FlagReader::error(const char* name, const std::string& message) {
  issues_.push_back({"/args/" + std::string(name), message});
}

bool FlagReader::has(const char* name) { return last(name) != nullptr; }

const CommandFlag* FlagReader::last(const char* name) {
  const bool first_read = read_.insert(name).second;
  const auto it = by_name_.find(name);
  if (it == by_name_.end()) return nullptr;
  const auto& list = it->second;
  if (first_read) {
    for (const CommandFlag* flag : list) {
      if (flag->values != list.back()->values) {
        note(std::string(name) + " is given " + std::to_string(list.size()) +
             " times; the last value (" + quoted(join_values(list.back()->values)) +
             ") wins, as in argparse");
        break;
      }
    }
  }
  return list.back();
}

bool FlagReader::flag(const char* name) {
  const CommandFlag* f = last(name);
  if (f == nullptr) return false;
  if (!f->values.empty()) {
    error(name, "takes no value, got " + quoted(join_values(f->values)));
    return false;
  }
  if (!f->stray.empty()) {
    note(quoted(join_values(f->stray)) + " after " + name +
         " is ignored (the flag takes no value)");
  }
  return true;
}

std::optional<std::string> FlagReader::single(const char* name) {
  const CommandFlag* f = last(name);
  if (f == nullptr) return std::nullopt;
  if (!f->unresolved.empty()) {
    error(name, "uses " + quoted(f->unresolved) +
                    ", which bash computes at run time; replace it with its value");
    return std::nullopt;
  }
  if (f->values.empty()) {
    error(name, "expected a value");
    return std::nullopt;
  }
  if (f->values.size() > 1) {
    error(name, "expected one value, got " + quoted(join_values(f->values)));
    return std::nullopt;
  }
  return f->values[0];
}

std::optional<int64_t> FlagReader::integer(const char* name, int64_t min_value,
                                           int64_t max_value) {
  const auto text = single(name);
  if (!text) return std::nullopt;
  int64_t value = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec == std::errc::result_out_of_range) {
    error(name, "must be at most " + std::to_string(max_value) + ", got " + *text);
    return std::nullopt;
  }
  if (ec != std::errc() || ptr != end) {
    error(name, "expected integer, got " + quoted(*text));
    return std::nullopt;
  }
  if (value < min_value) {
    error(name, "must be at least " + std::to_string(min_value) + ", got " + *text);
    return std::nullopt;
  }
  if (value > max_value) {
    error(name, "must be at most " + std::to_string(max_value) + ", got " + *text);
    return std::nullopt;
  }
  return value;
}

int64_t FlagReader::required_integer(const char* name, int64_t min_value, int64_t max_value) {
  if (!has(name)) {
    error(name, "missing required flag");
    return min_value;
  }
  return integer(name, min_value, max_value).value_or(min_value);
}

std::optional<double> FlagReader::number(const char* name, double min_value, double max_value) {
  const auto text = single(name);
  if (!text) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text->c_str(), &end);
  if (text->empty() || end != text->c_str() + text->size() || !std::isfinite(value)) {
    error(name, "expected a finite number, got " + quoted(*text));
    return std::nullopt;
  }
  if (value < min_value || value > max_value) {
    error(name, "must be between " + schema::format_number(min_value) + " and " +
                    schema::format_number(max_value) + ", got " + *text);
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> FlagReader::text(const char* name) { return single(name); }

std::string FlagReader::run_time_value(const char* name) {
  const CommandFlag* f = last(name);
  return f == nullptr ? "" : f->unresolved;
}

std::optional<std::string> FlagReader::text_if_resolved(const char* name) {
  const CommandFlag* f = last(name);
  if (f == nullptr || !f->unresolved.empty()) return std::nullopt;
  return single(name);
}

std::optional<size_t> FlagReader::choice(const char* name,
                                         const std::vector<std::string>& allowed) {
  const auto text = single(name);
  if (!text) return std::nullopt;
  for (size_t i = 0; i < allowed.size(); ++i) {
    if (allowed[i] == *text) return i;
  }
  std::string list;
  for (const auto& option : allowed) list += (list.empty() ? "\"" : ", \"") + option + "\"";
  error(name, "expected one of " + list + ", got " + quoted(*text));
  return std::nullopt;
}

std::optional<std::vector<std::string>> FlagReader::list(const char* name) {
  const CommandFlag* f = last(name);
  if (f == nullptr) return std::nullopt;
  if (!f->unresolved.empty()) {
    error(name, "uses " + quoted(f->unresolved) +
                    ", which bash computes at run time; replace it with its value");
    return std::nullopt;
  }
  return f->values;
}

// An error about the flag a typo meant ("missing required flag") says which
// flag of the command was probably meant as it: the note alone is dropped with
// a failed import.
void FlagReader::point_at_typo(const std::string& typo, const std::string& meant) {
  if (by_name_.count(meant) != 0 || dropped_.count(meant) != 0) return;
  const std::string path = "/args/" + meant;
  for (Issue& issue : issues_) {
    if (issue.path == path) issue.message += " (the command has " + typo + ": a typo of " + meant + "?)";
  }
}

void FlagReader::finish() {
  // Hints for the first unknown flags only: a pasted command of thousands of
  // unknown flags must not cost thousands of table-wide distance searches.
  constexpr int kMaxTypoHints = 64;
  int hinted = 0;
  for (const std::string& name : order_) {
    if (read_.count(name) != 0 || dropped_.count(name) != 0) continue;
    const FlagInfo info = megatron_flag_info(name);
    if (!info.known) {
      const std::string meant = hinted++ < kMaxTypoHints ? likely_megatron_flag(name) : std::string();
      note(name + " is not a Megatron-LM flag trainsim knows: ignored" +
           (meant.empty() ? "" : " (did you mean " + meant + "?)"));
      if (!meant.empty()) point_at_typo(name, meant);
    } else if (info.role == FlagRole::kNotModelled) {
      note(name + " is ignored: " + info.note);
    } else if (info.role == FlagRole::kRead) {
      note(name + " is ignored: it has no effect together with the other flags");
    }
  }
}

}  // namespace trainsim::interop
