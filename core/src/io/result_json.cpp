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
            {"stages", stages}}},
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
