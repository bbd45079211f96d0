#include "schema/config_writer.h"

#include "schema/config_schema.h"

namespace trainsim::schema {

nlohmann::json model_to_json(const ModelSpec& model) { return write_object(model_table(), model); }

nlohmann::json training_to_json(const TrainingSpec& training) {
  TrainingInput input;
  input.spec = training;
  return write_object(training_table(), input);
}

nlohmann::json system_to_json(const SystemSpec& system) { return write_object(system_table(), system); }

nlohmann::json config_to_json(const Config& c) {
  return {{"schema_version", kSchemaVersion},
          {"model", model_to_json(c.model)},
          {"training", training_to_json(c.training)},
          {"system", system_to_json(c.system)}};
}

}  // namespace trainsim::schema
