// Merging a search run page by page ({"page": {"classes": [...]}} in the
// search document) back into the result of one run: the pages' counts add up,
// the top K and the Pareto front are re-ranked over the pages' entries with
// the search's own ordering (search/rank.h), the points and the closest plan
// merge like the search's own (search/collector.h), and with the search
// document the hints are derived from the merged counts.
#include "report/search_merge.h"

#include <map>
#include <optional>
#include <set>

#include "report/search_result.h"
#include "schema/enums.h"
#include "schema/json_reader.h"
#include "schema/search_request.h"
#include "search/collector.h"
#include "search/hints.h"
#include "search/rank.h"

namespace trainsim::report {
namespace {

using Json = nlohmann::json;
using schema::describe_json_value;
using schema::ObjectReader;

constexpr const char* kCounts[] = {"layout_classes", "considered", "skipped", "invalid",
                                   "candidates", "uneven_candidates", "bounded", "pruned",
                                   "evaluated", "infeasible", "feasible", "timed",
                                   "rejected_by_replay"};
constexpr const char* kReasons[] = {"invalid_by_reason", "pruned_by_reason",
                                    "infeasible_by_reason"};
constexpr const char* kSameInEveryPage[] = {"objective", "diversity", "top_k", "capacity_bytes",
                                            "memory_budget_bytes", "search"};

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
           m["tokens_per_s_per_gpu"].get<double>(), m["mfu"].get<double>(),
           m.value("time_to_train_s", 0.0), m.value("gpu_hours", 0.0)}};
}

