// libFuzzer target: one config document through estimate_json (JSON reader,
// preset resolution, validation, the memory and time estimators, the result
// writer) and the exporters that take the same text. Every input must give a
// well-formed envelope; an ok estimate must be finite with parts that add up
// to their totals, and the canonical config (export_config_json) must
// estimate the same numbers.
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "trainsim/trainsim.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string output = trainsim::estimate_json(text);
  using namespace trainsim::fuzz;
  const json envelope = check_envelope(output);
  const bool ok = envelope["ok"].get<bool>();
  if (ok) check_estimate_result(envelope["result"], output);
  const std::string exported = trainsim::export_config_json(text);
  const json canonical = check_envelope(exported);
  if (canonical["ok"].get<bool>() != ok) fail("export_config_json disagrees with estimate_json", exported);
  if (ok) {
    const std::string again = trainsim::estimate_json(canonical["result"]["config"].dump());
    const json second = check_envelope(again);
    if (!second["ok"].get<bool>()) fail("the canonical config does not estimate", again);
    const std::string difference = first_difference(envelope["result"], second["result"], 1e-9);
    if (!difference.empty()) fail(("the canonical config estimates differently at " + difference).c_str(), exported);
  }
  if (size % 4 == 0) {  // a deterministic quarter of the inputs: these estimate again
    check_envelope(trainsim::export_csv_json(text));
    check_envelope(trainsim::export_megatron_json(text));
  }
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return trainsim::fuzz::mutate_input(data, size, max_size, seed, 1);
}
