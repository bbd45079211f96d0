// The field tables of the documents. Each section (model, training, system and
// their nested objects) is one Table: a list of rows, each naming a key, its
// type, whether it is required or defaults (the default is the spec's own
// default member value), its bounds, the unit conversion into the spec (SI)
// and its label and help text. The same rows drive the reader
// (read_object), the canonical writer (write_object) and the published schema
// (describe). Keys with rules of their own (recompute, te_version,
// moe_layer_freq, measured tables) are rows with custom read/write hooks.
// Adding a plain key: one row here plus the spec member.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "schema/enums.h"
#include "schema/json_reader.h"
#include "trainsim/spec.h"

namespace trainsim::schema {

enum class Type { kInt, kNumber, kBool, kString, kEnum, kObject, kArray, kMap };

enum class Presence {
  kRequired,  ///< absent: "missing required key"
  kDefault,   ///< absent: the spec's default member value (published as "default")
  kOptional,  ///< absent: not set (the spec keeps its "not given" value); written only when set
  kDerived,   ///< absent: computed from keys read before it (the help says how); always written
};

// What the schema publishes about one key (README "Config reference").
struct FieldInfo {
  std::string key;  ///< dotted path inside its section, e.g. "moe.num_experts"
  Type type = Type::kInt;
  Presence presence = Presence::kDefault;
  const EnumNames* enumeration = nullptr;  ///< kEnum, or arrays/maps of enum values
  std::optional<Type> items;               ///< kArray / kMap: the items' type
  nlohmann::json default_value;            ///< null: none published
  std::optional<double> min, max;
  bool min_exclusive = false;
  std::string unit, label, help;
};

nlohmann::json to_json(const FieldInfo& info);

struct Meta {
  const char* unit;
  const char* label;
  const char* help;
};

// Keys read before the current object that its rows may depend on.
struct ReadContext {
  const ModelSpec* model = nullptr;  ///< the model being read (its num_layers)
};

template <typename S>
struct Field {
  FieldInfo info;  ///< empty key: a rule row (read hook only, not published)
  std::function<void(ObjectReader&, S&, const ReadContext&)> read;
  std::function<void(const S&, nlohmann::json&)> write;  ///< null: never written
  std::vector<FieldInfo> members;  ///< objects: their rows, keys relative to this one
};

template <typename S>
using Table = std::vector<Field<S>>;

// SI -> human unit, rounded to 12 significant digits so that 80 GiB prints as
// 80 and not as 79.99999999999999.
double human(double value_si, double unit);

template <typename S>
bool read_object(const Table<S>& table, const nlohmann::json& value, const std::string& path,
                 S& spec, Issues& issues, const ReadContext& context) {
  ObjectReader r(value, path, issues);
  if (!r.ok()) return false;
  for (const Field<S>& field : table) {
    if (field.read) field.read(r, spec, context);
  }
  r.finish();
  return true;
}

template <typename S>
nlohmann::json write_object(const Table<S>& table, const S& spec) {
  nlohmann::json out = nlohmann::json::object();
  for (const Field<S>& field : table) {
    if (field.write) field.write(spec, out);
  }
  return out;
}

// The rows of a table as published, objects followed by their members.
template <typename S>
std::vector<FieldInfo> describe(const Table<S>& table) {
  std::vector<FieldInfo> out;
  for (const Field<S>& field : table) {
    if (field.info.key.empty()) continue;
    out.push_back(field.info);
    for (FieldInfo member : field.members) {
      member.key = field.info.key + "." + member.key;
      out.push_back(std::move(member));
    }
  }
  return out;
}

// Row builders for a table of S. `ref` is a captureless lambda giving the member
// (TRAINSIM_AT(parallel.tp)), so one accessor serves the reader and the writer.
// Each builder turns it into a plain function pointer (Get<T>) before building
// the row: the reading and writing code is then instantiated once per member
// type, not once per row (which kept the WebAssembly module large).
#define TRAINSIM_AT(member) [](auto& s) -> auto& { return s.member; }

template <typename S>
struct Fields {
  template <typename T>
  using Get = T& (*)(S&);

  template <typename Ref>
  static auto accessor(Ref ref) {
    using T = std::remove_cvref_t<decltype(ref(std::declval<S&>()))>;
    return static_cast<Get<T>>(ref);
  }

