// Merging a search run page by page ({"page": {"offset", "limit"}} in the
// search document) back into the result of one run: the page's counts add up,
// the top K and the Pareto front are re-ranked over the pages' entries with
// the search's own ordering (search/rank.h), and the points concatenate.
#include <map>
#include <optional>

#include "report/search_merge.h"
#include "schema/json_reader.h"
#include "search/rank.h"

namespace trainsim::report {
namespace {

using Json = nlohmann::json;
using schema::describe_json_value;
using schema::ObjectReader;

constexpr const char* kEnumerationCounts[] = {"considered", "invalid", "candidates"};
constexpr const char* kPageCounts[] = {"pruned", "evaluated", "infeasible", "feasible", "timed",
                                       "rejected_by_replay"};
constexpr const char* kPageReasons[] = {"pruned_by_reason", "infeasible_by_reason"};
constexpr const char* kSameInEveryPage[] = {"objective", "top_k", "capacity_bytes",
                                            "memory_budget_bytes"};

bool is_entry(const Json& e) {
  if (!e.is_object() || !e.contains("index") || !e["index"].is_number_integer()) return false;
  const auto metrics = e.find("metrics");
  if (metrics == e.end() || !metrics->is_object()) return false;
  for (const char* key : {"iteration_s", "peak_bytes", "tokens_per_s_per_gpu", "mfu"}) {
    if (!metrics->contains(key) || !(*metrics)[key].is_number()) return false;
  }
  return true;
}

RankKey rank_key(const Json& e) {
  const Json& m = e["metrics"];
  return {e["index"].get<int64_t>(),
          {m["iteration_s"].get<double>(), m["peak_bytes"].get<double>(),
           m["tokens_per_s_per_gpu"].get<double>(), m["mfu"].get<double>()}};
}

// Structure a page result must have; issues name what is missing.
bool check_page(const Json& page, const std::string& path, Issues& issues) {
  const size_t before = issues.size();
  if (!page.is_object()) {
    issues.push_back({path, "expected a search result object, got " + describe_json_value(page)});
    return false;
  }
  for (const char* key : {"objective", "top_k", "capacity_bytes", "memory_budget_bytes", "page",
                          "counts", "top", "pareto"}) {
    if (!page.contains(key)) issues.push_back({path + "/" + key, "missing required key"});
  }
  if (issues.size() > before) return false;
  if (!page["objective"].is_string()) issues.push_back({path + "/objective", "expected string"});
  if (!page["top_k"].is_number_integer()) issues.push_back({path + "/top_k", "expected integer"});
  const Json& range = page["page"];
  for (const char* key : {"offset", "end", "candidates"}) {
    if (!range.is_object() || !range.contains(key) || !range[key].is_number_integer()) {
      issues.push_back({path + "/page/" + key, "expected integer"});
    }
  }
  for (const char* list : {"top", "pareto"}) {
    const Json& entries = page[list];
    if (!entries.is_array()) {
      issues.push_back({path + "/" + list, "expected array, got " + describe_json_value(entries)});
      continue;
    }
    for (size_t i = 0; i < entries.size(); ++i) {
      if (!is_entry(entries[i])) {
        issues.push_back({path + "/" + list + "/" + std::to_string(i),
                          "expected a search entry (index and metrics)"});
      }
    }
  }
  if (!page["counts"].is_object()) issues.push_back({path + "/counts", "expected object"});
  return issues.size() == before;
}

// The pages must come from one search and follow each other.
void check_consistent(const Json& pages, Issues& issues) {
  const Json& first = pages[0];
  for (size_t i = 1; i < pages.size(); ++i) {
    const std::string path = "/pages/" + std::to_string(i);
    for (const char* key : kSameInEveryPage) {
      if (pages[i][key] != first[key]) {
        issues.push_back(
            {path + "/" + key, "differs from the first page (" + first[key].dump() + ")"});
      }
    }
    for (const char* key : kEnumerationCounts) {
      if (pages[i]["counts"].value(key, Json()) != first["counts"].value(key, Json())) {
        issues.push_back({path + "/counts/" + key, "differs from the first page"});
      }
    }
    const Json& previous_end = pages[i - 1]["page"]["end"];
    if (pages[i]["page"]["offset"] != previous_end) {
      issues.push_back({path + "/page/offset", "expected " + previous_end.dump() +
                                                   " (the previous page's end), got " +
                                                   pages[i]["page"]["offset"].dump()});
    }
  }
}

Json merged_counts(const Json& pages) {
  Json counts = pages[0]["counts"];
  for (const char* key : kPageCounts) counts[key] = 0;
  for (const char* key : kPageReasons) counts[key] = Json::object();
  for (const Json& page : pages) {
    const Json& c = page["counts"];
    for (const char* key : kPageCounts) {
      counts[key] = counts[key].get<int64_t>() + c.value(key, int64_t{0});
    }
    for (const char* key : kPageReasons) {
      const Json reasons = c.value(key, Json::object());
      for (const auto& [reason, n] : reasons.items()) {
        counts[key][reason] = counts[key].value(reason, int64_t{0}) + n.get<int64_t>();
      }
    }
  }
  return counts;
}

Json merged_entries(const Json& pages, const char* list, std::optional<int64_t> top_k,
                    SearchObjective objective) {
  std::vector<const Json*> entries;
  std::vector<RankKey> keys;
  for (const Json& page : pages) {
    for (const Json& e : page[list]) {
      entries.push_back(&e);
      keys.push_back(rank_key(e));
    }
  }
  const std::vector<size_t> order =
      top_k ? top_positions(keys, *top_k, objective) : pareto_positions(keys);
  Json out = Json::array();
  for (size_t i = 0; i < order.size(); ++i) {
    out.push_back(*entries[order[i]]);
    if (top_k) out.back()["rank"] = i + 1;
  }
  return out;
}

}  // namespace

Json merge_search_pages(std::string_view text, Issues& issues) {
  Json document;
  if (!schema::parse_document(text, "", document, issues)) return nullptr;
  ObjectReader r(document, "", issues);
  const Json* pages = r.raw("pages");
  r.finish();
  if (r.ok() && (pages == nullptr || !pages->is_array() || pages->empty())) {
    issues.push_back({"/pages", "expected a non-empty array of search results"});
  }
  if (!issues.empty()) return nullptr;
  Json results = Json::array();
  for (size_t i = 0; i < pages->size(); ++i) {
    const Json& page = (*pages)[i];
    // A whole envelope is accepted for its result.
    results.push_back(page.is_object() && page.contains("result") ? page["result"] : page);
    check_page(results.back(), "/pages/" + std::to_string(i), issues);
  }
  if (issues.empty()) check_consistent(results, issues);
  if (!issues.empty()) return nullptr;
  Json merged = results[0];
  const SearchObjective objective = merged["objective"] == "step_time"
                                        ? SearchObjective::kStepTime
                                        : SearchObjective::kTokensPerSecondPerGpu;
  merged["page"]["end"] = results.back()["page"]["end"];
  merged["counts"] = merged_counts(results);
  merged["top"] = merged_entries(results, "top", merged["top_k"].get<int64_t>(), objective);
  merged["pareto"] = merged_entries(results, "pareto", std::nullopt, objective);
  bool points = true;
  for (const Json& page : results) points = points && page.contains("points");
  if (points) {
    for (size_t i = 1; i < results.size(); ++i) {
      for (const Json& row : results[i]["points"]["rows"]) merged["points"]["rows"].push_back(row);
    }
  } else {
    merged.erase("points");
  }
  return merged;
}

}  // namespace trainsim::report