// Structure a page result must have; issues name what is missing.
bool check_page(const Json& page, const std::string& path, Issues& issues) {
  const size_t before = issues.size();
  if (!page.is_object()) {
    issues.push_back({path, "expected a search result object, got " + describe_json_value(page)});
    return false;
  }
  for (const char* key : {"objective", "diversity", "top_k", "capacity_bytes",
                          "memory_budget_bytes", "search", "page", "counts", "top", "pareto"}) {
    if (!page.contains(key)) issues.push_back({path + "/" + key, "missing required key"});
  }
  if (issues.size() > before) return false;
  if (!page["objective"].is_string()) issues.push_back({path + "/objective", "expected string"});
  if (!page["top_k"].is_number_integer()) issues.push_back({path + "/top_k", "expected integer"});
  const Json& classes = page["page"].is_object() ? page["page"].value("classes", Json()) : Json();
  if (!classes.is_array()) issues.push_back({path + "/page/classes", "expected array"});
  for (const Json& c : classes.is_array() ? classes : Json::array()) {
    if (!c.is_number_integer()) {
      issues.push_back({path + "/page/classes", "expected integers"});
      break;
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
  if (page.contains("closest") && !is_entry(page["closest"])) {
    issues.push_back({path + "/closest", "expected a search entry (index and metrics)"});
  }
  if (!page["counts"].is_object()) issues.push_back({path + "/counts", "expected object"});
  const Json& search = page["search"];
  if (!search.is_object() || !search.value("layout_classes", Json()).is_number_integer()) {
    issues.push_back({path + "/search/layout_classes", "expected integer"});
  }
  return issues.size() == before;
}

// The pages must come from one search and cover its layout classes once each.
void check_consistent(const Json& pages, Issues& issues) {
  const Json& first = pages[0];
  std::set<int64_t> seen;
  for (size_t i = 0; i < pages.size(); ++i) {
    const std::string path = "/pages/" + std::to_string(i);
    for (const char* key : kSameInEveryPage) {
      if (pages[i][key] != first[key]) {
        issues.push_back(
            {path + "/" + key, "differs from the first page (" + first[key].dump() + ")"});
      }
    }
    for (const Json& c : pages[i]["page"]["classes"]) {
      if (!seen.insert(c.get<int64_t>()).second) {
        issues.push_back({path + "/page/classes", "layout class " + c.dump() +
                                                      " is in an earlier page too"});
        return;
      }
    }
  }
  const auto total = first["search"]["layout_classes"].get<int64_t>();
  if (issues.empty() && static_cast<int64_t>(seen.size()) != total) {
    issues.push_back({"/pages", "the pages cover " + std::to_string(seen.size()) + " of the " +
                                    std::to_string(total) + " layout classes"});
  }
}

Json merged_counts(const Json& pages) {
  Json counts = Json::object();
  for (const char* key : kCounts) counts[key] = 0;
  for (const char* key : kReasons) counts[key] = Json::object();
  for (const Json& page : pages) {
    const Json& c = page["counts"];
    for (const char* key : kCounts) {
      counts[key] = counts[key].get<int64_t>() + c.value(key, int64_t{0});
    }
    for (const char* key : kReasons) {
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

// The points of every page, thinned like the search's own sample.
Json merged_points(const Json& pages) {
  std::vector<std::pair<uint64_t, Json>> rows;
  for (const Json& page : pages) {
    for (const Json& row : page["points"]["rows"]) {
      if (row.is_array() && !row.empty() && row[0].is_number_integer()) {
        rows.emplace_back(point_hash(row[0].get<int64_t>()), row);
      }
    }
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (static_cast<int64_t>(rows.size()) > kMaxSearchPoints) rows.resize(kMaxSearchPoints);
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second[0] < b.second[0]; });
  Json out = pages[0]["points"];
  out["rows"] = Json::array();
  for (auto& [hash, row] : rows) out["rows"].push_back(std::move(row));
  return out;
}

SearchCounts counts_of(const Json& c) {
  SearchCounts counts;
  counts.considered = c["considered"].get<int64_t>();
  counts.candidates = c["candidates"].get<int64_t>();
  counts.pruned = c["pruned"].get<int64_t>();
  counts.infeasible = c["infeasible"].get<int64_t>();
  counts.feasible = c["feasible"].get<int64_t>();
  for (const auto& [reason, n] : c["invalid_by_reason"].items()) {
    counts.invalid_by_reason[reason] = n.get<int64_t>();
  }
  for (const auto& [reason, n] : c["infeasible_by_reason"].items()) {
    counts.infeasible_by_reason[reason] = n.get<int64_t>();
  }
  return counts;
}

}  // namespace

Json merge_search_pages(std::string_view text, Issues& issues) {
  Json document;
  if (!schema::parse_document(text, "", document, issues)) return nullptr;
  ObjectReader r(document, "", issues);
  const Json* pages = r.raw("pages");
  const Json* search = r.raw("search");
  r.finish();
  if (r.ok() && (pages == nullptr || !pages->is_array() || pages->empty())) {
    issues.push_back({"/pages", "expected a non-empty array of search results"});
  }
  schema::SearchRequest request;
  if (issues.empty() && search != nullptr) {
    Issues search_issues;
    schema::read_search_request(search->dump(), request, search_issues);
    for (const Issue& issue : search_issues) issues.push_back({"/search" + issue.path, issue.message});
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
  merged.erase("page");
  const SearchObjective objective = static_cast<SearchObjective>(
      schema::search_objective_names().find(merged["objective"].get<std::string>()).value_or(0));
  merged["counts"] = merged_counts(results);
  merged["top"] = merged_entries(results, "top", merged["top_k"].get<int64_t>(), objective);
  merged["pareto"] = merged_entries(results, "pareto", std::nullopt, objective);
  merged.erase("closest");
  for (const Json& page : results) {
    if (!page.contains("closest")) continue;
    const Json& c = page["closest"];
    const auto key = std::pair(c["metrics"]["peak_bytes"].get<double>(), c["index"].get<int64_t>());
    if (!merged.contains("closest") ||
        key < std::pair(merged["closest"]["metrics"]["peak_bytes"].get<double>(),
                        merged["closest"]["index"].get<int64_t>())) {
      merged["closest"] = c;
    }
  }
  bool points = true;
  for (const Json& page : results) points = points && page.contains("points");
  if (points) {
    merged["points"] = merged_points(results);
  } else {
    merged.erase("points");
  }
  if (search != nullptr) {
    const std::optional<double> closest =
        merged.contains("closest")
            ? std::optional<double>(merged["closest"]["metrics"]["peak_bytes"].get<double>())
            : std::nullopt;
    merged["hints"] = search_hints_json(search_hints(request.spec, counts_of(merged["counts"]),
                                                     merged["memory_budget_bytes"].get<double>(),
                                                     closest));
  }
  return merged;
}

}  // namespace trainsim::report
