// The schedule generators (time/schedule_orders.h) against the papers' closed
// forms: bubbles with uniform pass times and no p2p time, activations in flight.
#include "time/schedule_orders.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "trainsim/issue.h"

namespace trainsim {
namespace {

using Kind = PipelineScheduleKind;

constexpr double kRelTolerance = 1e-12;

ScheduleRun run_uniform(Kind kind, int32_t pp, int32_t vpp, int32_t m, PassCosts costs,
                        double overlapped_s = -1.0, double link_s = 0.0) {
  const ScheduleOrders o = make_schedule_orders(kind, pp, vpp, m);
  EXPECT_EQ(check_schedule_orders(o), "");
  ScheduleRunInput in;
  in.passes.assign(static_cast<size_t>(pp),
                   std::vector<PassCosts>(static_cast<size_t>(o.num_chunks), costs));
  if (overlapped_s >= 0.0) {
    in.overlapped_s.assign(
        static_cast<size_t>(pp),
        std::vector<double>(static_cast<size_t>(o.num_chunks * o.num_chunks), overlapped_s));
  }
  in.link_p2p_s.assign(static_cast<size_t>(pp), link_s);
  return run_schedule(o, in);
}

double max_idle_s(const ScheduleRun& run) {
  return *std::max_element(run.idle_s.begin(), run.idle_s.end());
}

TEST(ScheduleOrdersTest, NamesRoundTrip) {
  for (size_t i = 0; i < kPipelineScheduleNames.size(); ++i) {
    const auto kind = static_cast<Kind>(i);
    EXPECT_EQ(parse_pipeline_schedule(pipeline_schedule_name(kind)), kind);
  }
  EXPECT_FALSE(parse_pipeline_schedule("zb-h1").has_value());
}

struct SupportCase {
  Kind kind;
  int64_t pp, vpp, m;
  const char* reason;
};

TEST(ScheduleOrdersTest, SupportedSizesFollowTheReferenceImplementations) {
  const SupportCase cases[] = {
      {Kind::kOneFOneB, 4, 1, 3, ""},
      {Kind::kOneFOneB, 1, 3, 5, ""},
      {Kind::kOneFOneB, 4, 2, 6,
       "interleaved 1f1b needs a number of micro-batches that is a multiple of pp (4), got 6"},
      {Kind::kOneFOneB, 0, 1, 1, "1f1b needs pp >= 1, got 0"},
      {Kind::kOneFOneB, 2, 1, 0, "1f1b needs at least 1 micro-batch, got 0"},
      {Kind::kOneFOneB, 4096, 4096, 4096,
       "1f1b is limited to 2^26 passes (pp * vpp * micro-batches), got 4096 * 4096 * 4096"},
      {Kind::kZeroBubbleH1, 4, 1, 1, ""},
      {Kind::kZeroBubbleH1, 1, 1, 8, "zero_bubble_h1 needs pp >= 2, got 1"},
      {Kind::kZeroBubbleH1, 4, 2, 8, "zero_bubble_h1 needs vpp 1, got 2"},
      {Kind::kZeroBubbleH2, 4, 1, 8, ""},
      {Kind::kZeroBubbleH2, 4, 1, 7,
       "zero_bubble_h2 needs at least 2 * pp (8) micro-batches, got 7"},
      {Kind::kZeroBubbleV, 4, 2, 1, ""},
      {Kind::kZeroBubbleV, 4, 1, 8, "zero_bubble_v needs vpp 2, got 1"},
      {Kind::kDualPipe, 4, 1, 8, ""},
      {Kind::kDualPipe, 3, 1, 12, "dualpipe needs an even pp, got 3"},
      {Kind::kDualPipe, 4, 2, 8, "dualpipe needs vpp 1, got 2"},
      {Kind::kDualPipe, 4, 1, 9, "dualpipe needs an even number of micro-batches, got 9"},
      {Kind::kDualPipe, 4, 1, 6, "dualpipe needs at least 2 * pp (8) micro-batches, got 6"},
      {Kind::kDualPipeV, 3, 2, 6, ""},
      {Kind::kDualPipeV, 3, 2, 5, "dualpipe_v needs at least 2 * pp (6) micro-batches, got 5"},
      {Kind::kDualPipeV, 3, 1, 6, "dualpipe_v needs vpp 2, got 1"},
  };
  for (const SupportCase& c : cases) {
    EXPECT_EQ(schedule_supported(c.kind, c.pp, c.vpp, c.m), c.reason)
        << pipeline_schedule_name(c.kind) << " pp " << c.pp << " vpp " << c.vpp << " m " << c.m;
  }
  EXPECT_THROW(make_schedule_orders(Kind::kDualPipe, 3, 1, 12), InternalError);
}

// ---------------------------------------------------------------------------
// Bubbles. busy = m (F + B + W) per chunk; the bubble is idle time on the worst rank
// (or, where the paper measures each rank from its own first pass, span - busy).

struct BubbleCase {
  const char* name;
  Kind kind;
  int32_t pp, vpp, m;
  PassCosts costs;      // per chunk
  double overlapped_s;  // F&B, < 0: none
  double link_s;
  bool per_rank_span;  // compare max_span_s - busy instead of the worst idle time
  double expected_bubble_s;
  const char* source;
};

class ScheduleBubbleTest : public ::testing::TestWithParam<BubbleCase> {};

TEST_P(ScheduleBubbleTest, MatchesTheClosedForm) {
  const BubbleCase& c = GetParam();
  const ScheduleRun run = run_uniform(c.kind, c.pp, c.vpp, c.m, c.costs, c.overlapped_s, c.link_s);
  const double busy_s = *std::max_element(run.busy_s.begin(), run.busy_s.end());
  const double bubble_s = c.per_rank_span ? run.max_span_s - busy_s : max_idle_s(run);
  EXPECT_NEAR(bubble_s, c.expected_bubble_s, kRelTolerance * run.makespan_s) << c.source;
}

// ICLR table settings of efficiency.py iclr_bubble_rates (p, n, f, b, w, c), times in us.
constexpr PassCosts kIclr8{18522e-6, 18086e-6, 9337e-6};

const BubbleCase kBubbleCases[] = {
    // arXiv:2104.04473 sec. 2.2.1 / DeepSeek-V3 Table 2: (p - 1)(F + B), B incl. W.
    {"OneFOneBPp4M8",
     Kind::kOneFOneB,
     4,
     1,
     8,
     {1.0, 2.0, 0.0},
     -1,
     0,
     false,
     3 * 3.0,
     "(p-1)(F+B)"},
    {"OneFOneBPp16M64",
     Kind::kOneFOneB,
     16,
     1,
     64,
     {1.0, 2.0, 0.0},
     -1,
     0,
     false,
     15 * 3.0,
     "(p-1)(F+B)"},
    // efficiency.py get_hand_schedule asserts (arxiv branch): ZB-H1 (p-1)(f+b-w) at c = 0.
    {"ZeroBubbleH1Pp4M8Uniform",
     Kind::kZeroBubbleH1,
     4,
     1,
     8,
     {1, 1, 1},
     -1,
     0,
     false,
     3 * 1.0,
     "(p-1)(F+B-W)"},
    {"ZeroBubbleH1Pp8M24Iclr", Kind::kZeroBubbleH1, 8, 1, 24, kIclr8, -1, 0, false,
     7 * (18522e-6 + 18086e-6 - 9337e-6), "(p-1)(F+B-W)"},
    // ... and ZB-H2 (p-1)(f+b+2c-2w), measured per rank: 0 when F = B = W and c = 0.
    {"ZeroBubbleH2Pp4M8Uniform",
     Kind::kZeroBubbleH2,
     4,
     1,
     8,
     {1, 1, 1},
     -1,
     0,
     true,
     0.0,
     "(p-1)(F+B-2W)"},
    {"ZeroBubbleH2Pp8M64IclrWithP2p", Kind::kZeroBubbleH2, 8, 1, 64, kIclr8, -1, 601e-6, true,
     7 * (18522e-6 + 18086e-6 + 2 * 601e-6 - 2 * 9337e-6), "(p-1)(F+B+2c-2W)"},
    // arXiv:2405.15362 (V-ZB) / HF description table: bubble 0 with T_F = T_B = T_W.
    {"ZeroBubbleVPp4M8", Kind::kZeroBubbleV, 4, 2, 8, {0.5, 0.5, 0.5}, -1, 0, true, 0.0, "0"},
    {"ZeroBubbleVPp8M64", Kind::kZeroBubbleV, 8, 2, 64, {0.5, 0.5, 0.5}, -1, 0, true, 0.0, "0"},
    // DeepSeek-V3 Table 2 / DualPipe README: (PP/2 - 1)(F&B + B - 3W), B the full
    // backward; PP = stages (pp for DualPipe, 2 pp for DualPipeV). Holds with
    // F = B = W and 2F <= F&B <= F + B + W (see the deviations in the report).
    {"DualPipePp8M16",
     Kind::kDualPipe,
     8,
     1,
     16,
     {1, 1, 1},
     3.0,
     0,
     false,
     3 * (3.0 + 2 - 3),
     "(PP/2-1)(F&B+B-3W)"},
    {"DualPipePp4M24Overlap2",
     Kind::kDualPipe,
     4,
     1,
     24,
     {1, 1, 1},
     2.0,
     0,
     false,
     1 * (2.0 + 2 - 3),
     "(PP/2-1)(F&B+B-3W)"},
    {"DualPipePp8M48Overlap2p5",
     Kind::kDualPipe,
     8,
     1,
     48,
     {1, 1, 1},
     2.5,
     0,
     false,
     3 * (2.5 + 2 - 3),
     "(PP/2-1)(F&B+B-3W)"},
    {"DualPipeVPp4M8",
     Kind::kDualPipeV,
     4,
     2,
     8,
     {1, 1, 1},
     3.0,
     0,
     false,
     3 * (3.0 + 2 - 3),
     "(PP/2-1)(F&B+B-3W)"},
    {"DualPipeVPp6M36Overlap2",
     Kind::kDualPipeV,
     6,
     2,
     36,
     {1, 1, 1},
     2.0,
     0,
     false,
     5 * (2.0 + 2 - 3),
     "(PP/2-1)(F&B+B-3W)"},
};

INSTANTIATE_TEST_SUITE_P(Papers, ScheduleBubbleTest, ::testing::ValuesIn(kBubbleCases),
                         [](const auto& row) { return std::string(row.param.name); });

// ---------------------------------------------------------------------------
// Activations in flight (units: one micro-batch through one chunk).

std::vector<int32_t> in_flight(const ScheduleMemoryNeeds& needs) {
  std::vector<int32_t> out;
  for (const ActivationPeak& p : needs.ranks) out.push_back(p.in_flight);
  return out;
}

TEST(ScheduleMemoryTest, OneFOneBHoldsPpMinusRankMicroBatches) {
  // forward_backward_pipelining_without_interleaving: pp - r - 1 warm-up + 1.
  EXPECT_EQ(in_flight(schedule_memory_needs(Kind::kOneFOneB, 4, 1, 8)),
            (std::vector<int32_t>{4, 3, 2, 1}));
  EXPECT_EQ(in_flight(schedule_memory_needs(Kind::kOneFOneB, 4, 1, 2)),
            (std::vector<int32_t>{2, 2, 2, 1}));
}

TEST(ScheduleMemoryTest, InterleavedHoldsItsWarmUpPlusOne) {
  // get_pp_rank_microbatches: warm-up (pp - r - 1) * 2 + (vpp - 1) * pp, capped at m * vpp.
  const ScheduleMemoryNeeds needs = schedule_memory_needs(Kind::kOneFOneB, 4, 2, 16);
  for (int32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(needs.ranks[static_cast<size_t>(r)].in_flight, (4 - r - 1) * 2 + 4 + 1);
    EXPECT_EQ(needs.chunk_stage[static_cast<size_t>(r)], (std::vector<int32_t>{r, 4 + r}));
  }
  EXPECT_EQ(needs.num_model_stages, 8);
}

TEST(ScheduleMemoryTest, ZeroBubbleH1KeepsOneFOneBsPeakAndH2Doubles) {
  // arXiv:2401.10241 sec. 2: ZB-H1 peak p M_B (the first worker), ZB-H2 (2p - 1) M_B.
  OrderOptions options;
  options.weight_kept_fraction = 0.25;
  const ScheduleMemoryNeeds h1 = schedule_memory_needs(Kind::kZeroBubbleH1, 4, 1, 8, options);
  const ScheduleMemoryNeeds h2 = schedule_memory_needs(Kind::kZeroBubbleH2, 4, 1, 8, options);
  for (int32_t r = 0; r < 4; ++r) {
    const ActivationPeak& a = h1.ranks[static_cast<size_t>(r)];
    EXPECT_EQ(a.in_flight, 4 - r);
    EXPECT_EQ(a.waiting_for_weight, r);  // the W deferred by r micro-batches
    EXPECT_DOUBLE_EQ(a.live, (4 - r) + 0.25 * r);
    const ActivationPeak& b = h2.ranks[static_cast<size_t>(r)];
    EXPECT_EQ(b.in_flight, 2 * 4 - 1 - 2 * r);
    EXPECT_EQ(b.waiting_for_weight, 2 * r);
  }
  EXPECT_DOUBLE_EQ(h1.ranks[0].live, 4.0);
  EXPECT_DOUBLE_EQ(h2.ranks[0].live, 7.0);
}

TEST(ScheduleMemoryTest, ZeroBubbleVHoldsOneFOneBsMemoryOnEveryRank) {
  // arXiv:2405.15362 V-ZB: activation memory p micro-batches = 2p half-stage chunks,
  // balanced over ranks.
  for (const int32_t pp : {4, 8}) {
    const ScheduleMemoryNeeds v = schedule_memory_needs(Kind::kZeroBubbleV, pp, 2, 4 * pp);
    for (const ActivationPeak& a : v.ranks) EXPECT_LE(a.in_flight, 2 * pp);
    EXPECT_EQ(v.ranks[0].in_flight, 2 * pp);
    EXPECT_EQ(v.parameter_copies, 1);
    EXPECT_EQ(v.chunk_stage[1], (std::vector<int32_t>{1, 2 * pp - 2}));
  }
}

TEST(ScheduleMemoryTest, DualPipeHoldsPpPlusOneAndTwoParameterCopies) {
  // DeepSeek-V3 Table 2: activation PP + 1, parameters 2x; DualPipeV the same per
  // stage count PP = 2 pp on pp devices with 1x of a pp-way split.
  const ScheduleMemoryNeeds dp = schedule_memory_needs(Kind::kDualPipe, 8, 1, 32);
  EXPECT_EQ(in_flight(dp), std::vector<int32_t>(8, 9));
  EXPECT_EQ(dp.parameter_copies, 2);
  EXPECT_EQ(dp.num_model_stages, 8);
  EXPECT_EQ(dp.chunk_stage[2], (std::vector<int32_t>{2, 5}));
  const ScheduleMemoryNeeds dpv = schedule_memory_needs(Kind::kDualPipeV, 4, 2, 16);
  EXPECT_EQ(in_flight(dpv), std::vector<int32_t>(4, 9));
  EXPECT_EQ(dpv.parameter_copies, 1);
  EXPECT_EQ(dpv.num_model_stages, 8);
}

}  // namespace
}  // namespace trainsim
