// Invariants of every schedule on random sizes and costs: the orders are valid,
// the timeline runs every pass exactly once, one pass at a time per rank, after
// its dependencies (plus the link time in async p2p), and more micro-batches
// never shorten the step.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "time/schedule_orders.h"

namespace trainsim {
namespace {

using Kind = PipelineScheduleKind;

struct Sizes {
  int32_t pp, vpp, m;
};

// Random supported sizes for `kind` (m rounded up to what the schedule needs).
Sizes random_sizes(Kind kind, std::mt19937& rng) {
  Sizes s{static_cast<int32_t>(2 + rng() % 7), 1, static_cast<int32_t>(1 + rng() % 20)};
  switch (kind) {
    case Kind::kOneFOneB:
      s.pp = static_cast<int32_t>(1 + rng() % 8);
      s.vpp = static_cast<int32_t>(1 + rng() % 3);
      if (s.vpp > 1) s.m = s.pp * static_cast<int32_t>(1 + rng() % 3);
      break;
    case Kind::kZeroBubbleH1:
      break;
    case Kind::kZeroBubbleH2:
      s.m += 2 * s.pp;
      break;
    case Kind::kZeroBubbleV:
      s.vpp = 2;
      break;
    case Kind::kDualPipe:
      s.pp += s.pp % 2;
      s.m = 2 * s.pp + 2 * static_cast<int32_t>(rng() % 8);
      break;
    case Kind::kDualPipeV:
      s.vpp = 2;
      s.m += 2 * s.pp;
      break;
  }
  return s;
}

ScheduleRunInput random_input(const ScheduleOrders& o, std::mt19937& rng) {
  std::uniform_real_distribution<double> pass_s(0.5, 2.0);
  ScheduleRunInput in;
  in.record_timeline = true;
  const auto pp = static_cast<size_t>(o.pp);
  const auto chunks = static_cast<size_t>(o.num_chunks);
  in.passes.assign(pp, std::vector<PassCosts>(chunks));
  in.overlapped_s.assign(pp, std::vector<double>(chunks * chunks));
  for (size_t r = 0; r < pp; ++r) {
    for (PassCosts& p : in.passes[r]) p = {pass_s(rng), pass_s(rng), 0.5 * pass_s(rng)};
    for (size_t f = 0; f < chunks; ++f) {
      for (size_t b = 0; b < chunks; ++b) {
        const PassCosts& x = in.passes[r][f];
        const PassCosts& y = in.passes[r][b];
        in.overlapped_s[r][f * chunks + b] = 0.7 * (x.forward_s + y.backward_s + y.weight_s);
      }
    }
  }
  for (size_t l = 0; l < pp; ++l) in.link_p2p_s.push_back(rng() % 3 == 0 ? 0.0 : 0.1 * pass_s(rng));
  return in;
}

// The timeline checker.
void check_timeline(const ScheduleOrders& o, const ScheduleRunInput& in, const ScheduleRun& run,
                    const std::string& where) {
  using Key = std::tuple<int32_t, int32_t, int32_t>;  // micro-batch, rank, chunk
  std::map<Key, RunEvent> f, b, w;
  size_t passes = 0;
  for (int32_t r = 0; r < o.pp; ++r) {
    const auto& events = run.timeline[static_cast<size_t>(r)];
    double last_end_s = 0.0;
    for (const RunEvent& e : events) {
      if (e.kind == ActionKind::kSend || e.kind == ActionKind::kRecv) continue;
      ++passes;
      ASSERT_GE(e.start_s, last_end_s - 1e-12) << where << ": rank " << r << " overlaps";
      last_end_s = e.end_s;
      const bool has_f = e.kind == ActionKind::kForward || e.kind == ActionKind::kOverlapped;
      if (has_f) {
        ASSERT_TRUE(f.emplace(Key{e.micro_batch, r, e.chunk}, e).second) << where;
      }
      if (e.kind == ActionKind::kOverlapped) {
        ASSERT_TRUE(b.emplace(Key{e.backward_micro_batch, r, e.backward_chunk}, e).second);
        ASSERT_TRUE(w.emplace(Key{e.backward_micro_batch, r, e.backward_chunk}, e).second);
      }
      if (e.kind == ActionKind::kBackward || e.kind == ActionKind::kBackwardWeight) {
        ASSERT_TRUE(b.emplace(Key{e.micro_batch, r, e.chunk}, e).second) << where;
      }
      if (e.kind == ActionKind::kWeight || e.kind == ActionKind::kBackwardWeight) {
        ASSERT_TRUE(w.emplace(Key{e.micro_batch, r, e.chunk}, e).second) << where;
      }
      if (e.kind != ActionKind::kOverlapped) {
        const PassCosts& c = in.passes[static_cast<size_t>(r)][static_cast<size_t>(e.chunk)];
        const double expected_s = e.kind == ActionKind::kForward    ? c.forward_s
                                  : e.kind == ActionKind::kBackward ? c.backward_s
                                  : e.kind == ActionKind::kWeight   ? c.weight_s
                                                                    : c.backward_s + c.weight_s;
        EXPECT_NEAR(e.end_s - e.start_s, expected_s, 1e-12) << where;
      }
    }
  }
  const size_t routes = o.route_stages.size() / static_cast<size_t>(o.num_virtual_stages);
  size_t expected_passes = 0;
  for (int32_t mb = 0; mb < o.num_micro_batches; ++mb) {
    const size_t route = o.route_of_micro_batch.empty() ? 0 : o.route_of_micro_batch[mb];
    ASSERT_LT(route, routes);
    for (int32_t v = 0; v < o.num_virtual_stages; ++v) {
      const StageSlot& s = o.route_stages[route * o.num_virtual_stages + v];
      const Key k{mb, s.rank, s.chunk};
      ASSERT_EQ(f.count(k) + b.count(k) + w.count(k), 3u) << where << " mb " << mb << " v " << v;
      const double hop_s = o.explicit_p2p || s.link_to_next < 0
                               ? 0.0
                               : in.link_p2p_s[static_cast<size_t>(s.link_to_next)];
      EXPECT_GE(b.at(k).start_s, f.at(k).end_s - 1e-12) << where;
      EXPECT_GE(w.at(k).end_s, b.at(k).end_s - 1e-12) << where;
      if (v + 1 < o.num_virtual_stages) {
        const StageSlot& n = o.route_stages[route * o.num_virtual_stages + v + 1];
        const Key next{mb, n.rank, n.chunk};
        EXPECT_GE(f.at(next).start_s, f.at(k).end_s + hop_s - 1e-9) << where;
        EXPECT_GE(b.at(k).start_s, b.at(next).end_s + hop_s - 1e-9) << where;
      }
    }
  }
  for (const auto& list : o.actions) {
    for (const Action& a : list) {
      expected_passes += a.kind == ActionKind::kSend || a.kind == ActionKind::kRecv ? 0 : 1;
    }
  }
  EXPECT_EQ(passes, expected_passes) << where;
}

class SchedulePropertyTest : public ::testing::TestWithParam<Kind> {};

TEST_P(SchedulePropertyTest, RandomRunsAreValidCompleteAndRespectDependencies) {
  const Kind kind = GetParam();
  std::mt19937 rng(1234 + static_cast<uint32_t>(kind));
  for (int trial = 0; trial < 40; ++trial) {
    const Sizes s = random_sizes(kind, rng);
    ASSERT_EQ(schedule_supported(kind, s.pp, s.vpp, s.m), "");
    OrderOptions options;
    options.explicit_p2p = trial % 2 == 0;
    const ScheduleOrders o = make_schedule_orders(kind, s.pp, s.vpp, s.m, options);
    const std::string where = std::string(pipeline_schedule_name(kind)) + " pp " +
                              std::to_string(s.pp) + " vpp " + std::to_string(s.vpp) + " m " +
                              std::to_string(s.m);
    ASSERT_EQ(check_schedule_orders(o), "") << where;
    const ScheduleRunInput in = random_input(o, rng);
    const ScheduleRun run = run_schedule(o, in);
    check_timeline(o, in, run, where);
    for (size_t r = 0; r < run.busy_s.size(); ++r) {
      EXPECT_LE(run.busy_s[r], run.finish_s[r] - run.start_s[r] + 1e-9) << where;
      EXPECT_NEAR(run.idle_s[r], run.makespan_s - run.busy_s[r], 1e-12) << where;
    }
  }
}

TEST_P(SchedulePropertyTest, MoreMicroBatchesNeverShortenTheStep) {
  const Kind kind = GetParam();
  std::mt19937 rng(99 + static_cast<uint32_t>(kind));
  for (int trial = 0; trial < 10; ++trial) {
    const Sizes s = random_sizes(kind, rng);
    const int32_t step =
        kind == Kind::kDualPipe ? 2 : (s.vpp > 1 && kind == Kind::kOneFOneB ? s.pp : 1);
    const ScheduleOrders first = make_schedule_orders(kind, s.pp, s.vpp, s.m);
    const ScheduleRunInput in = random_input(first, rng);
    double previous_s = 0.0;
    for (int32_t m = s.m; m <= s.m + 6 * step; m += step) {
      const double makespan_s =
          run_schedule(make_schedule_orders(kind, s.pp, s.vpp, m), in).makespan_s;
      EXPECT_GE(makespan_s, previous_s)
          << pipeline_schedule_name(kind) << " pp " << s.pp << " m " << m;
      previous_s = makespan_s;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, SchedulePropertyTest,
                         ::testing::Values(Kind::kOneFOneB, Kind::kZeroBubbleH1,
                                           Kind::kZeroBubbleH2, Kind::kZeroBubbleV, Kind::kDualPipe,
                                           Kind::kDualPipeV),
                         [](const auto& row) {
                           std::string name = pipeline_schedule_name(row.param);
                           name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
                           return "S" + name;
                         });

TEST(ZeroBubbleVGeneratorTest, AnyCostsAndKeptShareGiveValidOrders) {
  // The greedy can run out of W passes to free memory with (zbv.py would raise);
  // make_schedule_orders then plans with a kept share of 1 and never fails.
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> pass_s(0.3, 2.0), share(0.0, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    const auto pp = static_cast<int32_t>(2 + rng() % 15);
    const auto m = static_cast<int32_t>(1 + rng() % (4 * static_cast<uint32_t>(pp)));
    OrderOptions o;
    o.forward_s = pass_s(rng);
    o.backward_s = pass_s(rng);
    o.weight_s = pass_s(rng);
    o.p2p_s = rng() % 2 == 0 ? 0.0 : 0.2 * pass_s(rng);
    o.weight_kept_fraction = share(rng);
    EXPECT_EQ(check_schedule_orders(make_schedule_orders(Kind::kZeroBubbleV, pp, 2, m, o)), "")
        << "pp " << pp << " m " << m;
  }
}

}  // namespace
}  // namespace trainsim
