#include "report/memory_json.h"

namespace trainsim::report {

void add_stage_memory_json(const StageMemory& s, nlohmann::json& out) {
  out["workspace_bytes"] = s.workspace_bytes;
  out["fragmentation_bytes"] = s.fragmentation_bytes;
  out["outside_allocator_bytes"] = s.outside_allocator_bytes;
  out["device_bytes"] = s.device_bytes;
  nlohmann::json outside = nlohmann::json::array();
  for (const MemoryTerm& t : s.outside) {
    outside.push_back({{"name", t.name}, {"bytes", t.bytes}, {"source", t.source}});
  }
  out["outside_allocator"] = outside;
  const AllocatorReplaySummary& a = s.allocator;
  out["allocator"] = {{"replayed", a.replayed},
                      {"granularity", a.granularity},
                      {"events", a.events},
                      {"peak_allocated_bytes", a.peak_allocated_bytes},
                      {"allocated_at_peak_reserved_bytes", a.allocated_at_peak_reserved_bytes},
                      {"segments", a.segments},
                      {"device_allocations", a.device_allocations},
                      {"alloc_retries", a.alloc_retries},
                      {"out_of_memory", a.out_of_memory},
                      {"peak_reserved_at", a.peak_reserved_at}};
}

void add_memory_json(const MemoryEstimate& m, nlohmann::json& out) {
  const MemoryVerdict& v = m.verdict;
  out["device_bytes"] = m.device_bytes;
  out["verdict"] = {{"status", v.status},
                    {"margin_bytes", v.margin_bytes},
                    {"usable_bytes", v.usable_bytes},
                    {"headroom_fraction", v.headroom_fraction},
                    {"device_bytes", v.device_bytes},
                    {"stage", v.stage},
                    {"reasons", v.reasons}};
  nlohmann::json suggestions = nlohmann::json::array();
  for (const MemorySuggestion& s : m.suggestions) {
    nlohmann::json set = nlohmann::json::object();
    for (const auto& [key, value] : s.set) set[key] = value;
    suggestions.push_back({{"change", s.change},
                           {"set", set},
                           {"status", s.status},
                           {"margin_bytes", s.margin_bytes},
                           {"device_bytes", s.device_bytes},
                           {"iteration_s", s.iteration_s}});
  }
  out["suggestions"] = suggestions;
  nlohmann::json ops = nlohmann::json::array();
  for (const MemoryOpRow& r : m.ops) {
    ops.push_back({r.block, r.op, r.saved_bytes, r.forward_transient_bytes, r.backward_transient_bytes});
  }
  out["ops"] = {{"stage", m.peak_stage},
                {"columns", {"block", "op", "saved_bytes", "forward_transient_bytes",
                             "backward_transient_bytes"}},
                {"rows", ops}};
  nlohmann::json timeline = nlohmann::json::array();
  for (const StageMemory& s : m.stages) {
    nlohmann::json points = nlohmann::json::array();
    for (const MemoryTimelinePoint& p : s.timeline) {
      points.push_back({p.event, p.allocated_bytes, p.reserved_bytes, p.pass});
    }
    timeline.push_back({{"stage", s.stage}, {"points", points}});
  }
  out["timeline"] = {{"columns", {"event", "allocated_bytes", "reserved_bytes", "pass"}},
                     {"stages", timeline}};
}

}  // namespace trainsim::report
