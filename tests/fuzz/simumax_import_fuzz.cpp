// libFuzzer target: import_simumax_json. The input is three documents (SimuMax
// model, strategy and system config) separated by "\n=====\n"; a missing third
// one is the empty system text. An imported config must itself give a
// well-formed envelope when estimated (a clear error is fine, a bug is not).
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "trainsim/trainsim.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainsim::fuzz;
  const auto docs = split_documents(std::string_view(reinterpret_cast<const char*>(data), size), 3);
  const std::string output = trainsim::import_simumax_json(docs[0], docs[1], docs[2]);
  const json envelope = check_envelope(output);
  if (!envelope["ok"].get<bool>()) return 0;
  const json& result = envelope["result"];
  if (!result.contains("config") || !result["config"].is_object()) fail("import without config", output);
  const std::string estimated = trainsim::estimate_json(result["config"].dump());
  const json estimate = check_envelope(estimated);
  if (estimate["ok"].get<bool>()) check_estimate_result(estimate["result"], estimated);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return trainsim::fuzz::mutate_input(data, size, max_size, seed, 3);
}
