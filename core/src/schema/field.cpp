#include "schema/field.h"

#include <cstdio>
#include <cstdlib>

namespace trainsim::schema {
namespace {

const char* type_name(Type type) {
  switch (type) {
    case Type::kInt:
      return "int";
    case Type::kNumber:
      return "number";
    case Type::kBool:
      return "bool";
    case Type::kString:
      return "string";
    case Type::kEnum:
      return "enum";
    case Type::kObject:
      return "object";
    case Type::kArray:
      return "array";
    case Type::kMap:
      return "map";
  }
  return "";
}

}  // namespace

double human(double value_si, double unit) {
  char text[64];
  std::snprintf(text, sizeof text, "%.12g", value_si / unit);
  return std::strtod(text, nullptr);
}

nlohmann::json to_json(const FieldInfo& info) {
  nlohmann::json out = {{"key", info.key},
                        {"type", type_name(info.type)},
                        {"required", info.presence == Presence::kRequired},
                        {"label", info.label},
                        {"help", info.help}};
  if (info.enumeration != nullptr) out["enum"] = info.enumeration->id;
  if (info.items) out["items"] = type_name(*info.items);
  if (!info.default_value.is_null()) out["default"] = info.default_value;
  const auto bound = [&](double value) -> nlohmann::json {
    if (info.type == Type::kInt || info.items == Type::kInt) return static_cast<int64_t>(value);
    return value;
  };
  if (info.min) {
    out["min"] = bound(*info.min);
    out["min_exclusive"] = info.min_exclusive;
  }
  if (info.max) out["max"] = bound(*info.max);
  if (!info.unit.empty()) out["unit"] = info.unit;
  return out;
}

}  // namespace trainsim::schema
