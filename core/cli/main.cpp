// trainsim command-line interface. Every command prints one JSON envelope on
// stdout: exit 0 when ok, 2 for bad input (including unreadable files),
// 3 for an internal error, 1 for bad usage (usage text on stderr).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainsim/trainsim.h"

namespace {

constexpr const char* kUsage = R"(usage:
  trainsim estimate CONFIG.json        estimate memory (and time) of one config; '-' reads stdin
  trainsim search SPEC.json            the fastest plans that fit (strategy search)
  trainsim whatif CONFIG.json          step time when each system figure is scaled 0.5x..4x
  trainsim presets [ID]                list the embedded presets, or print one
  trainsim schema                      the documents' keys, types, defaults, bounds and help
  trainsim import simumax --model M.json --strategy S.json [--system SYS.json]
                                       convert SimuMax config files into a trainsim config
  trainsim import hf CONFIG.json       convert a Hugging Face config.json into a trainsim model
  trainsim import megatron ARGS.txt [--system ID]
                                       convert a Megatron-LM command line or script into a config
  trainsim export megatron|json|csv CONFIG.json [--raw]
                                       the config as Megatron-LM flags, as canonical trainsim
                                       JSON, or its estimate as CSV; --raw prints only the text
  trainsim alloc-trace CONFIG.json [--stage N]
                                       the allocation trace of pipeline stage N (default 0) as
                                       [id, size_bytes, is_free] events, for a GPU replay
  trainsim trace CONFIG.json [-o OUT.json]
                                       one training step as the estimate models it, as a Chrome
                                       Trace Event / Perfetto JSON (ui.perfetto.dev,
                                       chrome://tracing); -o writes the trace itself to OUT.json
                                       and prints a summary envelope
  trainsim version
Output is one JSON envelope: {"schema_version":1,"ok":true,"result":{...}} or
{"schema_version":1,"ok":false,"errors":[{"path":"/training/tp","message":"..."}]}.
)";

// Larger inputs are refused before they are read whole (the core itself
// reads documents of at most 4 MiB and launch scripts of at most 1 MiB, and
// says so at the document's path).
constexpr std::streamsize kMaxInputBytes = std::streamsize{16} << 20;

// Reads at most kMaxInputBytes + 1 bytes of `in`.
bool read_bounded(std::istream& in, const std::string& name, std::string& text, std::string& error) {
  text.resize(static_cast<size_t>(kMaxInputBytes) + 1);
  in.read(text.data(), kMaxInputBytes + 1);
  text.resize(static_cast<size_t>(in.gcount()));
  if (in.bad()) {
    error = "cannot read " + name;
    return false;
  }
  if (static_cast<std::streamsize>(text.size()) > kMaxInputBytes) {
    error = name + " is larger than " + std::to_string(kMaxInputBytes >> 20) + " MiB";
    return false;
  }
  return true;
}

bool read_input(const std::string& path, std::string& text, std::string& error) {
  if (path == "-") return read_bounded(std::cin, "standard input", text, error);
  std::error_code code;
  if (std::filesystem::is_directory(path, code)) {
    error = "\"" + path + "\" is a directory, not a file";
    return false;
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot read file \"" + path + "\"";
    return false;
  }
  return read_bounded(file, "file \"" + path + "\"", text, error);
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      static const char* kHex = "0123456789abcdef";
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// Prints the envelope; the exit code follows its status.
int emit(const trainsim::ApiResult& result) {
  std::cout << result.envelope << "\n";
  if (result.ok) return 0;
  return result.internal ? 3 : 2;
}

int file_error(const std::string& path_in_args, const std::string& message) {
  return emit({"{\"schema_version\":1,\"ok\":false,\"errors\":[{\"path\":" +
                   json_string(path_in_args) + ",\"message\":" + json_string(message) + "}]}",
               false, false});
}

// An op input made of named texts ({"args": "...", "system": "..."}).
std::string texts_document(const std::map<std::string, std::string>& texts) {
  nlohmann::json document = nlohmann::json::object();
  for (const auto& [key, text] : texts) document[key] = text;
  return document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

int usage_error(const std::string& message) {
  std::cerr << "trainsim: " << message << "\n" << kUsage;
  return 1;
}

int run_import_simumax(const std::vector<std::string>& args) {
  std::map<std::string, std::string> files;
  for (size_t i = 0; i < args.size(); i += 2) {
    const std::string& flag = args[i];
    if ((flag != "--model" && flag != "--strategy" && flag != "--system") ||
        i + 1 >= args.size()) {
      return usage_error("import simumax takes --model M.json --strategy S.json [--system SYS.json]");
    }
    if (files.count(flag.substr(2)) != 0) return usage_error(flag + " is given more than once");
    files[flag.substr(2)] = args[i + 1];
  }
  if (files.count("model") == 0 || files.count("strategy") == 0) {
    return usage_error("import simumax needs --model and --strategy");
  }
  std::map<std::string, std::string> texts;
  for (const auto& [kind, path] : files) {
    std::string error;
    if (!read_input(path, texts[kind], error)) return file_error("--" + kind, error);
    if (texts[kind].empty()) return file_error("--" + kind, "file \"" + path + "\" is empty");
  }
  return emit(trainsim::call("import_simumax", texts_document(texts)));
}

int run_import_text(const std::string& kind, const std::vector<std::string>& args) {
  const bool megatron = kind == "megatron";
  const bool with_system = megatron && args.size() == 3 && args[1] == "--system";
  if (args.size() != 1 && !with_system) {
    return usage_error(megatron ? "import megatron takes ARGS.txt (or '-') [--system ID]"
                                : "import hf takes one CONFIG.json (or '-')");
  }
  std::string text;
  std::string error;
  if (!read_input(args[0], text, error)) return file_error("", error);
  if (!megatron) return emit(trainsim::call("import_hf", text));
  return emit(trainsim::call("import_megatron",
                             texts_document({{"args", text}, {"system", with_system ? args[2] : ""}})));
}

// --raw prints the payload itself (command, config, CSV) when the export succeeded.
int run_export(const std::vector<std::string>& args) {
  const bool raw = args.size() == 3 && args[2] == "--raw";
  if (args.size() != 2 && !raw) return usage_error("export takes megatron|json|csv CONFIG.json [--raw]");
  const std::string& format = args[0];
  if (format != "megatron" && format != "json" && format != "csv") {
    return usage_error("export supports: megatron, json, csv");
  }
  std::string text;
  std::string error;
  if (!read_input(args[1], text, error)) return file_error("", error);
  const trainsim::ApiResult envelope = trainsim::call(
      format == "megatron" ? "export_megatron" : format == "json" ? "export_config" : "export_csv", text);
  if (!raw || !envelope.ok) return emit(envelope);
  const auto result = nlohmann::json::parse(envelope.envelope)["result"];
  std::cout << (format == "megatron" ? result["command"].get<std::string>()
                : format == "json"   ? result["config"].dump(2) + "\n"
                                     : result["csv"].get<std::string>());
  return 0;
}

constexpr const char* kTraceHelp = R"help(usage: trainsim trace CONFIG.json [-o OUT.json]
One training step of CONFIG.json ('-' reads stdin) as the estimate models it, in the
Chrome Trace Event Format (JSON Object Format) that ui.perfetto.dev and chrome://tracing open:
  process per pipeline stage   "stage N (layers a-b)"
  threads                      compute, TP / CP collectives, EP all-to-all, host waits,
                               DP collectives, PP send/recv (Megatron's blocking p2p)
  complete events ("X")        each micro-batch's F / B / W per chunk as the pipeline
                               simulation scheduled it, split into its parts (ts, dur in us)
  flow events ("s"/"f")        activations and gradients crossing stages, per micro-batch
  counters ("C")               modelled allocated bytes per stage (static + live activations)
  otherData                    trainsim version, config summary, step time, per-stage figures
Without -o the envelope's "result" is the trace; with -o OUT.json the trace is written to
OUT.json and the envelope says what was written. Bad input: the error envelope, exit 2.
)help";

// trace CONFIG.json [-o OUT.json]
int run_trace(const std::vector<std::string>& args) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << kTraceHelp;
    return 0;
  }
  std::string config_path;
  std::string out_path;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-o" || args[i] == "--output") {
      if (i + 1 >= args.size() || !out_path.empty()) return usage_error("trace takes CONFIG.json [-o OUT.json]");
      out_path = args[++i];
    } else if (config_path.empty()) {
      config_path = args[i];
    } else {
      return usage_error("trace takes CONFIG.json [-o OUT.json]");
    }
  }
  if (config_path.empty()) return usage_error("trace takes CONFIG.json [-o OUT.json]");
  std::string text;
  std::string error;
  if (!read_input(config_path, text, error)) return file_error("", error);
  const trainsim::ApiResult envelope = trainsim::call("trace", text);
  if (out_path.empty() || !envelope.ok) return emit(envelope);
  const auto trace = nlohmann::json::parse(envelope.envelope)["result"];
  const std::string trace_text = trace.dump() + "\n";
  std::ofstream out(out_path, std::ios::binary);
  if (!out || !out.write(trace_text.data(), static_cast<std::streamsize>(trace_text.size()))) {
    return file_error("-o", "cannot write file \"" + out_path + "\"");
  }
  const nlohmann::json summary = {{"written", out_path},
                                  {"bytes", trace_text.size()},
                                  {"events", trace["traceEvents"].size()}};
  return emit({"{\"schema_version\":1,\"ok\":true,\"result\":" + summary.dump() + "}", true, false});
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 1 : 0;
  }
  const std::string& command = args[0];
  if (command == "version") {
    std::cout << trainsim::version() << "\n";
    return 0;
  }
  if (command == "estimate") {
    if (args.size() != 2) return usage_error("estimate takes one CONFIG.json (or '-')");
    std::string text;
    std::string error;
    if (!read_input(args[1], text, error)) return file_error("", error);
    return emit(trainsim::call("estimate", text));
  }
  if (command == "search" || command == "whatif") {
    if (args.size() != 2) return usage_error(command + " takes one JSON file (or '-')");
    std::string text;
    std::string error;
    if (!read_input(args[1], text, error)) return file_error("", error);
    return emit(trainsim::call(command, text));
  }
  if (command == "alloc-trace") {
    if (args.size() != 2 && !(args.size() == 4 && args[2] == "--stage")) {
      return usage_error("alloc-trace takes CONFIG.json [--stage N]");
    }
    std::string text;
    std::string error;
    if (!read_input(args[1], text, error)) return file_error("", error);
    std::string input = "{\"config\": " + text;
    if (args.size() == 4) input += ", \"stage\": " + args[3];
    return emit(trainsim::call("allocation_trace", input + "}"));
  }
  if (command == "schema") {
    if (args.size() != 1) return usage_error("schema takes no argument");
    return emit(trainsim::call("schema", ""));
  }
  if (command == "presets") {
    if (args.size() > 2) return usage_error("presets takes at most one ID");
    return emit(args.size() == 2 ? trainsim::call("preset", args[1]) : trainsim::call("presets", ""));
  }
  if (command == "import") {
    if (args.size() >= 2 && (args[1] == "hf" || args[1] == "megatron")) {
      return run_import_text(args[1], std::vector<std::string>(args.begin() + 2, args.end()));
    }
    if (args.size() < 2 || args[1] != "simumax") {
      return usage_error("import supports: simumax, hf, megatron");
    }
    return run_import_simumax(std::vector<std::string>(args.begin() + 2, args.end()));
  }
  if (command == "trace") return run_trace(std::vector<std::string>(args.begin() + 1, args.end()));
  if (command == "export") return run_export(std::vector<std::string>(args.begin() + 1, args.end()));
  return usage_error("unknown command \"" + command + "\"");
}