  // The member of a const spec (the accessors only read through it here).
  template <typename T>
  static const T& at(Get<T> get, const S& s) {
    return get(const_cast<S&>(s));
  }

  template <typename T>
  static T default_of(Get<T> get) {
    static const S defaults{};
    return at(get, defaults);
  }

  static FieldInfo info(const char* key, Type type, Presence presence, Meta meta) {
    FieldInfo i;
    i.key = key;
    i.type = type;
    i.presence = presence;
    i.unit = meta.unit;
    i.label = meta.label;
    i.help = meta.help;
    return i;
  }

  // An int64_t or std::optional<int64_t> member. kDerived: `derive` gives the value
  // when the key is absent.
  template <typename Ref>
  static Field<S> integer(const char* key, Ref ref, Presence presence, int64_t min, int64_t max,
                          Meta meta, std::function<int64_t(const S&)> derive = nullptr) {
    return integer_row(key, accessor(ref), presence, min, max, meta, std::move(derive));
  }

  template <typename T>
  static Field<S> integer_row(const char* key, Get<T> get, Presence presence, int64_t min,
                              int64_t max, Meta meta, std::function<int64_t(const S&)> derive) {
    Field<S> f;
    f.info = info(key, Type::kInt, presence, meta);
    f.info.min = static_cast<double>(min);
    f.info.max = static_cast<double>(max);
    if constexpr (std::is_same_v<T, int64_t>) {
      if (presence == Presence::kDefault) f.info.default_value = default_of(get);
    }
    f.read = [=](ObjectReader& r, S& s, const ReadContext&) {
      if constexpr (std::is_same_v<T, std::optional<int64_t>>) {
        get(s) = r.optional_int(key, min, max);
      } else if (presence == Presence::kRequired) {
        get(s) = r.required_int(key, min, max);
      } else if (presence == Presence::kOptional) {
        if (const auto v = r.optional_int(key, min, max)) get(s) = *v;
      } else {
        get(s) = r.int_or(key, derive ? derive(s) : default_of(get), min, max);
      }
    };
    f.write = [=](const S& s, nlohmann::json& out) {
      if constexpr (std::is_same_v<T, std::optional<int64_t>>) {
        if (at(get, s)) out[key] = *at(get, s);
      } else {
        if (presence != Presence::kOptional || at(get, s) != default_of(get)) out[key] = at(get, s);
      }
    };
    return f;
  }

  // A double member; the JSON value times `scale` is the spec's (SI) value.
  template <typename Ref>
  static Field<S> number(const char* key, Ref ref, Presence presence, double min, double max,
                         bool min_exclusive, double scale, Meta meta,
                         std::function<double(const S&)> derive = nullptr) {
    return number_row(key, accessor(ref), presence, min, max, min_exclusive, scale, meta,
                      std::move(derive));
  }

  static Field<S> number_row(const char* key, Get<double> get, Presence presence, double min,
                             double max, bool min_exclusive, double scale, Meta meta,
                             std::function<double(const S&)> derive) {
    Field<S> f;
    f.info = info(key, Type::kNumber, presence, meta);
    f.info.min = min;
    f.info.max = max;
    f.info.min_exclusive = min_exclusive;
    if (presence == Presence::kDefault) f.info.default_value = default_of(get) / scale;
    f.read = [=](ObjectReader& r, S& s, const ReadContext&) {
      if (presence == Presence::kRequired) {
        get(s) = r.required_number(key, min, max, min_exclusive) * scale;
      } else if (presence == Presence::kOptional) {
        if (const auto v = r.optional_number(key, min, max, min_exclusive)) get(s) = *v * scale;
      } else {
        const double fallback = derive ? derive(s) : default_of(get);
        get(s) = r.number_or(key, fallback / scale, min, max, min_exclusive) * scale;
      }
    };
    f.write = [=](const S& s, nlohmann::json& out) {
      if (presence == Presence::kOptional && at(get, s) == default_of(get)) return;
      out[key] = scale == 1.0 ? at(get, s) : human(at(get, s), scale);
    };
    return f;
  }

  template <typename Ref>
  static Field<S> boolean(const char* key, Ref ref, Meta meta) {
    const Get<bool> get = accessor(ref);
    Field<S> f;
    f.info = info(key, Type::kBool, Presence::kDefault, meta);
    f.info.default_value = default_of(get);
    f.read = [=](ObjectReader& r, S& s, const ReadContext&) {
      get(s) = r.bool_or(key, default_of(get));
    };
    f.write = [=](const S& s, nlohmann::json& out) { out[key] = at(get, s); };
    return f;
  }

