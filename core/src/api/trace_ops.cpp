// The step trace (issue "The page a demanding infra engineer trusts"): one
// config document in, a Chrome Trace Event / Perfetto document out
// (report/trace_json.h). Bad input is answered as estimate answers it.
#include "api/envelope.h"
#include "api/ops.h"
#include "report/trace_json.h"
#include "time/step_time.h"

namespace trainsim::api {

ApiResult trace(std::string_view config_text) {
  Config config;
  Issues issues;
  if (!parse_config(config_text, config, issues)) return error_envelope(issues);
  const Estimate estimate = trainsim::estimate(config);
  if (!estimate.timeline.included) {
    // The estimate lists the passes only up to its timeline's limit.
    const auto chunks = static_cast<int64_t>(estimate.memory.stages.front().layers_per_chunk.size());
    const int64_t passes = config.training.parallel.pp * chunks * config.training.num_micro_batches;
    return error_envelope({{"/training/num_micro_batches",
                            "the trace shows at most " + std::to_string(kMaxTimelinePasses) +
                                " pipeline passes (stages x chunks x micro-batches); this plan has " +
                                std::to_string(passes) + ": lower num_micro_batches"}});
  }
  return ok_envelope(report::step_trace_json(config, estimate));
}

}  // namespace trainsim::api
