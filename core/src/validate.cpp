// Cross-field rules of a structurally valid Config: the divisibility and
// range constraints Megatron-LM asserts at start-up (megatron/training/
// arguments.py, megatron/core/parallel_state.py, tensor_parallel/layers.py).
#include "validate.h"

#include <algorithm>
#include <utility>
#include <string>
#include <type_traits>

#include "input_limits.h"
#include "model/pipeline_layout.h"
#include "time/schedule_orders.h"

namespace trainsim {
namespace {

std::string str(int64_t value) { return std::to_string(value); }

class Checker {
 public:
  explicit Checker(Issues& issues) : issues_(issues) {}
  // message: a string, or a function returning it; the strategy search
  // validates thousands of candidates, so messages are built only on failure.
  template <typename Message>
  void require(bool ok, const char* path, Message&& message) {
    if (ok) return;
    if constexpr (std::is_invocable_v<Message>) {
      issues_.push_back({path, message()});
    } else {
      issues_.push_back({path, std::string(message)});
    }
  }
  // "must divide <what> (<value>), got <divisor>"
  void divides(int64_t divisor, int64_t value, const char* path, const char* what) {
    require(value % divisor == 0, path, [&] {
      return "must divide " + std::string(what) + " (" + str(value) + "), got " + str(divisor);
    });
  }

