// Megatron-LM command line / launch script -> trainsim config document.
// Semantics and defaults follow megatron/training/arguments.py (parse_args,
// validate_args) at NVIDIA/Megatron-LM core_v0.14.0; the exporter
// (megatron_export.h) writes exactly the flags read here.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "interop/megatron/megatron_reader.h"
#include "trainsim/issue.h"

namespace trainsim::interop {

// {"config": {"model":..., "training":..., "system":...}, "notes": [...]} or
// null with issues (paths "/args/<flag>"). system_preset names the system
// ("" = h100-sxm-80gb, noted); its num_gpus comes from torchrun's
// --nnodes x --nproc-per-node when present.
nlohmann::json import_megatron(std::string_view text, std::string_view system_preset,
                               Issues& issues);

// The model section (megatron_import_model.cpp). Sets num_layers for the
// training section's pipeline arithmetic.
nlohmann::json read_megatron_model(FlagReader& r, int64_t& num_layers);

// Megatron-LM's --moe-layer-freq: an integer N (layer i is MoE iff i % N == 0) or a
// Python list expression with one 0/1 per layer. Sets moe["num_dense_layers"] for a
// leading dense block, else moe["moe_layer_freq"] (the pattern); false after an error.
bool read_moe_layer_freq(FlagReader& r, int64_t num_layers, nlohmann::json& moe);

// Values estimate would reject (tp not dividing the heads, a global batch not
// divisible...), checked by the same readers and validate() estimate runs and
// reported at the flag that set them (megatron_validate.cpp). Without the GPU
// count, rules that need it are skipped.
void check_imported_config(const nlohmann::json& config, const FlagReader& r, bool gpus_known,
                           Issues& issues);

// A script larger than this is not a launch script (they are a few KiB).
inline constexpr size_t kMaxScriptBytes = size_t{1} << 20;

}  // namespace trainsim::interop
