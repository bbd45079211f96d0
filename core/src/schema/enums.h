// One name table per enumeration of the documents: the readers, the canonical
// writer, the importers/exporters and the published schema all use these (an
// enumerator's value is its index in the table, so the order here is the order
// of the C++ enum).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::schema {

struct EnumNames {
  std::string id;                   ///< published name, e.g. "activation"
  std::vector<std::string> names;   ///< names[static_cast<size_t>(enumerator)]
  std::vector<std::string> labels;  ///< optional human labels, same order

  template <typename E>
  const std::string& of(E value) const {
    return names[static_cast<size_t>(value)];
  }
  std::optional<size_t> find(std::string_view name) const;
  // "\"a\", \"b\", \"c\"" for messages.
  std::string quoted() const;
};

const EnumNames& activation_names();             ///< Activation
const EnumNames& norm_names();                   ///< Norm
const EnumNames& position_embedding_names();     ///< PositionEmbedding
const EnumNames& dtype_names();                  ///< Dtype
const EnumNames& recompute_granularity_names();  ///< RecomputeGranularity
const EnumNames& recompute_method_names();       ///< RecomputeMethod
const EnumNames& recompute_module_names();       ///< RecomputeModule
const EnumNames& cp_comm_type_names();           ///< CpCommType
const EnumNames& pipeline_schedule_names();      ///< PipelineSchedule
const EnumNames& moe_dispatcher_names();         ///< MoeDispatcher
const EnumNames& moe_load_balancing_names();     ///< MoeLoadBalancing
const EnumNames& collective_names();             ///< CollectiveKind
const EnumNames& search_objective_names();       ///< SearchObjective
const EnumNames& search_diversity_names();       ///< SearchDiversity
const EnumNames& whatif_figure_names();          ///< SystemFigure (with labels)
const EnumNames& fp8_recipe_names();             ///< Fp8Recipe
const EnumNames& cuda_graph_impl_names();        ///< CudaGraphImpl
const EnumNames& cuda_graph_module_names();      ///< CudaGraphModule
const EnumNames& provenance_kind_names();        ///< ProvenanceKind

// Every table above, in that order (the published "enums").
std::vector<const EnumNames*> all_enum_names();

}  // namespace trainsim::schema
