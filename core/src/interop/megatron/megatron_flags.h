// The Megatron-LM (and torchrun) flags trainsim knows, with their argparse
// arity and what the importer does with them. Names and arities follow
// megatron/training/arguments.py at core_v0.14.0 (NVIDIA/Megatron-LM) and
// torch/distributed/run.py.
#pragma once

#include <string>

#include "interop/megatron/megatron_args.h"

namespace trainsim::interop {

enum class FlagRole {
  kRead,         ///< mapped onto the trainsim config by megatron_import.cpp
  kHarmless,     ///< no effect on memory or step time (lr, logging, data paths...): ignored silently
  kNotModelled,  ///< changes memory or time in ways trainsim does not model: listed in notes
};

struct FlagInfo {
  FlagArity arity = FlagArity::kUnknown;
  FlagRole role = FlagRole::kNotModelled;
  const char* note = "";  ///< kNotModelled: why it matters
  bool known = false;     ///< false: not in the table at all
};

FlagInfo megatron_flag_info(const std::string& name);

// The known flag an unknown `name` most likely misspells ("--num-layer" ->
// "--num-layers"), or "" when no known flag is close (schema::likely_name).
// Flags Megatron-LM no longer accepts are never proposed.
std::string likely_megatron_flag(const std::string& name);

}  // namespace trainsim::interop