 private:
  Issues& issues_;
};

void validate_model(const ModelSpec& m, Checker& c) {
  c.require(m.num_kv_heads <= m.num_attention_heads && m.num_attention_heads % m.num_kv_heads == 0,
            "/model/num_kv_heads", [&] {
              return "must divide num_attention_heads (" + str(m.num_attention_heads) + "), got " +
                     str(m.num_kv_heads);
            });
  if (m.moe) {
    c.require(m.moe->top_k <= m.moe->num_experts, "/model/moe/top_k", [&] {
      return "must be at most num_experts (" + str(m.moe->num_experts) + "), got " +
             str(m.moe->top_k);
    });
    c.require(m.moe->num_dense_layers < m.num_layers, "/model/moe/num_dense_layers", [&] {
      return "must be less than num_layers (" + str(m.num_layers) + "), got " +
             str(m.moe->num_dense_layers);
    });
    // Group-limited routing (Megatron-LM transformer_config.py __post_init__).
    const MoeSpec& moe = *m.moe;
    c.require(moe.router_group_topk == 0 || moe.router_num_groups > 0, "/model/moe/router_group_topk",
              "needs router_num_groups (group-limited routing)");
    c.require(moe.router_num_groups == 0 || moe.num_experts % moe.router_num_groups == 0,
              "/model/moe/router_num_groups", [&] {
                return "must divide num_experts (" + str(moe.num_experts) + "), got " +
                       str(moe.router_num_groups);
              });
    c.require(moe.router_group_topk <= moe.router_num_groups || moe.router_num_groups == 0,
              "/model/moe/router_group_topk", [&] {
                return "must be at most router_num_groups (" + str(moe.router_num_groups) +
                       "), got " + str(moe.router_group_topk);
              });
  }
}

void validate_parallel(const Config& config, Checker& c) {
  const ModelSpec& m = config.model;
  const TrainingSpec& t = config.training;
  const ParallelSpec& p = t.parallel;
  c.divides(p.tp, m.num_attention_heads, "/training/tp", "num_attention_heads");
  if (!m.mla) c.divides(p.tp, m.num_kv_heads, "/training/tp", "num_kv_heads");
  c.divides(p.tp, m.ffn_hidden_size, "/training/tp", "ffn_hidden_size");
  if (m.moe && m.moe->shared_expert_ffn_hidden_size > 0) {
    c.divides(p.tp, m.moe->shared_expert_ffn_hidden_size, "/training/tp",
              "shared_expert_ffn_hidden_size");
  }
  const int64_t world = p.tp * p.pp * p.dp * p.cp;
  c.require(world == config.system.num_gpus, "/system/num_gpus", [&] {
    return "must equal tp*pp*dp*cp (" + str(world) + "), got " + str(config.system.num_gpus);
  });
  if (p.sequence_parallel && p.tp > 1) {
    c.divides(p.tp, t.seq_len / p.cp, "/training/tp", "seq_len/cp with sequence_parallel");
  }
  if (p.cp > 1) {
    c.divides(2 * p.cp, t.seq_len, "/training/cp",
              "seq_len (context parallelism splits the sequence into 2*cp chunks)");
    c.require(
        p.cp_comm_type != CpCommType::kAllToAll || (m.num_attention_heads % (p.tp * p.cp) == 0 &&
                                                    (m.mla || m.num_kv_heads % (p.tp * p.cp) == 0)),
        "/training/cp_comm_type", [&] {
          return "\"a2a\" needs num_attention_heads and num_kv_heads divisible by tp*cp (" +
                 str(p.tp * p.cp) + ")";
        });
  }
  if (m.moe) {
    c.divides(p.ep, m.moe->num_experts, "/training/ep", "num_experts");
    c.divides(p.etp, m.moe->expert_ffn_hidden_size, "/training/etp", "expert_ffn_hidden_size");
    c.require((p.tp * p.cp * p.dp) % (p.ep * p.etp) == 0, "/training/ep", [&] {
      return "ep*etp (" + str(p.ep * p.etp) + ") must divide tp*cp*dp (" + str(p.tp * p.cp * p.dp) +
             ")";
    });
  } else {
    c.require(p.ep == 1, "/training/ep",
              [&] { return "must be 1 for a dense model, got " + str(p.ep); });
    c.require(p.etp == 1, "/training/etp",
              [&] { return "must be 1 for a dense model, got " + str(p.etp); });
  }
  c.require(p.vpp == 1 || p.pp > 1, "/training/vpp", [&] {
    return "must be 1 when pp is 1 (interleaving needs pipeline stages), got " + str(p.vpp);
  });
  if (p.schedule != PipelineSchedule::kOneFOneB) {
    // The limits the reference implementations assert (time/schedule_orders.cpp,
    // schedule_supported: zbpp_utils.py, DualPipe.step, DualPipeV.step).
    const std::string reason = schedule_supported(p.schedule, p.pp, p.vpp, t.num_micro_batches);
    c.require(reason.empty(), "/training/pipeline_schedule", reason);
  }
  c.require(p.vpp == 1 || p.schedule != PipelineSchedule::kOneFOneB ||
                t.num_micro_batches % p.pp == 0,
            "/training/vpp", [&] {
    return "interleaving needs the number of micro-batches (" + str(t.num_micro_batches) +
           ") to be a multiple of pp (" + str(p.pp) + ")";
  });
  c.require(p.pp > 1 || (!p.num_layers_in_first_stage && !p.num_layers_in_last_stage),
            "/training/pp", "must be greater than 1 to set num_layers_in_first/last_stage");
  c.require(!t.moe.pad_to_capacity || t.moe.capacity_factor > 0.0, "/training/moe_capacity_factor",
            "must be set when moe_pad_to_capacity is true");
  // The busiest of ep ranks receives at most every routed token.
  c.require(t.moe.routing_imbalance <= static_cast<double>(m.moe ? p.ep : 1),
            "/training/moe_routing_imbalance", [&] {
              return m.moe ? "must be at most ep (" + str(p.ep) +
                                 "): the busiest rank receives at most every routed token"
                           : std::string("must be 1 for a dense model");
            });
  for (const auto& issue : pipeline_layout_issues(m, p)) {
    c.require(false, issue.path.c_str(), issue.message);
  }
}

void validate_recompute(const Config& config, Checker& c) {
  const RecomputeSpec& r = config.training.recompute;
  const ModelSpec& m = config.model;
  for (const auto module : r.modules) {
    if (module == RecomputeModule::kMlaUpProj) {
      c.require(m.mla.has_value(), "/training/recompute/modules",
                "\"mla_up_proj\" needs a model with mla");
    }
    if (module == RecomputeModule::kMoe || module == RecomputeModule::kMoeAct) {
      c.require(m.moe.has_value(), "/training/recompute/modules",
                "\"moe\" and \"moe_act\" need a model with moe");
    }
  }
  if (r.granularity == RecomputeGranularity::kFull) {
    const auto layout = pipeline_layout(m, config.training.parallel);
    int64_t min_chunk_layers = m.num_layers;
    for (const auto& stage : layout) {
      for (const auto& chunk : stage) {
        min_chunk_layers = std::min(min_chunk_layers, chunk.num_layers);
      }
    }
    if (r.method == RecomputeMethod::kUniform) {
      c.require(
          min_chunk_layers % r.num_layers == 0 || r.num_layers >= min_chunk_layers,
          "/training/recompute/num_layers", [&] {
            return "must divide the layers of every pipeline chunk with method \"uniform\", got " +
                   str(r.num_layers);
          });
    }
  }
}

}  // namespace

std::optional<Issue> check_tokens_per_micro_batch(int64_t seq_len, int64_t micro_batch_size,
                                                  const std::string& path) {
  if (seq_len * micro_batch_size <= kMaxTokensPerMicroBatch) return std::nullopt;  // <= 2^56
  return Issue{path, "seq_len*micro_batch_size must be at most " +
                         str(kMaxTokensPerMicroBatch) + " tokens, got " +
                         str(seq_len * micro_batch_size)};
}

std::optional<Issue> check_world_size(const ParallelSpec& p, std::optional<int64_t> dp,
                                      const std::string& prefix) {
  // Each factor is below 2^25, so the partial products stay inside int64 (the
  // plain product of four limits would overflow).
  const std::pair<const char*, int64_t> factors[] = {
      {"tp", p.tp}, {"cp", p.cp}, {"pp", p.pp}, {"dp", dp.value_or(1)}};
  std::string names;
  int64_t product = 1;
  for (const auto& [name, value] : factors) {
    if (!names.empty()) names += '*';
    names += name;
    product *= value;
    if (product > kMaxGpus) {
      return Issue{prefix + "/" + name, names + " must be at most " + str(kMaxGpus) +
                                            " (the largest number of GPUs), got " + str(product)};
    }
  }
  return std::nullopt;
}

void derive_sizes(const SizeRequest& request, TrainingSpec& training, SystemSpec& system,
                  Issues& issues) {
  ParallelSpec& parallel = training.parallel;
  const int64_t model_parallel = parallel.tp * parallel.pp * parallel.cp;
  if (request.dp) {
    parallel.dp = *request.dp;
    if (system.num_gpus == 0) system.num_gpus = model_parallel * parallel.dp;
  } else if (system.num_gpus > 0) {
    if (system.num_gpus % model_parallel != 0) {
      issues.push_back({"/system/num_gpus", "must be a multiple of tp*pp*cp (" + str(model_parallel) +
                                                ") when training.dp is not set, got " +
                                                str(system.num_gpus)});
      return;
    }
    parallel.dp = system.num_gpus / model_parallel;
  } else {
    issues.push_back({"/training/dp", "missing required key (or set /system/num_gpus)"});
    return;
  }
  const int64_t sequences_per_round = training.micro_batch_size * parallel.dp;
  if (request.num_micro_batches) {
    training.num_micro_batches = *request.num_micro_batches;
  } else if (request.global_batch_size) {
    if (*request.global_batch_size % sequences_per_round != 0) {
      issues.push_back({request.batch_path, "must be a multiple of micro_batch_size*dp (" +
                                                str(sequences_per_round) + "), got " +
                                                str(*request.global_batch_size)});
      return;
    }
    training.num_micro_batches = *request.global_batch_size / sequences_per_round;
  }
  // Simulating more passes would take minutes and gigabytes (input_limits.h). In
  // double: pp * vpp * micro-batches can exceed int64 before validation bounds pp * vpp.
  const double passes = static_cast<double>(parallel.pp) * static_cast<double>(parallel.vpp) *
                        static_cast<double>(training.num_micro_batches);
  if (passes > static_cast<double>(kMaxPipelinePasses)) {
    issues.push_back({request.num_micro_batches ? "/training/num_micro_batches" : request.batch_path,
                      "too many micro-batches to simulate: num_micro_batches*pp*vpp must be at most " +
                          str(kMaxPipelinePasses) + ", got " + str(training.num_micro_batches) +
                          "*" + str(parallel.pp) + "*" + str(parallel.vpp)});
  }
}

Issues validate(const Config& config) {
  Issues issues;
  Checker checker(issues);
  validate_model(config.model, checker);
  validate_parallel(config, checker);
  if (issues.empty()) validate_recompute(config, checker);
  return issues;
}

}  // namespace trainsim