  template <typename Ref>
  static Field<S> text(const char* key, Ref ref, Meta meta) {
    const Get<std::string> get = accessor(ref);
    Field<S> f;
    f.info = info(key, Type::kString, Presence::kDefault, meta);
    f.info.default_value = default_of(get);
    f.read = [=](ObjectReader& r, S& s, const ReadContext&) {
      get(s) = r.optional_string(key).value_or(default_of(get));
    };
    f.write = [=](const S& s, nlohmann::json& out) { out[key] = at(get, s); };
    return f;
  }

  template <typename Ref>
  static Field<S> choice(const char* key, Ref ref, const EnumNames& names, Meta meta) {
    return choice_row(key, accessor(ref), names, meta);
  }

  template <typename E>
  static Field<S> choice_row(const char* key, Get<E> get, const EnumNames& names, Meta meta) {
    Field<S> f;
    f.info = info(key, Type::kEnum, Presence::kDefault, meta);
    f.info.enumeration = &names;
    f.info.default_value = names.of(default_of(get));
    f.read = [=, &names](ObjectReader& r, S& s, const ReadContext&) {
      get(s) = static_cast<E>(
          r.enum_or(key, names.names, static_cast<size_t>(default_of(get))));
    };
    f.write = [=, &names](const S& s, nlohmann::json& out) { out[key] = names.of(at(get, s)); };
    return f;
  }

  // A nested object: a Sub or std::optional<Sub> member read with its own table.
  // An optional member is set when the key is present and not null. kDerived:
  // `derive` gives the whole object when the key is absent. kOptional objects
  // are written only when not empty.
  template <typename Ref, typename Sub>
  static Field<S> object(const char* key, Ref ref, const Table<Sub>& table, Presence presence,
                         Meta meta, std::type_identity_t<std::function<Sub(const S&)>> derive = nullptr) {
    return object_row(key, accessor(ref), table, presence, meta, std::move(derive));
  }

  template <typename T, typename Sub>
  static Field<S> object_row(const char* key, Get<T> get, const Table<Sub>& table,
                             Presence presence, Meta meta, std::function<Sub(const S&)> derive) {
    constexpr bool kOptionalMember = std::is_same_v<T, std::optional<Sub>>;
    Field<S> f;
    f.info = info(key, Type::kObject, presence, meta);
    f.members = describe(table);
    f.read = [=, &table](ObjectReader& r, S& s, const ReadContext& context) {
      const nlohmann::json* value = r.raw(key);
      if constexpr (kOptionalMember) {
        if (value == nullptr || value->is_null()) return;
        get(s).emplace();
        read_object(table, *value, r.path_of(key), *get(s), r.issues(), context);
      } else {
        if (value != nullptr) {
          read_object(table, *value, r.path_of(key), get(s), r.issues(), context);
        } else if (presence == Presence::kRequired) {
          r.issues().push_back({r.path_of(key), "missing required key"});
        } else if (derive) {
          get(s) = derive(s);
        }
      }
    };
    f.write = [=, &table](const S& s, nlohmann::json& out) {
      if constexpr (kOptionalMember) {
        if (at(get, s)) out[key] = write_object(table, *at(get, s));
      } else {
        nlohmann::json value = write_object(table, at(get, s));
        if (presence != Presence::kOptional || !value.empty()) out[key] = std::move(value);
      }
    };
    return f;
  }

  // A row with hand-written reading and writing; `members` describe its contents.
  static Field<S> custom(FieldInfo field_info,
                         std::function<void(ObjectReader&, S&, const ReadContext&)> read,
                         std::function<void(const S&, nlohmann::json&)> write,
                         std::vector<FieldInfo> members = {}) {
    Field<S> f;
    f.info = std::move(field_info);
    f.read = std::move(read);
    f.write = std::move(write);
    f.members = std::move(members);
    return f;
  }

  // A rule between keys read so far, checked at this point of the reading.
  static Field<S> rule(std::function<void(ObjectReader&, S&, const ReadContext&)> check) {
    Field<S> f;
    f.read = std::move(check);
    return f;
  }
};

}  // namespace trainsim::schema
