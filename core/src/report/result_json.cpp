#include "report/result_json.h"

#include <cmath>
#include <cstdio>

#include "report/memory_json.h"
#include "schema/json_reader.h"
#include "trainsim/issue.h"

namespace trainsim::report {
namespace {

// Inputs are finite and bounded, so a NaN or an infinity in a result is a bug.
// It must not leak: nlohmann writes it as null and printf as "nan" (invalid JSON).
bool all_finite(const nlohmann::json& value) {
  if (value.is_number_float()) return std::isfinite(value.get<double>());
  if (!value.is_structured()) return true;
  for (const auto& item : value) {
    if (!all_finite(item)) return false;
  }
  return true;
}

std::string first_non_finite(const nlohmann::json& value, const std::string& path) {
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) {
      if (!all_finite(item)) return first_non_finite(item, path + "/" + key);
    }
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      if (!all_finite(value[i])) return first_non_finite(value[i], path + "/" + std::to_string(i));
    }
  }
  return path;
}

}  // namespace

void check_finite(const nlohmann::json& result) {
  TRAINSIM_CHECK(all_finite(result), "non-finite number in the result at /result" +
                                         first_non_finite(result, ""));
}

namespace {

nlohmann::json stage_to_json(const StageMemory& s) {
  nlohmann::json out = {{"stage", s.stage},
          {"layers_per_chunk", s.layers_per_chunk},
          {"parameters_bytes", s.parameters_bytes},
          {"gradients_bytes", s.gradients_bytes},
          {"optimizer_bytes", s.optimizer_bytes},
          {"host_bytes", s.host_bytes},
          {"buffers_bytes", s.buffers_bytes},
          {"activations_bytes", s.activations_bytes},
          {"transient_bytes", s.transient_bytes},
          {"peak_bytes", s.peak_bytes},
          {"reserved_bytes", s.reserved_bytes},
          {"activations_per_micro_batch_bytes", s.activations_per_micro_batch_bytes},
          {"in_flight_micro_batches", s.in_flight_micro_batches},
          {"dense_parameters", s.dense_parameters},
          {"expert_parameters", s.expert_parameters},
          {"peak_op", s.peak_op}};
  add_stage_memory_json(s, out);  // allocator replay and outside-allocator memory
  return out;
}

nlohmann::json breakdown_to_json(const TimeBreakdown& b) {
  return {{"forward_s", b.forward_s},
          {"backward_s", b.backward_s},
          {"recompute_s", b.recompute_s},
          {"host_overhead_s", b.host_overhead_s},
          {"tp_comm_exposed_s", b.tp_comm_exposed_s},
          {"cp_comm_exposed_s", b.cp_comm_exposed_s},
          {"ep_comm_exposed_s", b.ep_comm_exposed_s},
          {"pp_comm_exposed_s", b.pp_comm_exposed_s},
          {"bubble_s", b.bubble_s},
          {"stage_imbalance_s", b.stage_imbalance_s},
          {"straggler_s", b.straggler_s},
          {"dp_comm_exposed_s", b.dp_comm_exposed_s},
          {"optimizer_s", b.optimizer_s},
          {"activation_offload_exposed_s", b.activation_offload_exposed_s}};
}

nlohmann::json time_to_json(const TimeEstimate& t) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageTime& s : t.stages) {
    stages.push_back({{"stage", s.stage},
                      {"forward_per_micro_batch_s", s.forward_per_micro_batch_s},
                      {"backward_per_micro_batch_s", s.backward_per_micro_batch_s},
                      {"pipeline_s", s.pipeline_s},
                      {"dp_comm_s", s.dp_comm_s},
                      {"dp_comm_exposed_s", s.dp_comm_exposed_s},
                      {"ep_comm_s", s.ep_comm_s},
                      {"ep_comm_hidden_s", s.ep_comm_hidden_s},
                      {"pp_comm_s", s.pp_comm_s},
                      {"optimizer_s", s.optimizer_s},
                      {"total_s", s.total_s},
                      {"breakdown", breakdown_to_json(s.breakdown)}});
  }
  nlohmann::json ops = nlohmann::json::array();
  for (const OpTimeRow& r : t.ops) {
    ops.push_back({{"name", r.name},
                   {"kind", r.kind},
                   {"count", r.count},
                   {"flops", r.flops},
                   {"bytes", r.bytes},
                   {"kernels", r.kernels},
                   {"time_s", r.time_s},
                   {"efficiency", r.efficiency},
                   {"efficiency_source", r.efficiency_source}});
  }
  return {{"iteration_s", t.iteration_s},
          {"critical_stage", t.critical_stage},
          {"bottleneck_stage", t.bottleneck_stage},
          {"breakdown", breakdown_to_json(t.breakdown)},
          {"stages", stages},
          {"ops", ops},
          {"measured_efficiency_lookups", t.measured_efficiency_lookups},
          {"model_efficiency_lookups", t.model_efficiency_lookups}};
}

nlohmann::json calibration_to_json(const Calibration& c) {
  nlohmann::json figures = nlohmann::json::array();
  for (const CalibrationFigure& f : c.figures) {
    figures.push_back({{"figure", f.figure}, {"kind", f.kind}, {"source", f.source}});
  }
  return {{"calibrated", c.calibrated}, {"figures", figures}};
}

