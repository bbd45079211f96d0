// system.intra_node / inter_node / intra_node_tiers (links); system.efficiency
// lives in efficiency_schema.cpp.
#include <array>
#include <string>
#include <utility>

#include "input_limits.h"
#include "schema/config_schema.h"
#include "trainsim/units.h"

namespace trainsim::schema {
namespace {

constexpr Presence kRequired = Presence::kRequired;
constexpr Presence kDefault = Presence::kDefault;
constexpr Presence kOptional = Presence::kOptional;
constexpr double kMaxGbPerS = 1e7;
using Collectives = std::array<CollectiveSpec, kNumCollectiveKinds>;

const Table<CollectiveSpec>& collective_table() {
  using C = Fields<CollectiveSpec>;
  static const Table<CollectiveSpec> table = {
      C::number("efficiency", TRAINSIM_AT(efficiency), kOptional, kMinRate, 10.0, false, 1.0,
                {"", "Efficiency", "fraction of the link bandwidth this collective achieves; default the link's"}),
      C::number("latency_us", TRAINSIM_AT(latency_s), kOptional, 0.0, 1e6, false, kMicro,
                {"us", "Latency", "per-step latency of this collective; default the link's"}),
  };
  return table;
}

// One plain accessor per collective (the row builders take captureless accessors).
template <size_t I>
CollectiveSpec& collective_at(Collectives& c) {
  return c[I];
}

template <size_t... I>
constexpr std::array<CollectiveSpec& (*)(Collectives&), sizeof...(I)> collective_accessors(
    std::index_sequence<I...>) {
  return {&collective_at<I>...};
}

const Table<Collectives>& collectives_table() {
  static const Table<Collectives> table = [] {
    constexpr auto accessors = collective_accessors(std::make_index_sequence<kNumCollectiveKinds>());
    Table<Collectives> rows;
    const EnumNames& names = collective_names();
    for (size_t i = 0; i < names.names.size() && i < accessors.size(); ++i) {
      rows.push_back(Fields<Collectives>::object(
          names.names[i].c_str(), accessors[i], collective_table(), kOptional,
          {"", names.names[i].c_str(), "measured efficiency and latency of this collective (nccl-tests fits)"}));
    }
    return rows;
  }();
  return table;
}

// {"<group size>": GB/s, ...}: measured data-parallel bandwidth by group size.
Field<LinkSpec> bandwidth_table_row(const char* key, std::map<int64_t, double> LinkSpec::*member,
                                    const char* help) {
  FieldInfo info = Fields<LinkSpec>::info(key, Type::kMap, kOptional, {"GB/s", key, help});
  info.items = Type::kNumber;
  auto read = [key, member](ObjectReader& r, LinkSpec& link, const ReadContext&) {
    const nlohmann::json* value = r.raw(key);
    if (value == nullptr) return;
    const std::string path = r.path_of(key);
    if (!value->is_object()) {
      r.issues().push_back({path, "expected object, got " + describe_json_value(*value)});
      return;
    }
    for (const auto& [size, bandwidth] : value->items()) {
      const std::string item = path + "/" + json_pointer_escape(size);
      int64_t group = 0;
      try {
        size_t used = 0;
        group = std::stoll(size, &used);
        if (used != size.size() || group < 2) group = 0;
      } catch (const std::exception&) {
        group = 0;
      }
      if (group == 0) {
        r.issues().push_back({item, "expected a group size (integer >= 2) as key"});
      } else if (!bandwidth.is_number() || !(bandwidth.get<double>() >= kMinRate) ||
                 bandwidth.get<double>() > kMaxGbPerS) {
        r.issues().push_back(
            {item, "expected a number from 1e-06 to 1e7 (GB/s), got " + describe_json_value(bandwidth)});
      } else {
        (link.*member)[group] = bandwidth.get<double>() * kGB;
      }
    }
  };
  auto write = [key, member](const LinkSpec& link, nlohmann::json& out) {
    if ((link.*member).empty()) return;
    nlohmann::json table = nlohmann::json::object();
    for (const auto& [group, bytes_per_s] : link.*member) table[std::to_string(group)] = human(bytes_per_s, kGB);
    out[key] = table;
  };
  return Fields<LinkSpec>::custom(info, read, write);
}

Table<LinkSpec> make_link_table(bool tier) {
  using L = Fields<LinkSpec>;
  Table<LinkSpec> table = {
      L::number("bandwidth_gb_per_s", TRAINSIM_AT(bandwidth_bytes_per_s), kRequired, kMinRate, kMaxGbPerS, false, kGB,
                {"GB/s", "Bandwidth", "per GPU and direction"}),
      L::number("latency_us", TRAINSIM_AT(latency_s), kRequired, 0.0, 1e6, false, kMicro,
                {"us", "Latency", "per ring step"}),
      L::number("efficiency", TRAINSIM_AT(efficiency), kDefault, kMinRate, 1.0, false, 1.0,
                {"", "Efficiency", "achieved fraction of the bandwidth"}),
      L::number("nvls_all_reduce_efficiency", TRAINSIM_AT(nvls_all_reduce_efficiency), kOptional, 0.0, 1.0,
                false, 1.0,
                {"", "NVLS all-reduce efficiency",
                 "NVLink SHARP all-reduce algorithm bandwidth over the link bandwidth, measured (absent: no NVLS)"}),
  };
  if (tier) {
    table.push_back(L::integer("max_group_size", TRAINSIM_AT(max_group_size), kRequired, 1, kMaxGpus,
                               {"", "Max group size", "largest group (span in GPUs) this tier serves"}));
  }
  table.push_back(L::object("collectives", TRAINSIM_AT(collectives), collectives_table(), kOptional,
                            {"", "Collectives", "per-collective overrides measured on this link"}));
  table.push_back(bandwidth_table_row("dp_all_gather_gb_per_s", &LinkSpec::dp_all_gather_bytes_per_s,
                                      "measured data-parallel all-gather bandwidth by group size"));
  table.push_back(bandwidth_table_row("dp_reduce_scatter_gb_per_s", &LinkSpec::dp_reduce_scatter_bytes_per_s,
                                      "measured data-parallel reduce-scatter bandwidth by group size"));
  return table;
}

}  // namespace

const Table<LinkSpec>& link_table(bool tier) {
  static const Table<LinkSpec> link = make_link_table(false);
  static const Table<LinkSpec> tier_link = make_link_table(true);
  return tier ? tier_link : link;
}

}  // namespace trainsim::schema
