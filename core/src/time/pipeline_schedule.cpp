#include "time/pipeline_schedule.h"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "trainsim/issue.h"

namespace trainsim {
namespace {

void check_input(const ScheduleInput& input) {
  TRAINSIM_CHECK(!input.phases.empty() && !input.phases.front().empty(),
                 "pipeline schedule: phases must be a non-empty [stage][chunk] table");
  const size_t num_chunks = input.phases.front().size();
  for (const auto& stage : input.phases) {
    TRAINSIM_CHECK(stage.size() == num_chunks,
                   "pipeline schedule: every stage must have the same number of virtual chunks");
  }
  TRAINSIM_CHECK(input.num_micro_batches >= 1, "pipeline schedule: num_micro_batches must be >= 1");
  TRAINSIM_CHECK(input.p2p.empty() || input.p2p.size() == input.phases.size(),
                 "pipeline schedule: p2p must be empty or have one entry per stage");
  TRAINSIM_CHECK(input.merged_saving_s.empty() ||
                     (input.merged_saving_s.size() == input.phases.size() &&
                      input.merged_saving_s.front().size() == num_chunks * num_chunks),
                 "pipeline schedule: merged_saving_s must be empty or a [stage][chunk x chunk] table");
  TRAINSIM_CHECK(input.merged_saving_s.empty() || input.phases.size() == 1 || num_chunks > 1,
                 "pipeline schedule: merged steps need the interleaved schedule when pp > 1");
}

}  // namespace

bool pipeline_schedule_supported(int64_t pp, int64_t vpp, int64_t num_micro_batches,
                                 int64_t microbatch_group_size) {
  if (pp < 1 || vpp < 1 || num_micro_batches < 1) return false;
  if (pp == 1 || vpp == 1) return true;
  const int64_t group_size = microbatch_group_size == 0 ? pp : microbatch_group_size;
  return group_size == pp && num_micro_batches % pp == 0;
}

ScheduleResult simulate_pipeline(const ScheduleInput& input) {
  check_input(input);
  const auto pp = static_cast<int64_t>(input.phases.size());
  const auto vpp = static_cast<int64_t>(input.phases.front().size());
  TRAINSIM_CHECK(
      pipeline_schedule_supported(pp, vpp, input.num_micro_batches, input.microbatch_group_size),
      "pipeline schedule: unsupported interleaved sizes reached the simulator");
  if (pp == 1) {
    TRAINSIM_CHECK(input.merged_saving_s.empty() || vpp == 1,
                   "pipeline schedule: merged steps without pipelining need one chunk");
    return detail::simulate_sequential(input);
  }
  if (vpp == 1) return detail::simulate_1f1b(input);
  return detail::simulate_interleaved(input);
}

ScheduleResult pipeline_lower_bound(const ScheduleInput& input) {
  check_input(input);
  ScheduleResult result;
  const auto micro_batches = static_cast<double>(input.num_micro_batches);
  double upstream_s = 0.0;  // sum over earlier stages of chunk 0's forward + backward
  for (const auto& stage : input.phases) {
    double busy_s = 0.0;
    for (const PhaseTimes& chunk : stage) busy_s += chunk.forward_s + chunk.backward_s;
    const double finish_s = upstream_s + micro_batches * busy_s;
    result.stage_finish_s.push_back(finish_s);
    result.makespan_s = std::max(result.makespan_s, finish_s);
    upstream_s += stage.front().forward_s + stage.front().backward_s;
  }
  return result;
}

namespace detail {

// Megatron-LM forward_backward_no_pipelining: per micro-batch, the forward of
// every chunk, then the backward of every chunk in reverse.
ScheduleResult simulate_sequential(const ScheduleInput& input) {
  ScheduleResult result;
  const auto& chunks = input.phases.front();
  const auto vpp = static_cast<int64_t>(chunks.size());
  std::vector<TimelineEvent> events;
  if (input.record_timeline) events.reserve(static_cast<size_t>(2 * vpp * input.num_micro_batches));
  double clock_s = 0.0;
  auto run = [&](EventKind kind, int64_t micro_batch, int64_t chunk, double duration_s) {
    const double start_s = clock_s;
    clock_s += duration_s;
    if (input.record_timeline) events.push_back({kind, micro_batch, chunk, start_s, clock_s});
  };
  result.stage_saved_s = {0.0};
  if (!input.merged_saving_s.empty()) {
    // combined_1f1b_schedule_for_no_pipelining: the first forward alone, then micro-batch
    // i + 1's forward merged with i's backward, then the last backward alone.
    const double saving_s = input.merged_saving_s.front().front();
    const int64_t m = input.num_micro_batches;
    run(EventKind::kForward, 0, 0, chunks[0].forward_s);
    const double pair_s = chunks[0].forward_s + chunks[0].backward_s;
    const double scale = pair_s > 0.0 ? (pair_s - saving_s) / pair_s : 1.0;
    for (int64_t mb = 1; mb < m; ++mb) {
      run(EventKind::kForward, mb, 0, scale * chunks[0].forward_s);
      run(EventKind::kBackward, mb - 1, 0, scale * chunks[0].backward_s);
      result.stage_saved_s[0] += saving_s;
    }
    run(EventKind::kBackward, m - 1, 0, chunks[0].backward_s);
  } else {
    for (int64_t mb = 0; mb < input.num_micro_batches; ++mb) {
      for (int64_t c = 0; c < vpp; ++c) run(EventKind::kForward, mb, c, chunks[c].forward_s);
      for (int64_t c = vpp - 1; c >= 0; --c) run(EventKind::kBackward, mb, c, chunks[c].backward_s);
    }
  }
  result.makespan_s = clock_s;
  result.stage_finish_s = {clock_s};
  if (input.record_timeline) result.timeline.push_back(std::move(events));
  return result;
}

}  // namespace detail
}  // namespace trainsim
