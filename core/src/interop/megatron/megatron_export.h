// Config -> Megatron-LM launch command: torchrun flags plus pretrain_gpt.py
// flags. The exact inverse of megatron_import.h for every field the importer
// reads; fields Megatron-LM has no flag for are listed in notes.
#pragma once

#include <string>
#include <vector>

#include "trainsim/spec.h"

namespace trainsim::interop {

struct MegatronCommand {
  std::vector<std::string> launcher_args;  ///< torchrun: --nnodes N --nproc-per-node G
  std::vector<std::string> args;           ///< pretrain_gpt.py: "--flag", "value", ...
  std::vector<std::string> notes;
};

// `config` must be validated (parse_config).
MegatronCommand megatron_command(const Config& config);

// "torchrun --nnodes 2 --nproc-per-node 8 pretrain_gpt.py \\\n    --num-layers 32 \\\n ..."
// with shell quoting where a value needs it.
std::string megatron_command_text(const MegatronCommand& command);

}  // namespace trainsim::interop
