// libFuzzer target: import_hf_json (a Hugging Face config.json). An imported
// model must itself give a well-formed envelope when estimated on one GPU (a
// clear error is fine, a bug is not).
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "trainsim/trainsim.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainsim::fuzz;
  const std::string output =
      trainsim::import_hf_json(std::string_view(reinterpret_cast<const char*>(data), size));
  const json envelope = check_envelope(output);
  if (!envelope["ok"].get<bool>()) return 0;
  const json& result = envelope["result"];
  if (!result.contains("model") || !result["model"].is_object()) fail("import without model", output);
  const json config = {{"model", result["model"]},
                       {"training", {{"seq_len", 1024}, {"micro_batch_size", 1}, {"global_batch_size", 2}}},
                       {"system", {{"preset", "h100-sxm-80gb"}, {"num_gpus", 1}}}};
  const std::string estimated = trainsim::estimate_json(config.dump());
  const json estimate = check_envelope(estimated);
  if (estimate["ok"].get<bool>()) check_estimate_result(estimate["result"], estimated);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return trainsim::fuzz::mutate_input(data, size, max_size, seed, 1);
}
