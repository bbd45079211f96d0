#include "io/result_json.h"

#include "trainsim/trainsim.h"

namespace trainsim::io {
namespace {

nlohmann::json stage_to_json(const StageMemory& s) {
  return {{"stage", s.stage},
          {"layers_per_chunk", s.layers_per_chunk},
          {"parameters_bytes", s.parameters_bytes},
          {"gradients_bytes", s.gradients_bytes},
          {"optimizer_bytes", s.optimizer_bytes},
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
}

nlohmann::json breakdown_to_json(const TimeBreakdown& b) {
  return {{"forward_s", b.forward_s},
          {"backward_s", b.backward_s},
          {"recompute_s", b.recompute_s},
          {"tp_comm_exposed_s", b.tp_comm_exposed_s},
          {"cp_comm_exposed_s", b.cp_comm_exposed_s},
          {"ep_comm_exposed_s", b.ep_comm_exposed_s},
          {"pp_comm_exposed_s", b.pp_comm_exposed_s},
          {"bubble_s", b.bubble_s},
          {"straggler_s", b.straggler_s},
          {"dp_comm_exposed_s", b.dp_comm_exposed_s},
          {"optimizer_s", b.optimizer_s}};
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
                      {"optimizer_s", s.optimizer_s},
                      {"total_s", s.total_s},
                      {"breakdown", breakdown_to_json(s.breakdown)}});
  }
  return {{"iteration_s", t.iteration_s},
          {"critical_stage", t.critical_stage},
          {"breakdown", breakdown_to_json(t.breakdown)},
          {"stages", stages},
          {"measured_efficiency_lookups", t.measured_efficiency_lookups},
          {"model_efficiency_lookups", t.model_efficiency_lookups}};
}

nlohmann::json throughput_to_json(const Throughput& t) {
  return {{"tokens_per_step", t.tokens_per_step},
          {"tokens_per_s", t.tokens_per_s},
          {"tokens_per_s_per_gpu", t.tokens_per_s_per_gpu},
          {"model_flops_per_step", t.model_flops_per_step},
          {"model_tflops_per_gpu", t.model_tflops_per_gpu},
          {"mfu", t.mfu},
          {"hardware_tflops_per_gpu", t.hardware_tflops_per_gpu},
          {"flop_convention", t.flop_convention},
          {"seconds_per_trillion_tokens", t.seconds_per_trillion_tokens},
          {"gpu_hours_per_trillion_tokens", t.gpu_hours_per_trillion_tokens}};
}

nlohmann::json timeline_to_json(const Timeline& t) {
  nlohmann::json stages = nlohmann::json::array();
  for (size_t s = 0; s < t.stages.size(); ++s) {
    nlohmann::json events = nlohmann::json::array();
    for (const TimelineSpan& e : t.stages[s]) {
      events.push_back({{"kind", e.kind},
                        {"micro_batch", e.micro_batch},
                        {"chunk", e.chunk},
                        {"start_s", e.start_s},
                        {"end_s", e.end_s}});
    }
    stages.push_back({{"stage", s}, {"events", events}});
  }
  return {{"included", t.included}, {"stages", stages}};
}

}  // namespace

nlohmann::json estimate_to_json(const Estimate& e) {
  nlohmann::json stages = nlohmann::json::array();
  for (const StageMemory& s : e.memory.stages) stages.push_back(stage_to_json(s));
  return {{"model",
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
          {"timeline", timeline_to_json(e.timeline)},
          {"fits", e.fits},
          {"reasons", e.reasons},
          {"notes", e.notes}};
}

std::string dump(const nlohmann::json& value, int indent) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string result_envelope(const nlohmann::json& result) {
  return dump({{"schema_version", kSchemaVersion}, {"ok", true}, {"result", result}});
}

std::string errors_envelope(const Issues& issues) {
  nlohmann::json errors = nlohmann::json::array();
  for (const Issue& issue : issues) {
    errors.push_back({{"path", issue.path}, {"message", issue.message}});
  }
  return dump({{"schema_version", kSchemaVersion}, {"ok", false}, {"errors", errors}});
}

}  // namespace trainsim::io
