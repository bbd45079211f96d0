#include "validation/oracle_cases.h"

#include "test_util.h"
#include "trainsim/trainsim.h"

namespace trainsim::testing {
namespace {

std::vector<OracleCase> load() {
  const nlohmann::json data =
      nlohmann::json::parse(read_text_file(test_data_path("validation/data/simumax_a100_oracle.json")));
  const nlohmann::json system = nlohmann::json::parse(
      read_text_file(test_data_path("validation/data/a100_pcie_simumax_system.json")))["system"];
  std::vector<OracleCase> cases;
  for (const nlohmann::json& c : data["cases"]) {
    OracleCase oc;
    oc.id = c["id"].get<int64_t>();
    oc.expected = c;
    const nlohmann::json imported = nlohmann::json::parse(
        import_simumax_json(c["simumax_model"].dump(), c["simumax_strategy"].dump(), ""));
    if (!imported["ok"].get<bool>()) {
      oc.error = imported["errors"].dump();
      cases.push_back(oc);
      continue;
    }
    oc.config = imported["result"]["config"];
    nlohmann::json overrides = oc.config["system"];
    overrides.erase("preset");
    oc.config["system"] = system;
    oc.config["system"].update(overrides);
    const nlohmann::json envelope = nlohmann::json::parse(estimate_json(oc.config.dump()));
    if (envelope["ok"].get<bool>()) {
      oc.result = envelope["result"];
    } else {
      oc.result = nlohmann::json::object();
      oc.error = envelope["errors"].dump();
    }
    cases.push_back(oc);
  }
  return cases;
}

}  // namespace

const std::vector<OracleCase>& oracle_cases() {
  static const std::vector<OracleCase> cases = load();
  return cases;
}

const nlohmann::json& oracle_stage(const OracleCase& c, const std::string& name) {
  const nlohmann::json& stages = c.result["memory"]["stages"];
  if (name == "first_stage") return stages.front();
  if (name == "last_stage") return stages.back();
  if (name == "middle_stage") return stages.at(1);
  return stages.at(std::stoul(name.substr(std::string("pp_stage_").size())));
}

}  // namespace trainsim::testing
