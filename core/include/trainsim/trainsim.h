// trainsim public API: strings in, strings out. Every function here returns a
// JSON envelope and never throws for bad input:
//   {"schema_version":1,"ok":true,"result":{...}}
//   {"schema_version":1,"ok":false,"errors":[{"path":"/training/tp","message":"..."}]}
// A bug inside trainsim yields {"schema_version":1,"ok":false,"internal":true,...}.
#pragma once

#include <string>
#include <string_view>

#include "trainsim/issue.h"
#include "trainsim/result.h"
#include "trainsim/spec.h"

namespace trainsim {

inline constexpr int kSchemaVersion = 1;

/// Parses, validates and estimates one configuration document.
/// Example: estimate_json(R"({"model":"llama3-8b","training":{...},"system":"h100-sxm-80gb"})")
std::string estimate_json(std::string_view config_text);

/// Lists the embedded preset ids: {"ok":true,"result":{"models":[...],"systems":[...]}}.
std::string presets_json();

/// Returns one embedded preset document (with its sources) by id.
std::string preset_json(std::string_view id);

/// Converts SimuMax model/strategy/system config texts into a trainsim config.
/// system_text may be empty (the config then names no system and uses a100-pcie-80gb).
std::string import_simumax_json(std::string_view model_text, std::string_view strategy_text,
                                std::string_view system_text);

/// Converts a Hugging Face config.json text into a trainsim "model" object:
/// {"ok":true,"result":{"model":{...},"notes":[...]}}. Errors name "/hf/<key>".
/// Example: import_hf_json(R"({"model_type":"llama","hidden_size":4096,...})")
std::string import_hf_json(std::string_view config_json_text);

/// Converts a Megatron-LM pretrain_gpt.py command line or launch script into a
/// config: {"ok":true,"result":{"config":{...},"notes":[...]}}. Errors name
/// "/args/<flag>". system_preset is the system's preset id ("" = h100-sxm-80gb, noted).
std::string import_megatron_json(std::string_view args_text, std::string_view system_preset);

/// A config as Megatron-LM flags, the inverse of import_megatron_json:
/// {"ok":true,"result":{"launcher_args":[...],"args":[...],"command":"torchrun ...","notes":[...]}}.
std::string export_megatron_json(std::string_view config_text);

/// A config as canonical trainsim JSON (presets expanded, every default written):
/// {"ok":true,"result":{"config":{...}}}.
std::string export_config_json(std::string_view config_text);

/// Estimates a config and returns the result as CSV (section,stage,metric,value,unit):
/// {"ok":true,"result":{"csv":"section,stage,metric,value,unit\n..."}}.
std::string export_csv_json(std::string_view config_text);

/// The library version, e.g. "0.1.0".
std::string version();

/// Parses and validates a configuration document into a Config.
/// Returns false and fills issues when the input is bad.
bool parse_config(std::string_view config_text, Config& config, Issues& issues);

/// The pure estimator: a validated Config in, an Estimate out.
Estimate estimate(const Config& config);

/// Builds the error envelope for a bug caught at an API boundary.
std::string internal_error_json(std::string_view what);

}  // namespace trainsim
