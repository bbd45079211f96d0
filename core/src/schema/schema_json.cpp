#include "schema/schema_json.h"

#include "schema/config_schema.h"
#include "schema/search_request.h"
#include "schema/whatif_request.h"
#include "search/choices.h"
#include "whatif/system_scaling.h"

namespace trainsim::schema {
namespace {

nlohmann::json fields_json(const std::vector<FieldInfo>& fields) {
  nlohmann::json out = nlohmann::json::array();
  for (const FieldInfo& field : fields) out.push_back(to_json(field));
  return out;
}

// The constraints that list values of a training key (search/choices.h): without
// one the search tries the training's value.
nlohmann::json search_choice_keys() {
  nlohmann::json keys = nlohmann::json::array();
  for (const ChoiceDimension& dimension : choice_dimensions()) keys.push_back(dimension.key);
  return keys;
}

nlohmann::json build() {
  nlohmann::json enums = nlohmann::json::object();
  for (const EnumNames* names : all_enum_names()) enums[names->id] = names->names;
  nlohmann::json figures = nlohmann::json::array();
  const EnumNames& names = whatif_figure_names();
  for (const SystemFigure figure : kAllSystemFigures) {
    figures.push_back({{"id", names.of(figure)},
                       {"label", names.labels[static_cast<size_t>(figure)]},
                       {"smaller_is_better", smaller_is_better(figure)}});
  }
  return {{"schema_version", kSchemaVersion},
          {"enums", enums},
          {"config",
           {{"model", fields_json(describe(model_table()))},
            {"training", fields_json(describe(training_table()))},
            {"system", fields_json(describe(system_table()))}}},
          {"search", fields_json(search_fields())},
          {"search_constraints", fields_json(search_constraint_fields())},
          {"search_choices", search_choice_keys()},
          {"whatif", fields_json(whatif_fields())},
          {"whatif_figures", figures}};
}

}  // namespace

const nlohmann::json& schema_document() {
  static const nlohmann::json document = build();
  return document;
}

}  // namespace trainsim::schema
