// Enumeration: every candidate is a config the parser and validate() accept,
// every accepted combination is a candidate, and the counts add up.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "report/search_result.h"
#include "schema/search_request.h"
#include "search/enumerate.h"
#include "test_util.h"

namespace trainsim {
namespace {

using Json = nlohmann::json;

schema::SearchRequest parse_search(const Json& document) {
  schema::SearchRequest request;
  Issues issues;
  EXPECT_TRUE(schema::read_search_request(document.dump(), request, issues))
      << (issues.empty() ? "" : issues[0].path + ": " + issues[0].message);
  return request;
}

// A 4-layer Llama-3-8B-shaped model on 8 or 16 GPUs, every knob listed.
Json small_search() {
  return Json::parse(R"({
    "model": {"preset": "llama3-8b", "num_layers": 4},
    "system": "h100-sxm-80gb",
    "num_gpus": [8, 16], "global_batch_size": 32, "seq_len": 2048,
    "constraints": {"tp": [1, 2, 4, 8], "cp": [1, 2], "pp": [1, 2, 4], "vpp": [1, 2, 4],
                    "micro_batch_size": [1, 2, 4], "zero_stage": [0, 1],
                    "sequence_parallel": "both",
                    "recompute": [{"granularity": "none"},
                                  {"granularity": "full", "method": "block", "num_layers": 1}]}
  })");
}

using Combo =
    std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, bool, int64_t, int64_t, int64_t>;

Combo combo_of(const Json& training, int64_t gpus) {
  return {gpus,
          training["tp"].get<int64_t>(),
          training["cp"].get<int64_t>(),
          training["pp"].get<int64_t>(),
          training["vpp"].get<int64_t>(),
          training["sequence_parallel"].get<bool>(),
          training["micro_batch_size"].get<int64_t>(),
          training["zero_stage"].get<int64_t>(),
          training["recompute"]["granularity"] == "none" ? 0 : 1};
}

TEST(SearchEnumerateTest, CandidatesAreExactlyTheCombinationsTheParserAccepts) {
  const Json document = small_search();
  const schema::SearchRequest request = parse_search(document);
  const Enumeration all = enumerate_candidates(request.spec);
  std::set<Combo> enumerated;
  for (const Candidate& c : all.candidates) {
    const Json config = report::candidate_config_json(request, c);
    EXPECT_TRUE(enumerated.insert(combo_of(config["training"], c.num_gpus)).second) << config;
  }
  // Brute force: every combination of the listed values as a config document.
  std::set<Combo> accepted;
  int64_t combinations = 0;
  for (const int64_t gpus : {8, 16}) {
    for (const int64_t tp : {1, 2, 4, 8}) {
      for (const int64_t cp : {1, 2}) {
        for (const int64_t pp : {1, 2, 4}) {
          if (gpus % (tp * cp * pp) != 0) continue;
          for (const int64_t vpp : {1, 2, 4}) {
            for (const bool sp : {false, true}) {
              if (tp == 1 && sp) continue;  // a no-op at tp = 1: never a separate candidate
              for (const int64_t mbs : {1, 2, 4}) {
                for (const int64_t zero : {0, 1}) {
                  for (int recompute = 0; recompute < 2; ++recompute) {
                    ++combinations;
                    Json training = {{"seq_len", 2048},
                                     {"global_batch_size", 32},
                                     {"micro_batch_size", mbs},
                                     {"tp", tp},
                                     {"cp", cp},
                                     {"pp", pp},
                                     {"vpp", vpp},
                                     {"sequence_parallel", sp},
                                     {"zero_stage", zero}};
                    training["recompute"] =
                        recompute == 0
                            ? Json{{"granularity", "none"}}
                            : Json{{"granularity", "full"}, {"method", "block"}, {"num_layers", 1}};
                    const Json config = {
                        {"model", document["model"]},
                        {"training", training},
                        {"system", {{"preset", "h100-sxm-80gb"}, {"num_gpus", gpus}}}};
                    Config parsed;
                    Issues issues;
                    if (parse_config(config.dump(), parsed, issues)) {
                      accepted.insert(combo_of(training, gpus));
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(enumerated, accepted);
  EXPECT_EQ(all.considered, combinations);
  int64_t invalid = 0;
  for (const auto& [reason, count] : all.invalid_by_reason) invalid += count;
  EXPECT_EQ(invalid, all.invalid());
  EXPECT_EQ(all.invalid() + static_cast<int64_t>(all.candidates.size()), all.considered);
}

TEST(SearchEnumerateTest, CandidateConfigsParseToTheConfigTheSearchEstimates) {
  const schema::SearchRequest request = parse_search(small_search());
  Config searched = base_config(request.spec);
  for (const Candidate& c : enumerate_candidates(request.spec).candidates) {
    apply_candidate(request.spec, c, searched);
    Config parsed;
    Issues issues;
    ASSERT_TRUE(parse_config(report::candidate_config_json(request, c).dump(), parsed, issues));
    const ParallelSpec& a = parsed.training.parallel;
    const ParallelSpec& b = searched.training.parallel;
    EXPECT_EQ(std::tie(a.tp, a.pp, a.dp, a.cp, a.ep, a.etp, a.vpp, a.sequence_parallel),
              std::tie(b.tp, b.pp, b.dp, b.cp, b.ep, b.etp, b.vpp, b.sequence_parallel));
    EXPECT_EQ(parsed.training.num_micro_batches, searched.training.num_micro_batches);
    EXPECT_EQ(parsed.training.micro_batch_size, searched.training.micro_batch_size);
    EXPECT_EQ(parsed.training.zero_stage, searched.training.zero_stage);
    EXPECT_EQ(parsed.training.recompute.granularity, searched.training.recompute.granularity);
    EXPECT_EQ(parsed.training.recompute.num_layers, searched.training.recompute.num_layers);
    EXPECT_EQ(parsed.system.num_gpus, searched.system.num_gpus);
  }
}

TEST(SearchEnumerateTest, DefaultsStayInsideANodeAndRespectConstraints) {
  Json document = small_search();
  document["constraints"] = {{"max_tp", 4}, {"pp", 2}, {"micro_batch_size", 2}};
  const schema::SearchRequest request = parse_search(document);
  const Enumeration all = enumerate_candidates(request.spec);
  ASSERT_FALSE(all.candidates.empty());
  for (const Candidate& c : all.candidates) {
    EXPECT_LE(c.tp, 4);
    EXPECT_EQ(c.pp, 2);
    EXPECT_EQ(c.micro_batch_size, 2);
    EXPECT_EQ(c.zero_stage, 1);                // default ZeRO stage
    EXPECT_EQ(c.sequence_parallel, c.tp > 1);  // default: SP whenever tp > 1
    EXPECT_EQ(c.num_gpus % (c.tp * c.cp * c.pp), 0);
    EXPECT_EQ(c.dp, c.num_gpus / (c.tp * c.cp * c.pp));
  }
}

TEST(SearchEnumerateTest, AllLayersRecomputeResolvesToTheLargestChunk) {
  Json document = small_search();
  document["num_gpus"] = 8;
  document["constraints"] = {
      {"tp", 1},
      {"cp", 1},
      {"micro_batch_size", 1},
      {"recompute",
       {{{"granularity", "full"}, {"method", "block"}, {"num_layers", "all"}},
        {{"granularity", "full"}, {"method", "block"}, {"num_layers", 4}}}}};
  const schema::SearchRequest request = parse_search(document);
  for (const Candidate& c : enumerate_candidates(request.spec).candidates) {
    EXPECT_EQ(c.recompute_num_layers, 4 / (c.pp * c.vpp)) << c.pp << " " << c.vpp;
    // num_layers 4 recomputes every layer of every chunk, like "all": skipped as a duplicate.
    EXPECT_EQ(c.recompute, 0);
  }
}

TEST(SearchEnumerateTest, ALayerCountListIsOneModePerCount) {
  Json document = small_search();
  document["constraints"]["recompute"] = {
      {{"granularity", "full"}, {"method", "block"}, {"num_layers", {1, 2, "all"}}}};
  const schema::SearchRequest request = parse_search(document);
  ASSERT_EQ(request.spec.recompute.size(), 3u);
  EXPECT_EQ(request.spec.recompute[1].spec.num_layers, 2);
  EXPECT_TRUE(request.spec.recompute[2].all_layers);
  EXPECT_EQ(request.recompute[1]["num_layers"], 2);
}

TEST(SearchEnumerateTest, StageSplitsLeaveEqualMiddleStagesAndLighterEnds) {
  using Splits = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(stage_splits(32, 4, false), (Splits{{0, 0}}));
  EXPECT_EQ(stage_splits(81, 2, true), (Splits{{0, 0}, {40, 41}, {41, 40}}));
  EXPECT_EQ(stage_splits(80, 2, true), (Splits{{0, 0}}));
  // 10 layers on 4 stages: middle m, first + last = 10 - 2m, each in [1, m].
  EXPECT_EQ(stage_splits(10, 4, true), (Splits{{0, 0}, {1, 1}, {1, 3}, {2, 2}, {3, 1}}));
}

TEST(SearchEnumerateTest, UnevenSplitsAreValidConfigs) {
  Json document = small_search();
  document["model"]["num_layers"] = 10;
  document["num_gpus"] = 8;
  document["constraints"] = {
      {"tp", 1}, {"cp", 1}, {"pp", 4}, {"micro_batch_size", 1}, {"uneven_stages", true}};
  const schema::SearchRequest request = parse_search(document);
  const Enumeration all = enumerate_candidates(request.spec);
  std::set<std::pair<int32_t, int32_t>> splits;
  for (const Candidate& c : all.candidates) {
    splits.emplace(c.first_stage_layers, c.last_stage_layers);
    Config parsed;
    Issues issues;
    EXPECT_TRUE(parse_config(report::candidate_config_json(request, c).dump(), parsed, issues));
  }
  // 10 layers do not split evenly over 4 stages: only uneven splits remain.
  EXPECT_EQ(splits.count({0, 0}), 0u);
  EXPECT_EQ(splits, (std::set<std::pair<int32_t, int32_t>>{{1, 1}, {1, 3}, {2, 2}, {3, 1}}));
}

// The parser's own size limits (tokens per micro-batch, passes to simulate)
// hold in the search too: extreme batches give the same verdicts as configs.
TEST(SearchEnumerateTest, ParserSizeLimitsApplyToCandidates) {
  struct Extreme {
    int64_t seq_len, global_batch_size;
    std::vector<int64_t> micro_batch_sizes;
  };
  const Extreme extremes[] = {{int64_t{1} << 26, 128, {32, 64, 128}},  // 2^32 tokens at most
                              {16, int64_t{1} << 24, {1, 2, 4, 8}}};   // 2^22 passes at most
  for (const Extreme& e : extremes) {
    const Json document = {{"model", {{"preset", "llama3-8b"}, {"num_layers", 4}}},
                           {"system", "h100-sxm-80gb"},
                           {"num_gpus", 2},
                           {"global_batch_size", e.global_batch_size},
                           {"seq_len", e.seq_len},
                           {"constraints",
                            {{"tp", 1},
                             {"cp", 1},
                             {"vpp", 1},
                             {"micro_batch_size", e.micro_batch_sizes},
                             {"recompute", {{{"granularity", "none"}}}}}}};
    const schema::SearchRequest request = parse_search(document);
    const Enumeration all = enumerate_candidates(request.spec);
    std::set<std::pair<int64_t, int64_t>> enumerated;  // (pp, micro_batch_size)
    for (const Candidate& c : all.candidates) enumerated.emplace(c.pp, c.micro_batch_size);
    std::set<std::pair<int64_t, int64_t>> accepted;
    for (const int64_t pp : {1, 2}) {
      for (const int64_t mbs : e.micro_batch_sizes) {
        const Json config = {{"model", document["model"]},
                             {"training",
                              {{"seq_len", e.seq_len},
                               {"global_batch_size", e.global_batch_size},
                               {"micro_batch_size", mbs},
                               {"pp", pp}}},
                             {"system", {{"preset", "h100-sxm-80gb"}, {"num_gpus", 2}}}};
        Config parsed;
        Issues issues;
        if (parse_config(config.dump(), parsed, issues)) accepted.emplace(pp, mbs);
      }
    }
    EXPECT_EQ(enumerated, accepted);
    EXPECT_LT(accepted.size(), 2 * e.micro_batch_sizes.size());  // some were rejected
  }
}

TEST(SearchEnumerateTest, IssueReasonsDropTheValues) {
  EXPECT_EQ(issue_reason({"/training/tp", "must divide num_attention_heads (64), got 3"}),
            "/training/tp: must divide num_attention_heads");
  EXPECT_EQ(issue_reason({"/training/ep", "ep*etp (16) must divide tp*cp*dp (8)"}),
            "/training/ep: ep*etp must divide tp*cp*dp");
  EXPECT_EQ(issue_reason({"/training/cp",
                          "must divide seq_len (context parallelism splits the "
                          "sequence into 2*cp chunks) (8192), got 6"}),
            "/training/cp: must divide seq_len (context parallelism splits the sequence into 2*cp "
            "chunks)");
}

}  // namespace
}  // namespace trainsim
