#include "report/result_csv.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace trainsim::report {
namespace {

class CsvWriter {
 public:
  CsvWriter() { text_ = "section,stage,metric,value,unit\n"; }

  void number(const char* section, int64_t stage, const char* metric, double value, const char* unit) {
    row(section, stage, metric, nlohmann::json(value).dump(), unit);
  }
  void count(const char* section, int64_t stage, const char* metric, int64_t value, const char* unit) {
    row(section, stage, metric, std::to_string(value), unit);
  }
  void text(const char* section, int64_t stage, const char* metric, const std::string& value) {
    row(section, stage, metric, value, "text");
  }
  const std::string& str() const { return text_; }

 private:
  static std::string field(const std::string& value) {
    if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
    std::string out = "\"";
    for (char c : value) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  }

  void row(const char* section, int64_t stage, const char* metric, const std::string& value,
           const char* unit) {
    text_ += std::string(section) + "," + (stage < 0 ? "" : std::to_string(stage)) + "," + metric +
             "," + field(value) + "," + unit + "\n";
  }

  std::string text_;
};

constexpr int64_t kTotal = -1;

void write_memory(const MemoryEstimate& m, CsvWriter& w) {
  w.number("memory", kTotal, "peak_bytes", m.peak_bytes, "bytes");
  w.number("memory", kTotal, "reserved_bytes", m.reserved_bytes, "bytes");
  w.number("memory", kTotal, "capacity_bytes", m.capacity_bytes, "bytes");
  w.count("memory", kTotal, "peak_stage", m.peak_stage, "index");
  for (const StageMemory& s : m.stages) {
    const char* sec = "memory_stage";
    std::string chunks;
    for (int64_t layers : s.layers_per_chunk) {
      if (!chunks.empty()) chunks += ' ';
      chunks += std::to_string(layers);
    }
    w.text(sec, s.stage, "layers_per_chunk", chunks);
    w.number(sec, s.stage, "parameters_bytes", s.parameters_bytes, "bytes");
    w.number(sec, s.stage, "gradients_bytes", s.gradients_bytes, "bytes");
    w.number(sec, s.stage, "optimizer_bytes", s.optimizer_bytes, "bytes");
    w.number(sec, s.stage, "buffers_bytes", s.buffers_bytes, "bytes");
    w.number(sec, s.stage, "activations_bytes", s.activations_bytes, "bytes");
    w.number(sec, s.stage, "transient_bytes", s.transient_bytes, "bytes");
    w.number(sec, s.stage, "peak_bytes", s.peak_bytes, "bytes");
    w.number(sec, s.stage, "reserved_bytes", s.reserved_bytes, "bytes");
    w.number(sec, s.stage, "activations_per_micro_batch_bytes", s.activations_per_micro_batch_bytes, "bytes");
    w.count(sec, s.stage, "in_flight_micro_batches", s.in_flight_micro_batches, "count");
    w.number(sec, s.stage, "dense_parameters", s.dense_parameters, "count");
    w.number(sec, s.stage, "expert_parameters", s.expert_parameters, "count");
    w.text(sec, s.stage, "peak_op", s.peak_op);
  }
}

void write_breakdown(const char* section, int64_t stage, const TimeBreakdown& b, CsvWriter& w) {
  const std::pair<const char*, double> parts[] = {
      {"forward_s", b.forward_s},           {"backward_s", b.backward_s},
      {"recompute_s", b.recompute_s},       {"host_overhead_s", b.host_overhead_s},
      {"tp_comm_exposed_s", b.tp_comm_exposed_s},
      {"cp_comm_exposed_s", b.cp_comm_exposed_s}, {"ep_comm_exposed_s", b.ep_comm_exposed_s},
      {"pp_comm_exposed_s", b.pp_comm_exposed_s}, {"bubble_s", b.bubble_s},
      {"stage_imbalance_s", b.stage_imbalance_s}, {"straggler_s", b.straggler_s},       {"dp_comm_exposed_s", b.dp_comm_exposed_s},
      {"optimizer_s", b.optimizer_s},
      {"activation_offload_exposed_s", b.activation_offload_exposed_s}};
  for (const auto& [name, value] : parts) w.number(section, stage, name, value, "s");
}

void write_time(const TimeEstimate& t, CsvWriter& w) {
  w.number("time", kTotal, "iteration_s", t.iteration_s, "s");
  w.count("time", kTotal, "critical_stage", t.critical_stage, "index");
  w.count("time", kTotal, "bottleneck_stage", t.bottleneck_stage, "index");
  write_breakdown("time_breakdown", kTotal, t.breakdown, w);
  for (const StageTime& s : t.stages) {
    const char* sec = "time_stage";
    w.number(sec, s.stage, "forward_per_micro_batch_s", s.forward_per_micro_batch_s, "s");
    w.number(sec, s.stage, "backward_per_micro_batch_s", s.backward_per_micro_batch_s, "s");
    w.number(sec, s.stage, "pipeline_s", s.pipeline_s, "s");
    w.number(sec, s.stage, "dp_comm_s", s.dp_comm_s, "s");
    w.number(sec, s.stage, "dp_comm_exposed_s", s.dp_comm_exposed_s, "s");
    w.number(sec, s.stage, "ep_comm_s", s.ep_comm_s, "s");
    w.number(sec, s.stage, "ep_comm_hidden_s", s.ep_comm_hidden_s, "s");
    w.number(sec, s.stage, "pp_comm_s", s.pp_comm_s, "s");
    w.number(sec, s.stage, "optimizer_s", s.optimizer_s, "s");
    w.number(sec, s.stage, "total_s", s.total_s, "s");
    write_breakdown("time_stage_breakdown", s.stage, s.breakdown, w);
  }
}

void write_throughput(const Throughput& t, CsvWriter& w) {
  const char* sec = "throughput";
  w.number(sec, kTotal, "tokens_per_step", t.tokens_per_step, "tokens");
  w.number(sec, kTotal, "tokens_per_s", t.tokens_per_s, "tokens/s");
  w.number(sec, kTotal, "tokens_per_s_per_gpu", t.tokens_per_s_per_gpu, "tokens/s");
  w.number(sec, kTotal, "model_flops_per_step", t.model_flops_per_step, "flop");
  w.number(sec, kTotal, "model_tflops_per_gpu", t.model_tflops_per_gpu, "tflop/s");
  w.number(sec, kTotal, "mfu", t.mfu, "ratio");
  w.number(sec, kTotal, "hardware_tflops_per_gpu", t.hardware_tflops_per_gpu, "tflop/s");
  w.text(sec, kTotal, "flop_convention", t.flop_convention);
  w.number(sec, kTotal, "seconds_per_trillion_tokens", t.seconds_per_trillion_tokens, "s");
  w.number(sec, kTotal, "gpu_hours_per_trillion_tokens", t.gpu_hours_per_trillion_tokens, "gpu_hours");
}

}  // namespace

std::string estimate_to_csv(const Estimate& e) {
  CsvWriter w;
  w.number("model", kTotal, "parameters", e.model.parameters, "count");
  w.number("model", kTotal, "active_parameters", e.model.active_parameters, "count");
  w.count("model", kTotal, "padded_vocab_size", e.model.padded_vocab_size, "count");
  w.count("model", kTotal, "num_moe_layers", e.model.num_moe_layers, "count");
  w.count("model", kTotal, "num_dense_layers", e.model.num_dense_layers, "count");
  write_memory(e.memory, w);
  write_time(e.time, w);
  write_throughput(e.throughput, w);
  w.text("feasibility", kTotal, "fits", e.fits ? "true" : "false");
  for (const std::string& reason : e.reasons) w.text("feasibility", kTotal, "reason", reason);
  for (const std::string& note : e.notes) w.text("feasibility", kTotal, "note", note);
  return w.str();
}

}  // namespace trainsim::report