nlohmann::json throughput_core_json(const Throughput& t) {
  nlohmann::json out = {{"tokens_per_step", t.tokens_per_step},
          {"tokens_per_s", t.tokens_per_s},
          {"tokens_per_s_per_gpu", t.tokens_per_s_per_gpu},
          {"model_flops_per_step", t.model_flops_per_step},
          {"model_tflops_per_gpu", t.model_tflops_per_gpu},
          {"mfu", t.mfu},
          {"hardware_tflops_per_gpu", t.hardware_tflops_per_gpu},
          {"flop_convention", t.flop_convention},
          {"seconds_per_trillion_tokens", t.seconds_per_trillion_tokens},
          {"gpu_hours_per_trillion_tokens", t.gpu_hours_per_trillion_tokens}};
  // Only with training.train_tokens (always > 0 when given): never a 0 that reads as a figure.
  if (t.time_to_train_s > 0.0) {
    out["time_to_train_s"] = t.time_to_train_s;
    out["gpu_hours_to_train"] = t.gpu_hours_to_train;
  }
  return out;
}

nlohmann::json throughput_to_json(const Throughput& t) {
  nlohmann::json out = throughput_core_json(t);
  // The low-precision-peak MFU of fp8 / fp4 runs, beside the bf16-peak `mfu`.
  if (t.mfu_fp8_peak > 0.0) out["mfu_fp8_peak"] = t.mfu_fp8_peak;
  if (t.mfu_fp4_peak > 0.0) out["mfu_fp4_peak"] = t.mfu_fp4_peak;
  return out;
}

nlohmann::json explanations_to_json(const std::vector<Explanation>& explanations) {
  nlohmann::json out = nlohmann::json::array();
  for (const Explanation& x : explanations) {
    nlohmann::json terms = nlohmann::json::array();
    for (const ExplanationTerm& t : x.terms) {
      terms.push_back({{"symbol", t.symbol}, {"value", t.value}, {"unit", t.unit}, {"meaning", t.meaning}});
    }
    out.push_back({{"part", x.part},
                   {"value", x.value},
                   {"formula", x.formula},
                   {"terms", terms},
                   {"source", x.source}});
  }
  return out;
}

}  // namespace

nlohmann::json estimate_to_json(const Estimate& e) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageMemory& s : e.memory.stages) stages.push_back(stage_to_json(s));
  nlohmann::json out = {{"model",
           {{"parameters", e.model.parameters},
            {"active_parameters", e.model.active_parameters},
            {"padded_vocab_size", e.model.padded_vocab_size},
            {"num_moe_layers", e.model.num_moe_layers},
            {"num_dense_layers", e.model.num_dense_layers}}},
          {"memory",
           {{"peak_bytes", e.memory.peak_bytes},
            {"reserved_bytes", e.memory.reserved_bytes},
            {"capacity_bytes", e.memory.capacity_bytes},
            {"peak_stage", e.memory.peak_stage},
            {"reference",
             {{"korthikanti2022_activations_bytes", e.memory.korthikanti2022_activations_bytes},
              {"megatron_theoretical_bytes", e.memory.megatron_theoretical_bytes}}},
            {"stages", stages}}},
          {"time", time_to_json(e.time)},
          {"throughput", throughput_to_json(e.throughput)},
          {"calibration", calibration_to_json(e.calibration)},
          {"fits", e.fits},
          {"reasons", e.reasons},
          {"notes", e.notes},
          {"explanations", explanations_to_json(e.explanations)}};
  add_memory_json(e.memory, out["memory"]);  // verdict, suggestions, ops, timeline
  return out;
}

namespace {

// The timeline can hold tens of thousands of events: it is written directly as
// text, each event a compact array in the order of "columns".
std::string timeline_json_text(const Timeline& t) {
  std::string out = "{\"included\":";
  out += t.included ? "true" : "false";
  out += ",\"columns\":[\"kind\",\"micro_batch\",\"chunk\",\"start_s\",\"end_s\"],\"stages\":[";
  char number[64];
  for (size_t s = 0; s < t.stages.size(); ++s) {
    if (s > 0) out += ',';
    out += "{\"stage\":" + std::to_string(s) + ",\"events\":[";
    bool first = true;
    for (const TimelineSpan& e : t.stages[s]) {
      TRAINSIM_CHECK(std::isfinite(e.start_s) && std::isfinite(e.end_s),
                     "non-finite time in the timeline of stage " + std::to_string(s));
      out += first ? "[\"" : ",[\"";
      first = false;
      out += e.kind;
      std::snprintf(number, sizeof number, "\",%lld,%lld,%.9g,%.9g]",
                    static_cast<long long>(e.micro_batch), static_cast<long long>(e.chunk),
                    e.start_s, e.end_s);
      out += number;
    }
    out += "]}";
  }
  return out + "]}";
}

}  // namespace

std::string estimate_result_text(const Estimate& estimate) {
  const nlohmann::json tree = estimate_to_json(estimate);
  check_finite(tree);
  std::string result = schema::dump(tree);
  result.pop_back();  // the closing brace: the timeline joins the result object
  return result + ",\"timeline\":" + timeline_json_text(estimate.timeline) + "}";
}

}  // namespace trainsim::report
