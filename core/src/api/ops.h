// The operations behind call() (api.cpp holds their table). Each takes the
// op's one text input and returns its envelope; none of them catches: call()
// and the named functions of trainsim.h run them inside guarded().
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

#include "trainsim/trainsim.h"

namespace trainsim::api {

// Reads a config document and checks its cross-field rules (validate.h);
// false with issues when it is not a valid config.
bool read_valid_config(const nlohmann::json& document, Config& config, Issues& issues);

// api/config_ops.cpp: one config document in.
ApiResult estimate(std::string_view config_text);
ApiResult export_megatron(std::string_view config_text);
ApiResult export_config(std::string_view config_text);
ApiResult export_csv(std::string_view config_text);
ApiResult presets(std::string_view ignored);
ApiResult describe_schema(std::string_view ignored);
ApiResult preset(std::string_view id);

// api/interop_ops.cpp: foreign formats in.
ApiResult import_hf(std::string_view config_json_text);
ApiResult import_megatron(std::string_view args_text, std::string_view system_preset);
ApiResult import_simumax(std::string_view model_text, std::string_view strategy_text,
                         std::string_view system_text);
// The same with one JSON input: {"args": "...", "system": "id or empty"} and
// {"model": "...", "strategy": "...", "system": "... or empty"}.
ApiResult import_megatron_document(std::string_view input);
ApiResult import_simumax_document(std::string_view input);
// {"model": <model section>} -> {"preset": id or null, "label": ...}: the model
// preset equal to the model (schema/model_preset_match.h), so an import selects it.
ApiResult match_model_preset(std::string_view input);

// api/memory_ops.cpp: {"config": ..., "stage": n} -> the stage's allocation trace.
ApiResult allocation_trace(std::string_view input);

// api/trace_ops.cpp: a config document -> one step as a Chrome Trace Event / Perfetto document.
ApiResult trace(std::string_view config_text);

// api/search_ops.cpp: search and what-if documents in.
ApiResult search(std::string_view search_text);
ApiResult search_merge(std::string_view pages_text);
ApiResult whatif(std::string_view config_text);
ApiResult scale_system(std::string_view input);

}  // namespace trainsim::api
