// training.recompute: which granularity takes which keys is a rule of its own,
// so this object is read and written by hand (its rows are still published).
#include <algorithm>

#include "input_limits.h"
#include "schema/config_schema.h"

namespace trainsim::schema {
namespace {

FieldInfo member(const char* key, Type type, Presence presence, Meta meta) {
  return Fields<RecomputeSpec>::info(key, type, presence, meta);
}

}  // namespace

std::vector<FieldInfo> recompute_members() {
  FieldInfo granularity = member("granularity", Type::kEnum, Presence::kDefault,
                                 {"", "Recompute", "activation recomputation (Megatron-LM --recompute-granularity)"});
  granularity.enumeration = &recompute_granularity_names();
  granularity.default_value = "none";
  FieldInfo method = member("method", Type::kEnum, Presence::kOptional,
                            {"", "Recompute method", "full only, and required there (--recompute-method)"});
  method.enumeration = &recompute_method_names();
  FieldInfo num_layers = member("num_layers", Type::kInt, Presence::kOptional,
                                {"layers", "Recompute layers", "full: layers recomputed per chunk (block) or per checkpoint group (uniform), required (--recompute-num-layers); selective: only the first N layers of each chunk"});
  num_layers.min = 1;
  num_layers.max = static_cast<double>(kMaxLayers);
  FieldInfo modules = member("modules", Type::kArray, Presence::kDefault,
                             {"", "Recompute modules", "selective only: Megatron-LM 0.14 --recompute-modules or SimuMax's sets"});
  modules.items = Type::kEnum;
  modules.enumeration = &recompute_module_names();
  modules.default_value = nlohmann::json::array({"core_attn"});
  FieldInfo keep_tail = member("keep_tail_outputs", Type::kBool, Presence::kDefault,
                               {"", "Keep tail outputs", "selective only: the last op of each recomputed segment keeps its output (SimuMax recompute_variance)"});
  keep_tail.default_value = false;
  return {granularity, method, num_layers, modules, keep_tail};
}

void read_recompute(const nlohmann::json& value, const std::string& path, RecomputeSpec& spec,
                    Issues& issues) {
  ObjectReader r(value, path, issues);
  if (!r.ok()) return;
  const EnumNames& modules_enum = recompute_module_names();
  spec.granularity = static_cast<RecomputeGranularity>(
      r.enum_or("granularity", recompute_granularity_names().names, 0));
  const auto method = r.optional_enum("method", recompute_method_names().names);
  const auto num_layers = r.optional_int("num_layers", 1, kMaxLayers);
  const nlohmann::json* modules = r.raw("modules");
  if (spec.granularity == RecomputeGranularity::kFull) {
    if (!method && !r.has("method")) {
      issues.push_back({r.path_of("method"), "missing required key (granularity is \"full\")"});
    }
    spec.method = static_cast<RecomputeMethod>(method.value_or(1));
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
        const auto index = item.is_string() ? modules_enum.find(item.get<std::string>()) : std::nullopt;
        if (!index) {
          issues.push_back({item_path, "expected one of " + modules_enum.quoted() + ", got " +
                                           describe_json_value(item)});
          continue;
        }
        const auto module = static_cast<RecomputeModule>(*index);
        // Reported once per repeated item (not once per earlier copy) and kept once.
        if (std::find(spec.modules.begin(), spec.modules.end(), module) != spec.modules.end()) {
          issues.push_back({item_path, "duplicate module"});
          continue;
        }
        spec.modules.push_back(module);
      }
    }
  }
  r.finish();
}

nlohmann::json recompute_to_json(const RecomputeSpec& r) {
  const std::string& granularity = recompute_granularity_names().of(r.granularity);
  switch (r.granularity) {
    case RecomputeGranularity::kNone:
      return {{"granularity", granularity}};
    case RecomputeGranularity::kFull:
      return {{"granularity", granularity},
              {"method", recompute_method_names().of(r.method)},
              {"num_layers", r.num_layers}};
    case RecomputeGranularity::kSelective:
      break;
  }
  nlohmann::json modules = nlohmann::json::array();
  for (const RecomputeModule module : r.modules) modules.push_back(recompute_module_names().of(module));
  nlohmann::json out = {{"granularity", granularity}, {"modules", modules}};
  if (r.num_layers > 0) out["num_layers"] = r.num_layers;
  if (r.keep_tail_outputs) out["keep_tail_outputs"] = true;
  return out;
}

}  // namespace trainsim::schema
