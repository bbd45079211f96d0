#include "memory/trace_replay.h"

#include <algorithm>

namespace trainsim {
namespace {

// Keeps at most 2N runs of equal width while the events stream in, halving the
// resolution (merging neighbours, keeping maxima) whenever the list fills up.
class Downsampler {
 public:
  explicit Downsampler(int64_t points) : limit_(points) {}

  void add(int64_t index, int64_t allocated, int64_t reserved, const TraceLabel& label) {
    if (limit_ <= 0) return;
    if (filled_ == 0) current_ = ReplayPoint{index, allocated, reserved, label};
    if (allocated > current_.allocated_bytes) {
      current_.allocated_bytes = allocated;
      current_.label = label;
    }
    current_.reserved_bytes = std::max(current_.reserved_bytes, reserved);
    current_.event_index = index;
    if (++filled_ < width_) return;
    points_.push_back(current_);
    filled_ = 0;
    if (static_cast<int64_t>(points_.size()) >= 2 * limit_) halve();
  }

  std::vector<ReplayPoint> finish() {
    if (filled_ > 0) points_.push_back(current_);
    filled_ = 0;
    while (static_cast<int64_t>(points_.size()) > limit_) halve();
    return std::move(points_);
  }

 private:
  void halve() {
    std::vector<ReplayPoint> merged;
    merged.reserve(points_.size() / 2 + 1);
    for (size_t i = 0; i < points_.size(); i += 2) {
      ReplayPoint p = points_[i];
      if (i + 1 < points_.size()) {
        const ReplayPoint& q = points_[i + 1];
        if (q.allocated_bytes > p.allocated_bytes) {
          p.allocated_bytes = q.allocated_bytes;
          p.label = q.label;
        }
        p.reserved_bytes = std::max(p.reserved_bytes, q.reserved_bytes);
        p.event_index = q.event_index;
      }
      merged.push_back(p);
    }
    points_.swap(merged);
    width_ *= 2;
  }

  int64_t limit_;
  int64_t width_ = 1;
  int64_t filled_ = 0;
  ReplayPoint current_;
  std::vector<ReplayPoint> points_;
};

class ReplaySink final : public TraceSink {
 public:
  ReplaySink(CachingAllocatorSim& sim, int64_t points, StageReplay& out, const FitsStop* stop)
      : sim_(sim), series_(points), out_(out), stop_(stop) {}

  void label(const TraceLabel& label) override { label_ = label; }

  void allocate(int64_t id, int64_t bytes) override {
    if (out_.out_of_memory || out_.stopped) return;
    if (!sim_.allocate(id, bytes)) {
      out_.out_of_memory = true;
      out_.oom_request_bytes = bytes;
      out_.oom_label = label_;
      return;
    }
    after_event();
  }

  void release(int64_t id) override {
    if (out_.out_of_memory || out_.stopped) return;
    sim_.free(id);
    after_event();
  }

  void finish() {
    out_.stats = sim_.stats();
    out_.timeline = series_.finish();
  }

 private:
  void after_event() {
    const AllocatorStats& s = sim_.stats();
    ++out_.events;
    if (stop_ && (s.num_alloc_retries > 0 ||
                  stop_->usable_bytes - (static_cast<double>(s.reserved_bytes) +
                                         stop_->outside_bytes) < stop_->headroom_bytes)) {
      out_.stopped = true;
      return;
    }
    if (s.reserved_bytes > best_reserved_) {
      best_reserved_ = s.reserved_bytes;
      out_.at_peak_reserved = label_;
    }
    if (label_.section != TraceSection::kStep2) return;
    if (s.allocated_bytes > out_.steady_peak_allocated_bytes) {
      out_.steady_peak_allocated_bytes = s.allocated_bytes;
      out_.at_peak_allocated = label_;
    }
    out_.steady_peak_requested_bytes = std::max(out_.steady_peak_requested_bytes, s.requested_bytes);
    series_.add(steady_events_++, s.allocated_bytes, s.reserved_bytes, label_);
  }

  CachingAllocatorSim& sim_;
  Downsampler series_;
  StageReplay& out_;
  const FitsStop* stop_;
  TraceLabel label_;
  int64_t best_reserved_ = -1;
  int64_t steady_events_ = 0;
};

}  // namespace

StageReplay replay_stage_trace(const StageTraceSpec& spec, const AllocatorOptions& options,
                               int64_t timeline_points, const FitsStop* stop) {
  CachingAllocatorSim sim(options);
  return replay_stage_trace(sim, spec, options, timeline_points, stop);
}

StageReplay replay_stage_trace(CachingAllocatorSim& sim, const StageTraceSpec& spec,
                               const AllocatorOptions& options, int64_t timeline_points,
                               const FitsStop* stop) {
  sim.reset(options);
  StageReplay out;
  ReplaySink sink(sim, timeline_points, out, stop);
  emit_stage_trace(spec, sink);
  sink.finish();
  return out;
}

}  // namespace trainsim
