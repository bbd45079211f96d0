// The order-driven simulator (time/schedule_runner.h): hand-made orders, the
// validity check's reasons, the activation rule, and bit-for-bit agreement with
// the Megatron replays of pipeline_schedule.h on random inputs.
#include "time/schedule_runner.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "time/pipeline_schedule.h"
#include "time/schedule_orders.h"
#include "trainsim/issue.h"

namespace trainsim {
namespace {

Action pass(ActionKind kind, int32_t mb, int32_t chunk = 0) { return {kind, false, chunk, mb}; }

// Two ranks, one chunk each, one route 0 -> 1 over link 0; m micro-batches.
ScheduleOrders two_ranks(int32_t m) { return detail::megatron_placement(2, 1, m); }

ScheduleRunInput uniform_input(const ScheduleOrders& o, PassCosts costs, double link_s = 0.0) {
  ScheduleRunInput in;
  in.passes.assign(static_cast<size_t>(o.pp),
                   std::vector<PassCosts>(static_cast<size_t>(o.num_chunks), costs));
  in.link_p2p_s.assign(static_cast<size_t>(o.pp), link_s);
  in.record_timeline = true;
  return in;
}

TEST(ScheduleRunnerTest, OneMicroBatchCrossesTheLinkTwiceWithAsyncP2p) {
  ScheduleOrders o = two_ranks(1);
  o.actions[0] = {pass(ActionKind::kForward, 0), pass(ActionKind::kBackward, 0),
                  pass(ActionKind::kWeight, 0)};
  o.actions[1] = {pass(ActionKind::kForward, 0), pass(ActionKind::kBackwardWeight, 0)};
  ASSERT_EQ(check_schedule_orders(o), "");
  const ScheduleRun run = run_schedule(o, uniform_input(o, {1.0, 2.0, 0.5}, 0.25));
  // rank 0 F [0,1]; rank 1 F [1.25,2.25], BW [2.25,4.75]; rank 0 B [5,7], W [7,7.5].
  EXPECT_DOUBLE_EQ(run.finish_s[1], 4.75);
  EXPECT_DOUBLE_EQ(run.makespan_s, 7.5);
  EXPECT_DOUBLE_EQ(run.start_s[1], 1.25);
  EXPECT_DOUBLE_EQ(run.busy_s[0], 3.5);
  EXPECT_DOUBLE_EQ(run.idle_s[0], 4.0);
  EXPECT_DOUBLE_EQ(run.max_span_s, 7.5);
  ASSERT_EQ(run.timeline[0].size(), 3u);
  EXPECT_EQ(run.timeline[0][1].kind, ActionKind::kBackward);
  EXPECT_DOUBLE_EQ(run.timeline[0][1].start_s, 5.0);
}

TEST(ScheduleRunnerTest, OverlappedPairTakesItsGivenDurationAndReleasesBothResultsAtItsEnd) {
  ScheduleOrders o = two_ranks(2);
  Action pair = pass(ActionKind::kOverlapped, 1);
  pair.backward_micro_batch = 0;
  o.actions[0] = {pass(ActionKind::kForward, 0), pass(ActionKind::kForward, 1),
                  pass(ActionKind::kBackwardWeight, 0), pass(ActionKind::kBackwardWeight, 1)};
  o.actions[1] = {pass(ActionKind::kForward, 0), pair, pass(ActionKind::kBackwardWeight, 1)};
  ASSERT_EQ(check_schedule_orders(o), "");
  ScheduleRunInput in = uniform_input(o, {1.0, 1.0, 1.0});
  in.overlapped_s.assign(2, std::vector<double>{2.5});
  const ScheduleRun run = run_schedule(o, in);
  // Rank 1: F0 [1,2], F1&BW0 [2,4.5], BW1 [4.5,6.5]; rank 0: BW0 [4.5,6.5], BW1 [6.5,8.5].
  ASSERT_EQ(run.timeline[1].size(), 3u);
  EXPECT_EQ(run.timeline[1][1].kind, ActionKind::kOverlapped);
  EXPECT_EQ(run.timeline[1][1].micro_batch, 1);
  EXPECT_EQ(run.timeline[1][1].backward_micro_batch, 0);
  EXPECT_DOUBLE_EQ(run.timeline[1][1].start_s, 2.0);
  EXPECT_DOUBLE_EQ(run.timeline[1][1].end_s, 4.5);
  EXPECT_DOUBLE_EQ(run.timeline[0][2].start_s, 4.5);
  EXPECT_DOUBLE_EQ(run.makespan_s, 8.5);
  EXPECT_DOUBLE_EQ(run.busy_s[1], 1.0 + 2.5 + 2.0);
  // Without a table the pair costs F + B + W.
  in.overlapped_s.clear();
  EXPECT_DOUBLE_EQ(run_schedule(o, in).timeline[1][1].end_s, 5.0);
}

TEST(ScheduleRunnerTest, ACycleAcrossRanksIsADeadlockWithItsPlace) {
  ScheduleOrders o = two_ranks(2);
  // Rank 0 wants B1 (needs rank 1's B1) before F1; rank 1 needs F1 first.
  o.actions[0] = {pass(ActionKind::kForward, 0), pass(ActionKind::kBackwardWeight, 0),
                  pass(ActionKind::kBackwardWeight, 1), pass(ActionKind::kForward, 1)};
  o.actions[1] = {pass(ActionKind::kForward, 0), pass(ActionKind::kBackwardWeight, 0),
                  pass(ActionKind::kForward, 1), pass(ActionKind::kBackwardWeight, 1)};
  EXPECT_EQ(check_schedule_orders(o),
            "micro-batch 1 on rank 0 chunk 0: its passes must run in the order F, B, W");
  o.actions[0] = {pass(ActionKind::kForward, 0), pass(ActionKind::kForward, 1),
                  pass(ActionKind::kBackwardWeight, 1), pass(ActionKind::kBackwardWeight, 0)};
  o.actions[1] = {pass(ActionKind::kForward, 0), pass(ActionKind::kBackwardWeight, 0),
                  pass(ActionKind::kForward, 1), pass(ActionKind::kBackwardWeight, 1)};
  EXPECT_EQ(check_schedule_orders(o), "");  // out of order is fine without a cycle
  o.actions[1] = {pass(ActionKind::kForward, 0), pass(ActionKind::kForward, 1),
                  pass(ActionKind::kBackwardWeight, 0), pass(ActionKind::kBackwardWeight, 1)};
  o.actions[0] = {pass(ActionKind::kForward, 0), pass(ActionKind::kBackwardWeight, 0),
                  pass(ActionKind::kForward, 1), pass(ActionKind::kBackwardWeight, 1)};
  EXPECT_EQ(check_schedule_orders(o),
            "pipeline schedule deadlocked: rank 0 action 1 (BW micro-batch 0 chunk 0) never runs");
  try {
    run_schedule(o, uniform_input(o, {1.0, 1.0, 0.0}));
    FAIL() << "expected InternalError";
  } catch (const InternalError& e) {
    EXPECT_STREQ(e.what(),
                 "pipeline schedule deadlocked: rank 0 action 1 (BW micro-batch 0 chunk 0) never "
                 "runs");
  }
}

TEST(ScheduleRunnerTest, CheckNamesMalformedOrders) {
  ScheduleOrders o = two_ranks(1);
  o.actions[0] = {pass(ActionKind::kForward, 0), pass(ActionKind::kBackward, 0)};
  o.actions[1] = {pass(ActionKind::kForward, 0), pass(ActionKind::kBackwardWeight, 0)};
  EXPECT_EQ(check_schedule_orders(o),
            "micro-batch 0 on rank 0 chunk 0 needs one F and either one BW or one B and one W");
  o.actions[0] = {pass(ActionKind::kForward, 0), pass(ActionKind::kForward, 0)};
  EXPECT_EQ(check_schedule_orders(o), "rank 0 runs F of micro-batch 0 chunk 0 twice");
  o.actions[0] = {pass(ActionKind::kForward, 0, 1)};
  EXPECT_EQ(check_schedule_orders(o), "rank 0 action 0: micro-batch or chunk out of range");
  o.actions[0] = {pass(ActionKind::kForward, 0), pass(ActionKind::kBackwardWeight, 0)};
  Action send{ActionKind::kSend, false, 0, 0};
  o.actions[0].push_back(send);
  o.num_transfers = 1;
  EXPECT_EQ(check_schedule_orders(o), "transfer actions need explicit_p2p");
  o.explicit_p2p = true;
  EXPECT_EQ(check_schedule_orders(o), "transfer 0 needs a send and a recv on two ranks");
  o.actions.pop_back();
  EXPECT_EQ(check_schedule_orders(o), "expected one action list per rank");
}

TEST(ScheduleRunnerTest, ExplicitTransfersMeetAtTheLaterPostPlusTheLinkTime) {
  ScheduleOrders o = two_ranks(1);
  o.explicit_p2p = true;
  o.num_transfers = 2;
  Action send{ActionKind::kSend, false, 0, 0};
  Action recv{ActionKind::kRecv, false, 0, 0};
  Action grad_send = send, grad_recv = recv;
  grad_send.transfer = grad_recv.transfer = 1;
  o.actions[0] = {pass(ActionKind::kForward, 0), send, grad_recv,
                  pass(ActionKind::kBackwardWeight, 0)};
  o.actions[1] = {recv, pass(ActionKind::kForward, 0), pass(ActionKind::kBackwardWeight, 0),
                  grad_send};
  ASSERT_EQ(check_schedule_orders(o), "");
  const ScheduleRun run = run_schedule(o, uniform_input(o, {1.0, 2.0, 0.0}, 0.5));
  // F [0,1], transfer [1,1.5], F [1.5,2.5], BW [2.5,4.5], transfer [4.5,5], BW [5,7].
  EXPECT_DOUBLE_EQ(run.makespan_s, 7.0);
  EXPECT_DOUBLE_EQ(run.finish_s[1], 5.0);
  EXPECT_DOUBLE_EQ(run.busy_s[0], 3.0);
}

TEST(ScheduleRunnerTest, ActivationsLiveFromForwardStartToBackwardEndAndAShareUntilW) {
  ScheduleOrders o = detail::megatron_placement(1, 2, 3);
  o.actions[0] = {pass(ActionKind::kForward, 0, 0),        pass(ActionKind::kForward, 0, 1),
                  pass(ActionKind::kForward, 1, 0),        pass(ActionKind::kBackward, 0, 1),
                  pass(ActionKind::kForward, 1, 1),        pass(ActionKind::kBackward, 1, 1),
                  pass(ActionKind::kBackward, 0, 0),       pass(ActionKind::kBackward, 1, 0),
                  pass(ActionKind::kWeight, 0, 1),         pass(ActionKind::kWeight, 1, 1),
                  pass(ActionKind::kWeight, 0, 0),         pass(ActionKind::kWeight, 1, 0),
                  pass(ActionKind::kForward, 2, 0),        pass(ActionKind::kForward, 2, 1),
                  pass(ActionKind::kBackwardWeight, 2, 1), pass(ActionKind::kBackwardWeight, 2, 0)};
  ASSERT_EQ(check_schedule_orders(o), "");
  // After the 4th F: chunk 0 holds mb 0, 1; chunk 1 holds mb 1 and mb 0 waits for W.
  const ActivationPeak p = activation_peaks(o, 0.25)[0];
  EXPECT_DOUBLE_EQ(p.live, 3.25);
  EXPECT_EQ(p.in_flight, 3);
  EXPECT_EQ(p.waiting_for_weight, 1);
  EXPECT_EQ(p.in_flight_per_chunk, (std::vector<int32_t>{2, 1}));
  EXPECT_EQ(p.max_in_flight_per_chunk, (std::vector<int32_t>{2, 1}));
  // Chunk weights pick the moment: with chunk 1 ten times heavier the peak is the same
  // moment here, 2 + 10 * 1.25.
  EXPECT_DOUBLE_EQ(activation_peaks(o, 0.25, {{1.0, 10.0}})[0].live, 14.5);
}

// With each pass's working set, the peak is the event where live activations plus the
// running pass are largest, not the moment of the most live activations: a backward of
// chunk 0 holding 5 more (a recompute) peaks at mb 0's B of chunk 0, live 2.5 (mb 0 and
// 1 of chunk 0, and both of chunk 1 waiting for W), although 3.25 are live after the 5th F.
TEST(ScheduleRunnerTest, ThePeakWithItsRunningPassIsTheLargestEvent) {
  ScheduleOrders o = detail::megatron_placement(1, 2, 3);
  o.actions[0] = {pass(ActionKind::kForward, 0, 0),        pass(ActionKind::kForward, 0, 1),
                  pass(ActionKind::kForward, 1, 0),        pass(ActionKind::kBackward, 0, 1),
                  pass(ActionKind::kForward, 1, 1),        pass(ActionKind::kBackward, 1, 1),
                  pass(ActionKind::kBackward, 0, 0),       pass(ActionKind::kBackward, 1, 0),
                  pass(ActionKind::kWeight, 0, 1),         pass(ActionKind::kWeight, 1, 1),
                  pass(ActionKind::kWeight, 0, 0),         pass(ActionKind::kWeight, 1, 0),
                  pass(ActionKind::kForward, 2, 0),        pass(ActionKind::kForward, 2, 1),
                  pass(ActionKind::kBackwardWeight, 2, 1), pass(ActionKind::kBackwardWeight, 2, 0)};
  ASSERT_EQ(check_schedule_orders(o), "");
  const ActivationPeak p = activation_peaks(o, 0.25, {{1.0, 1.0}}, {{{0.0, 5.0}, {0.0, 0.0}}})[0];
  EXPECT_DOUBLE_EQ(p.live, 3.25);  // the most live activations are still reported
  EXPECT_DOUBLE_EQ(p.peak_bytes, 7.5);
  EXPECT_EQ(p.running_chunk, 0);
  EXPECT_TRUE(p.running_backward);
  EXPECT_EQ(p.peak_alive, (std::vector<int32_t>{2, 0}));
  EXPECT_EQ(p.peak_waiting, (std::vector<int32_t>{0, 2}));
  // A forward working set of chunk 1 instead: the peak is the 5th F (3.25 + 4).
  const ActivationPeak f = activation_peaks(o, 0.25, {{1.0, 1.0}}, {{{0.0, 0.0}, {4.0, 0.0}}})[0];
  EXPECT_DOUBLE_EQ(f.peak_bytes, 7.25);
  EXPECT_EQ(f.running_chunk, 1);
  EXPECT_FALSE(f.running_backward);
  EXPECT_EQ(f.peak_alive, (std::vector<int32_t>{2, 1}));
}

TEST(ScheduleRunnerTest, ZeroBubbleMemoryModelKeeps32hOf34hPlus5asUntilW) {
  // runtime.py: f_mem = 34h + 5as, w_mem = -32h.
  EXPECT_DOUBLE_EQ(weight_kept_fraction(4096, 32, 1024),
                   32.0 * 4096 / (34.0 * 4096 + 5.0 * 32 * 1024));
  EXPECT_DOUBLE_EQ(weight_kept_fraction(4096, 0, 1024), 32.0 / 34.0);
  EXPECT_THROW(weight_kept_fraction(0, 1, 1), InternalError);
}

TEST(ScheduleRunnerTest, OverlappedPairAddsComputeAndHidesCommunication) {
  EXPECT_DOUBLE_EQ(overlapped_pair_s(1.0, 0.0, 2.0, 0.0), 3.0);  // nothing to hide
  EXPECT_DOUBLE_EQ(overlapped_pair_s(1.0, 0.4, 2.0, 0.6), 2.0);  // both comms hidden
  EXPECT_DOUBLE_EQ(overlapped_pair_s(1.0, 0.9, 2.0, 1.8), 2.7);  // communication-bound
}

TEST(ScheduleRunnerTest, InputShapeErrorsAreInternalErrors) {
  const ScheduleOrders o = detail::megatron_orders(2, 1, 2, false);
  ScheduleRunInput in = uniform_input(o, {1.0, 1.0, 0.0});
  in.passes.pop_back();
  EXPECT_THROW(run_schedule(o, in), InternalError);
  in = uniform_input(o, {1.0, 1.0, 0.0});
  in.link_p2p_s.push_back(0.0);
  EXPECT_THROW(run_schedule(o, in), InternalError);
}

// ---------------------------------------------------------------------------
// Megatron 1F1B / interleaved orders reproduce simulate_pipeline bit for bit.

class MegatronReproductionTest : public ::testing::TestWithParam<uint32_t> {};

TEST_P(MegatronReproductionTest, SameMakespanAndStageFinishesAsSimulatePipeline) {
  std::mt19937 rng(GetParam());
  std::uniform_real_distribution<double> pass_s(1e-3, 5e-2);
  for (int trial = 0; trial < 50; ++trial) {
    const auto pp = static_cast<int32_t>(1 + rng() % 8);
    const auto vpp = static_cast<int32_t>(1 + rng() % 3);
    auto m = static_cast<int32_t>(1 + rng() % 24);
    if (vpp > 1 && pp > 1) m = pp * static_cast<int32_t>(1 + rng() % 4);
    ScheduleInput old;
    old.num_micro_batches = m;
    ScheduleRunInput in;
    std::vector<double> link(static_cast<size_t>(pp));
    for (double& l : link) l = rng() % 4 == 0 ? 0.0 : 0.1 * pass_s(rng);
    old.interleaved_p2p_s = link[rng() % static_cast<uint32_t>(pp)];
    // The interleaved replay prices every transfer alike; 1F1B uses each link (step_time.cpp).
    in.link_p2p_s = vpp > 1 ? std::vector<double>(link.size(), old.interleaved_p2p_s) : link;
    old.phases.assign(static_cast<size_t>(pp), std::vector<PhaseTimes>(static_cast<size_t>(vpp)));
    in.passes.assign(static_cast<size_t>(pp), std::vector<PassCosts>(static_cast<size_t>(vpp)));
    for (size_t s = 0; s < old.phases.size(); ++s) {
      for (size_t c = 0; c < old.phases[s].size(); ++c) {
        const double f = pass_s(rng), b = pass_s(rng);
        old.phases[s][c] = {f, b};
        in.passes[s][c] = {f, b, 0.0};
      }
      StageP2pTimes t;  // step_time.cpp stage_p2p
      if (pp > 1) {
        t.forward_recv_s = s == 0 ? 0.0 : link[s - 1];
        t.forward_send_s = s + 1 == link.size() ? 0.0 : link[s];
        t.backward_recv_s = t.forward_send_s;
        t.backward_send_s = t.forward_recv_s;
      }
      old.p2p.push_back(t);
    }
    const ScheduleResult expected = simulate_pipeline(old);
    const ScheduleOrders orders = detail::megatron_orders(pp, vpp, m, true);
    ASSERT_EQ(check_schedule_orders(orders), "");
    const ScheduleRun run = run_schedule(orders, in);
    const std::string where =
        "pp " + std::to_string(pp) + " vpp " + std::to_string(vpp) + " m " + std::to_string(m);
    EXPECT_EQ(run.makespan_s, expected.makespan_s) << where;
    for (size_t s = 0; s < expected.stage_finish_s.size(); ++s) {
      EXPECT_EQ(run.finish_s[s], expected.stage_finish_s[s]) << where << " stage " << s;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, MegatronReproductionTest, ::testing::Range(1u, 9u));

}  // namespace
}  // namespace trainsim
