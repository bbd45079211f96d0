// "training" section of a config document.
#include <cstdio>
#include <optional>
#include <string>
#include <utility>

#include "schema/config_reader.h"
#include "schema/json_reader.h"
#include "input_limits.h"
#include "schema/training_input.h"

namespace trainsim::schema {
namespace {

// Order matches RecomputeModule.
const std::vector<std::string> kRecomputeModuleNames = {
    "core_attn", "layernorm", "mla_up_proj", "mlp",      "moe_act",  "moe",       "shared_experts",
    "attn",      "attn_norm", "attn_proj",   "mlp_block", "mlp_norm", "mlp_linear"};

std::string module_name_list() {
  std::string list;
  for (const auto& name : kRecomputeModuleNames) list += (list.empty() ? "\"" : ", \"") + name + "\"";
  return list;
}

void read_recompute(const nlohmann::json& value, const std::string& path, RecomputeSpec& spec,
                    Issues& issues) {
  ObjectReader r(value, path, issues);
  if (!r.ok()) return;
  const size_t granularity = r.enum_or("granularity", {"none", "full", "selective"}, 0);
  spec.granularity = static_cast<RecomputeGranularity>(granularity);
  const auto method = r.optional_enum("method", {"uniform", "block"});
  const auto num_layers = r.optional_int("num_layers", 1, kMaxLayers);
  const nlohmann::json* modules = r.raw("modules");
  if (spec.granularity == RecomputeGranularity::kFull) {
    if (!method && !r.has("method")) {
      issues.push_back({r.path_of("method"), "missing required key (granularity is \"full\")"});
    }
    spec.method = method.value_or(1) == 0 ? RecomputeMethod::kUniform : RecomputeMethod::kBlock;
    if (!num_layers && !r.has("num_layers")) {
      issues.push_back({r.path_of("num_layers"), "missing required key (granularity is \"full\")"});
    }
    spec.num_layers = num_layers.value_or(1);
  } else {
    if (method) issues.push_back({r.path_of("method"), "only valid with granularity \"full\""});
    if (num_layers && spec.granularity != RecomputeGranularity::kSelective) {
      issues.push_back({r.path_of("num_layers"), "only valid with granularity \"full\" or \"selective\""});
    }
    spec.num_layers = num_layers.value_or(0);
  }
  const auto keep_tail = r.optional_bool("keep_tail_outputs");
  if (keep_tail && spec.granularity != RecomputeGranularity::kSelective) {
    issues.push_back({r.path_of("keep_tail_outputs"), "only valid with granularity \"selective\""});
  }
  spec.keep_tail_outputs = keep_tail.value_or(false);
  if (modules != nullptr && spec.granularity != RecomputeGranularity::kSelective) {
    issues.push_back({r.path_of("modules"), "only valid with granularity \"selective\""});
  }
  if (spec.granularity == RecomputeGranularity::kSelective) {
    if (modules == nullptr) {
      spec.modules = {RecomputeModule::kCoreAttn};  // Megatron's --recompute-modules default
    } else if (!modules->is_array() || modules->empty()) {
      issues.push_back({r.path_of("modules"), "expected a non-empty array of module names, got " +
                                                  describe_json_value(*modules)});
    } else {
      for (size_t i = 0; i < modules->size(); ++i) {
        const auto& item = (*modules)[i];
        const std::string item_path = r.path_of("modules") + "/" + std::to_string(i);
        size_t index = kRecomputeModuleNames.size();
        if (item.is_string()) {
          for (size_t k = 0; k < kRecomputeModuleNames.size(); ++k) {
            if (kRecomputeModuleNames[k] == item.get<std::string>()) index = k;
          }
        }
        if (index == kRecomputeModuleNames.size()) {
          issues.push_back({item_path, "expected one of " + module_name_list() + ", got " +
                                           describe_json_value(item)});
          continue;
        }
        const auto module = static_cast<RecomputeModule>(index);
        for (const auto seen : spec.modules) {
          if (seen == module) issues.push_back({item_path, "duplicate module"});
        }
        spec.modules.push_back(module);
      }
    }
  }
  r.finish();
}

void read_te_version(ObjectReader& r, TrainingSpec& spec) {
  const auto text = r.optional_string("te_version");
  if (!text) return;
  int major = 0;
  int minor = 0;
  int patch = 0;
  char tail = 0;
  const int fields = std::sscanf(text->c_str(), "%d.%d.%d%c", &major, &minor, &patch, &tail);
  if ((fields != 2 && fields != 3) || major < 0 || minor < 0 || major > 99 || minor > 999) {
    r.issues().push_back({r.path_of("te_version"),
                          "expected a version such as \"2.11\" or \"2.11.0\", got \"" + *text +
                              "\""});
    return;
  }
  spec.te_version_major = major;
  spec.te_version_minor = minor;
}

// tp*cp*pp*dp is the world size, bounded like num_gpus. Each factor is below
// 2^25, so checking the partial products one factor at a time keeps every one
// of them inside int64 (the plain product of four limits would overflow).
void check_world_size(ObjectReader& r, const ParallelSpec& p, std::optional<int64_t> dp) {
  const std::pair<const char*, int64_t> factors[] = {
      {"tp", p.tp}, {"cp", p.cp}, {"pp", p.pp}, {"dp", dp.value_or(1)}};
  std::string names;
  int64_t product = 1;
  for (const auto& [name, value] : factors) {
    if (!names.empty()) names += '*';
    names += name;
    product *= value;
    if (product > kMaxGpus) {
      r.issues().push_back({r.path_of(name), names + " must be at most " + std::to_string(kMaxGpus) +
                                                 " (the largest number of GPUs), got " +
                                                 std::to_string(product)});
      return;
    }
  }
}

}  // namespace

void read_training_input(const nlohmann::json& value, const std::string& path,
                         TrainingInput& input, Issues& issues) {
  TrainingSpec& spec = input.spec;
  ParallelSpec& parallel = spec.parallel;
  ObjectReader r(value, path, issues);
  if (!r.ok()) return;
  spec.seq_len = r.required_int("seq_len", 1, kMaxSeqLen);
  spec.micro_batch_size = r.required_int("micro_batch_size", 1, kMaxBatch);
  if (spec.seq_len * spec.micro_batch_size > kMaxTokensPerMicroBatch) {  // at most 2^56: no overflow
    issues.push_back({r.path_of("micro_batch_size"),
                      "seq_len*micro_batch_size must be at most " +
                          std::to_string(kMaxTokensPerMicroBatch) + " tokens, got " +
                          std::to_string(spec.seq_len * spec.micro_batch_size)});
  }
  input.global_batch_size = r.optional_int("global_batch_size", 1, kMaxBatch);
  input.num_micro_batches = r.optional_int("num_micro_batches", 1, kMaxBatch);
  input.batch_path = r.path_of("global_batch_size");
  if (r.has("global_batch_size") && r.has("num_micro_batches")) {
    issues.push_back({r.path_of("num_micro_batches"),
                      "set either global_batch_size or num_micro_batches, not both"});
  } else if (!r.has("global_batch_size") && !r.has("num_micro_batches")) {
    issues.push_back({r.path_of("global_batch_size"),
                      "missing required key (or set num_micro_batches)"});
  }
  spec.train_tokens = r.number_or("train_tokens", 0.0, 0.0, 1e18, true);
  spec.dtype = static_cast<Dtype>(r.enum_or("dtype", {"bf16", "fp16", "fp8"}, 0));
  parallel.tp = r.int_or("tp", 1, 1, kMaxGpus);
  parallel.pp = r.int_or("pp", 1, 1, kMaxLayers);
  input.dp = r.optional_int("dp", 1, kMaxGpus);
  parallel.cp = r.int_or("cp", 1, 1, kMaxGpus);
  parallel.ep = r.int_or("ep", 1, 1, kMaxExperts);
  parallel.etp = r.int_or("etp", 1, 1, kMaxGpus);
  parallel.vpp = r.int_or("vpp", 1, 1, kMaxLayers);
  check_world_size(r, parallel, input.dp);
  parallel.sequence_parallel = r.bool_or("sequence_parallel", false);
  parallel.num_layers_in_first_stage = r.optional_int("num_layers_in_first_stage", 0, kMaxLayers);
  parallel.num_layers_in_last_stage = r.optional_int("num_layers_in_last_stage", 0, kMaxLayers);
  parallel.account_for_embedding_in_pipeline_split =
      r.bool_or("account_for_embedding_in_pipeline_split", false);
  parallel.account_for_loss_in_pipeline_split =
      r.bool_or("account_for_loss_in_pipeline_split", false);
  parallel.cp_comm_type =
      static_cast<CpCommType>(r.enum_or("cp_comm_type", {"a2a", "p2p", "all_gather"}, 0));
  spec.zero_stage = r.int_or("zero_stage", 1, 0, 3);
  spec.grad_reduce_in_bf16 = r.bool_or("grad_reduce_in_bf16", false);
  spec.gradient_accumulation_fusion = r.bool_or("gradient_accumulation_fusion", true);
  read_te_version(r, spec);
  if (const nlohmann::json* recompute = r.raw("recompute")) {
    read_recompute(*recompute, r.path_of("recompute"), spec.recompute, issues);
  }
  spec.kernels.flash_attention = r.bool_or("flash_attention", true);
  spec.kernels.fused_cross_entropy = r.bool_or("fused_cross_entropy", false);
  spec.kernels.fused_norm = r.bool_or("fused_norm", true);
  spec.kernels.fused_swiglu = r.bool_or("fused_swiglu", true);
  spec.overlap.grad_reduce = r.bool_or("overlap_grad_reduce", false);
  spec.overlap.param_gather = r.bool_or("overlap_param_gather", false);
  spec.overlap.tp_comm = r.bool_or("tp_comm_overlap", false);
  spec.moe.pad_to_capacity = r.bool_or("moe_pad_to_capacity", false);
  spec.moe.capacity_factor = r.number_or("moe_capacity_factor", 0.0, 0.0, kMaxCapacityFactor, false);
  spec.moe.permute_probs_fused = r.bool_or("moe_permute_probs_fused", false);
  r.finish();
}

}  // namespace trainsim::schema
