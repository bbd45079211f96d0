// One training step as the estimate models it, laid out as slices on threads
// (report/trace_json.h writes them as a Chrome Trace Event / Perfetto trace).
//
// Nothing is simulated again: the passes and their start and end times are the
// estimate's timeline (the pipeline simulator's, time/pipeline_run.h); each
// pass is split into the parts its duration is the sum of (time/chunk_time.h:
// compute, TP, CP and EP collectives, host waits), priced by the same
// functions as the estimate. The model sums those parts and does not order
// them inside a pass, so the layout lays them end to end in a fixed order
// (compute, TP, CP, EP, host), a drawing convention. DualPipe's overlapped F&B
// pair runs the expert all-to-all of both passes beside their other work
// (overlapped_pair_s(), time/schedule_runner.h), so its EP slice starts with
// the pair.
//
// Memory counters: each stage's static bytes (parameters, gradients, optimizer
// state, buffers) plus the activations its live micro-batches store
// (chunk_stored_bytes(), memory/stage_memory.h): stored at a forward's start,
// freed at the end of its backward (a W-split schedule frees the share
// weight_kept_fraction() at the W's end). The running op's transient working
// set is left out, so the counter's maximum is at most the estimate's peak.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "trainsim/result.h"
#include "trainsim/spec.h"

namespace trainsim::report {

// Thread ids of one stage's process. Transfers take lanes kPipelineP2pTid, +1, ...
// so that concurrent ones (a batched send and receive) never share a thread.
enum TraceTid : int32_t {
  kComputeTid = 1,
  kTpTid = 2,
  kCpTid = 3,
  kEpTid = 4,
  kHostTid = 5,
  kDpTid = 6,
  kPipelineP2pTid = 10,
};

struct TraceSlice {
  int32_t stage = 0;
  int32_t tid = kComputeTid;
  std::string name;  ///< e.g. "F mb 3 chunk 0"
  std::string cat;   ///< compute, tp_comm, cp_comm, ep_comm, host_wait, pp_p2p, dp_comm, optimizer, straggler
  double start_s = 0.0;
  double duration_s = 0.0;
  int64_t micro_batch = -1;
  int64_t chunk = -1;
};

// An activation (forward) or its gradient (backward) crossing stages.
struct TraceFlow {
  int64_t id = 0;
  std::string cat;  ///< activation | gradient
  int64_t micro_batch = 0;
  int32_t from_stage = 0;
  double from_s = 0.0;  ///< inside the sending pass's compute slice
  int32_t to_stage = 0;
  double to_s = 0.0;    ///< inside the receiving pass's compute slice
};

struct TraceCounter {
  int32_t stage = 0;
  double at_s = 0.0;
  double static_bytes = 0.0;
  double activations_bytes = 0.0;
};

struct TraceLayout {
  std::vector<std::string> stage_names;  ///< [stage] "stage 0 (layers 0-7)"
  std::vector<TraceSlice> slices;
  std::vector<TraceFlow> flows;
  std::vector<TraceCounter> counters;  ///< per stage in time order
  std::vector<std::vector<std::pair<int32_t, std::string>>> threads;  ///< [stage] used (tid, name)
};

// Precondition: estimate is estimate(config) and estimate.timeline.included.
TraceLayout trace_layout(const Config& config, const Estimate& estimate);

}  // namespace trainsim::report
