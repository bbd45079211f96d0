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

/// What call() returns: the envelope and its status, so that no caller has to
/// read the status back out of the text.
struct ApiResult {
  std::string envelope;
  bool ok = false;        ///< "ok": true
  bool internal = false;  ///< a bug inside trainsim ("internal": true); never bad input
};

/// Runs one operation on its text input. Ops (README "API"): estimate, presets,
/// preset (the id as raw text), schema, import_hf, import_megatron
/// ({"args": "<script>", "system": "<preset id or empty>"}), import_simumax
/// ({"model": "<text>", "strategy": "<text>", "system": "<text or empty>"}),
/// match_model_preset ({"model": <model section>} -> {"preset": id or null, "label"}),
/// export_megatron, export_config, export_csv, search, search_merge, whatif,
/// scale_system ({"system": <object or id>, "figure": "<figure>", "factor": <number>}).
/// An unknown op is an error envelope with path "". Never throws.
ApiResult call(std::string_view op, std::string_view input);

/// call(op, input).envelope: the WASM module's one entry point.
std::string call_json(std::string_view op, std::string_view input);

/// call_json restricted to one group of ops, for the page's two WebAssembly
/// modules: the calculator's (estimate, presets, preset, schema, export_config,
/// export_csv) and the tools' (search, search_merge, whatif, scale_system,
/// import_hf, import_megatron, import_simumax, match_model_preset, export_megatron,
/// allocation_trace, trace), which the page loads when a tool is first used. Another
/// op is an unknown-op error envelope naming the group's ops.
std::string call_json_page(std::string_view op, std::string_view input);
std::string call_json_tools(std::string_view op, std::string_view input);

/// Parses, validates and estimates one configuration document.
/// Example: estimate_json(R"({"model":"llama3-8b","training":{...},"system":"h100-sxm-80gb"})")
std::string estimate_json(std::string_view config_text);

/// The published schema of config, search and what-if documents: keys, types,
/// enums, defaults, bounds, units and help text (README "API").
std::string schema_json();

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

/// Strategy search: the fastest plans that fit for a model, a system, GPU
/// count(s) and a global batch. Document (README "Search and what-if"):
///   {"model": "llama3-70b", "system": "h100-sxm-80gb", "num_gpus": 1024,
///    "global_batch_size": 1024 | "global_batch_tokens": N, "seq_len": 8192,
///    "constraints": {"tp": [1, 2, 4, 8], "micro_batch_size": [1, 2], ...},
///    "memory_headroom": 0.05, "top_k": 10, "objective": "step_time",
///    "page": {"offset": 0, "limit": 2000}, "include_points": false}
/// Result: {"objective", "top_k", "capacity_bytes", "memory_budget_bytes",
///   "page": {"offset", "end", "candidates"}, "counts": {considered, invalid(_by_reason),
///   candidates, pruned(_by_reason), evaluated, infeasible(_by_reason), feasible, timed},
///   "top": [{"rank", "index", "metrics", "config", "result"}], "pareto": [{"index",
///   "metrics", "config"}], "points": {"columns", "rows"} (include_points)}. Each
///   "config" is a config document estimate_json accepts; "result" is its estimate
///   (without the timeline).
/// Progress and cancel (a Web Worker): run the same document with "page"
/// {"offset": 0, "limit": L}, then offset L, 2L, ... until page.end reaches
/// page.candidates (known after the first call), reporting end / candidates;
/// stop calling to cancel; then search_merge_json({"pages": [result, ...]}) gives
/// exactly the result of one call without "page" (except counts.timed, the
/// pipelines simulated, which sums the pages' own).
std::string search_json(std::string_view search_text);

/// Merges page results of one search (consecutive pages, in order):
/// {"pages": [result or envelope, ...]} -> the envelope of the whole search.
std::string search_merge_json(std::string_view pages_text);

/// What-if for one config: step time, speedup, peak memory and fit when each
/// system figure (peak_flops, hbm_bandwidth, hbm_capacity, intra_node_bandwidth,
/// inter_node_bandwidth, intra_node_latency, inter_node_latency, kernel_latency)
/// is scaled by each factor (default 0.5, 0.75, 1, 1.5, 2, 3, 4). Input: a config
/// document, optionally with "whatif": {"factors": [...], "figures": [...]}.
/// Result: {"baseline", "factors", "figures": [{"figure", "smaller_is_better",
/// "speedup_when_twice_as_good", "points": [{"factor", "iteration_s", "speedup",
/// "tokens_per_s_per_gpu", "peak_bytes", "fits"}]}], "most_sensitive"}.
std::string whatif_json(std::string_view config_text);

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
