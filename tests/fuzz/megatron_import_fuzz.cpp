// libFuzzer target: import_megatron_json (a Megatron-LM launch command or
// script) and its inverse export_megatron_json. The input is the command text,
// optionally followed by "\n=====\n" and a system preset id. An imported config
// must give a well-formed envelope when estimated and when exported again.
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "trainsim/trainsim.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainsim::fuzz;
  const auto docs = split_documents(std::string_view(reinterpret_cast<const char*>(data), size), 2);
  const std::string output = trainsim::import_megatron_json(docs[0], docs[1]);
  const json envelope = check_envelope(output);
  if (!envelope["ok"].get<bool>()) return 0;
  const json& result = envelope["result"];
  if (!result.contains("config") || !result["config"].is_object()) fail("import without config", output);
  const std::string config = result["config"].dump();
  const std::string estimated = trainsim::estimate_json(config);
  const json estimate = check_envelope(estimated);
  if (estimate["ok"].get<bool>()) check_estimate_result(estimate["result"], estimated);
  check_envelope(trainsim::export_megatron_json(config));
  return 0;
}

// Command lines are not JSON: libFuzzer's byte mutations (with the flag dictionary).
