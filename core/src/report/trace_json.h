// One training step as a Chrome Trace Event Format document (JSON Object
// Format), which ui.perfetto.dev and chrome://tracing open: one process per
// pipeline stage, threads for compute, each communication stream and the host
// waits, complete events ("X") for the passes' parts, flow events ("s"/"f")
// for activations and gradients crossing stages, and a memory counter ("C")
// per stage. What the events hold: report/trace_layout.h.
//
// Format: Google's "Trace Event Format" document (docs.google.com/document/d/
// 1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU: ts and dur in microseconds,
// "displayTimeUnit", "otherData" for metadata, "M" process_name/thread_name
// events, flow "s"/"f" pairs matched by cat, name and id, "bp":"e" binding the
// flow's end to its enclosing slice); Perfetto reads the same JSON
// (perfetto docs/getting-started/other-formats.md, "JSON trace format").
#pragma once

#include <nlohmann/json.hpp>

#include "trainsim/result.h"
#include "trainsim/spec.h"

namespace trainsim::report {

// Precondition: estimate is estimate(config) with its timeline included.
nlohmann::json step_trace_json(const Config& config, const Estimate& estimate);

}  // namespace trainsim::report
