// Search documents: JSON -> SearchSpec (strict, path-named issues like config
// documents), with what a result needs to write each plan as a config.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "search/search.h"
#include "search/search_spec.h"
#include "schema/field.h"
#include "trainsim/issue.h"

namespace trainsim::schema {

class ObjectReader;

struct SearchRequest {
  SearchSpec spec;
  SearchPage page;
  bool include_points = false;
  // The document's own values, to write each candidate as a config document.
  nlohmann::json model;                   ///< preset id or object, as given
  nlohmann::json system;                  ///< preset id or object, as given
  nlohmann::json training;                ///< the fixed training keys, as given
  std::string dtype;                      ///< as given; "" = the default
  std::vector<nlohmann::json> recompute;  ///< each recompute mode, as given
};

bool read_search_request(std::string_view text, SearchRequest& request, Issues& issues);

// The published keys of a search document and of its "constraints" (search_fields.cpp).
std::vector<FieldInfo> search_fields();
std::vector<FieldInfo> search_constraint_fields();

// "/constraints" (null: absent): allowed degrees, recompute modes, ZeRO stages,
// sequence parallelism, uneven stages (search_constraints_json.cpp).
void read_search_constraints(const nlohmann::json* value, SearchRequest& request, Issues& issues);

// An integer, or a non-empty array of distinct integers, each in [min, max];
// empty when the key is absent or bad (issues then say why).
std::vector<int64_t> read_int_choices(ObjectReader& r, const char* key, int64_t min_value,
                                      int64_t max_value);

// A choice key's value (search/choices.h) as the training key writes it (an enum's name, a number).
nlohmann::json choice_value_json(size_t dimension, double value);

}  // namespace trainsim::schema
