// Order-driven pipeline simulator: each rank runs its own ordered list of passes
// (F, B, W, BW, the overlapped F&B pair of DualPipe, and, for Megatron's blocking
// p2p, explicit send/recv transfers), one at a time, each as soon as its data is
// there. Any schedule is an order per rank plus a placement of virtual stages on
// (rank, chunk); the generators live in schedule_orders.h.
//
// Dependencies (Qi et al., arXiv:2401.10241 section 2: B needs the next stage's
// B, W only its own B): with v the pass's virtual stage on its micro-batch's route,
//   F(mb, v)  after F(mb, v - 1)                    + the link's p2p time
//   B(mb, v)  after B(mb, v + 1) (+ p2p) and after F(mb, v)
//   W(mb, v)  after B(mb, v)
// BW is B then W in one pass; F&B runs an F and a BW of other micro-batches at
// once (DualPipe's _forward_backward_compute_chunk, deepseek-ai/DualPipe
// dualpipe/dualpipe.py) and both results leave when the pair ends.
//
// p2p models. Async (zero-bubble runtime and DualPipe post isend/irecv ahead and
// overlap them): a cross-rank dependency only adds its link's time. Explicit
// (Megatron-LM's blocking send/recv, the replays of pipeline_1f1b.cpp and
// pipeline_interleaved.cpp): transfers are actions; consecutive "joined" ones form
// one batch_isend_irecv bundle posted at once; a transfer ends at max(both post
// times) + the link's time, a bundle when all of its transfers ended, and
// dependencies add nothing (the transfers carry the data).
//
// Cost: O(number of actions + micro-batches x ranks x chunks), any processing
// order gives the same times (every start is a max of known end times).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/schedule_in_flight.h"

namespace trainsim {

enum class ActionKind : uint8_t {
  kForward,         ///< F
  kBackward,        ///< B: input gradient only; the micro-batch's W runs later
  kWeight,          ///< W: weight gradient of an earlier B
  kBackwardWeight,  ///< BW: the whole backward (B then W) as one pass
  kOverlapped,      ///< F&B: an F and a BW of other micro-batches, concurrently
  kSend,            ///< explicit-p2p orders only
  kRecv,
};

struct Action {
  ActionKind kind = ActionKind::kForward;
  bool joined = false;         ///< kSend/kRecv: posted with the previous transfer (one bundle)
  int32_t chunk = 0;           ///< local chunk; kOverlapped: the forward's
  int32_t micro_batch = 0;     ///< kOverlapped: the forward's
  int32_t backward_chunk = 0;  ///< kOverlapped only: the BW's chunk
  int32_t backward_micro_batch = 0;  ///< kOverlapped only: the BW's micro-batch
  int32_t transfer = 0;              ///< kSend/kRecv: id shared by both ends, < num_transfers
  int32_t link = 0;                  ///< kSend/kRecv: the link crossed (see ScheduleRunInput)
};

// Where virtual stage v of a route runs. link_to_next is the link the hop
// v -> v + 1 crosses, -1 when v + 1 is on the same rank (the turn of a V) or absent.
struct StageSlot {
  int32_t rank = 0;
  int32_t chunk = 0;
  int32_t link_to_next = -1;
};

struct ScheduleOrders {
  int32_t pp = 1;          ///< ranks
  int32_t num_chunks = 1;  ///< local chunks per rank
  int32_t num_micro_batches = 1;
  int32_t num_virtual_stages = 1;  ///< per route
  /// [route * num_virtual_stages + v]. One route, except DualPipe's two directions.
  std::vector<StageSlot> route_stages;
  std::vector<int32_t> route_of_micro_batch;  ///< [mb]; empty: every micro-batch takes route 0
  bool explicit_p2p = false;                  ///< transfers are actions (see the header comment)
  int32_t num_transfers = 0;  ///< transfer ids are < num_transfers; some may be unused
  std::vector<std::vector<Action>> actions;  ///< [rank], in execution order
};

struct PassCosts {          ///< one micro-batch through one chunk
  double forward_s = 0.0;   ///< F
  double backward_s = 0.0;  ///< B (input gradient); a BW takes backward_s + weight_s
  double weight_s = 0.0;    ///< W
};

struct ScheduleRunInput {
  std::vector<std::vector<PassCosts>> passes;  ///< [rank][chunk]
  /// F&B durations, [rank][forward chunk * num_chunks + backward chunk]. Empty: no
  /// overlap, F&B = F + B + W. See overlapped_pair_s() for a model.
  std::vector<std::vector<double>> overlapped_s;
  /// Link r joins ranks r and r + 1; link pp - 1 joins pp - 1 and 0 (the wrap of
  /// the interleaved schedule), as step_time.cpp's boundary_p2p_s. Empty: all 0.
  std::vector<double> link_p2p_s;
  /// Share of an F's activation a B leaves for its W (see activation_peaks()).
  double weight_kept_fraction = 0.0;
  bool record_timeline = false;
};

// One pass on one rank. Transfers appear as kSend/kRecv, once on each side.
struct RunEvent {
  ActionKind kind = ActionKind::kForward;
  int32_t micro_batch = 0;
  int32_t chunk = 0;
  int32_t backward_micro_batch = -1;  ///< kOverlapped only
  int32_t backward_chunk = -1;        ///< kOverlapped only
  double start_s = 0.0;
  double end_s = 0.0;
};

// Activations held by one rank. A micro-batch's chunk activation is alive from
// its F's start to its B's (or BW's) end, and a share weight_kept_fraction of it
// from there to its W's end. ZB source: sail-sg/zero-bubble-pipeline-parallelism
// runtime.py get_zero_bubble_forward_backward_func: per layer and token
// f_mem = 34h + 5as, w_mem = -32h, b_mem = -f_mem - w_mem, so a B frees
// (2h + 5as) / (34h + 5as) and the W the rest (weight_kept_fraction() below).
struct ActivationPeak {
  double live = 0.0;      ///< sum over chunks of weight x (alive + kept share x waiting for W)
  int32_t in_flight = 0;  ///< chunk activations between F start and B end at the peak
  int32_t waiting_for_weight = 0;                ///< between B end and W end at the peak
  std::vector<int32_t> in_flight_per_chunk;      ///< [chunk] at the peak
  std::vector<int32_t> waiting_per_chunk;        ///< [chunk] at the peak
  std::vector<int32_t> max_in_flight_per_chunk;  ///< [chunk] each chunk's own maximum
  /// With pass_bytes: the moment whose live activations plus the running pass's own
  /// working set are largest, with the counts then and that pass (chunk, B or F).
  double peak_bytes = 0.0;
  std::vector<int32_t> peak_alive;    ///< [chunk], the running micro-batch included
  std::vector<int32_t> peak_waiting;  ///< [chunk]
  int32_t running_chunk = -1;         ///< -1: no pass_bytes given
  bool running_backward = false;
};


struct ScheduleRun {
  double makespan_s = 0.0;  ///< last finish over ranks, time 0 = first F starts
  /// Max over ranks of (finish - own first start): the step when ranks need not
  /// start together (ZB-H2 with the optimizer post-validation of arXiv:2401.10241, which
  /// drops the step-end synchronisation; the repo's efficiency.py get_hand_schedule
  /// measures ZB-H2 this way).
  double max_span_s = 0.0;
  std::vector<double> start_s;              ///< [rank] first pass start
  std::vector<double> finish_s;             ///< [rank] last pass or transfer end
  std::vector<double> busy_s;               ///< [rank] sum of pass durations (transfers excluded)
  std::vector<double> idle_s;               ///< [rank] makespan_s - busy_s
  std::vector<ActivationPeak> activations;  ///< [rank], weights 1 per chunk
  std::vector<std::vector<RunEvent>> timeline;  ///< [rank], only when record_timeline
};

// Empty when the orders are well formed, else why not: sizes, placement, every
// (micro-batch, virtual stage) of its route has exactly one F and either one BW
// or one B and one W, on the slot's rank, each transfer has one send and one
// recv, and a zero-cost dry run finishes (no deadlock). O(actions).
std::string check_schedule_orders(const ScheduleOrders& orders);

// Simulates the orders. Precondition: check_schedule_orders() is empty and the
// input has [pp][num_chunks] passes (and overlapped_s, link_p2p_s sized when
// given); otherwise throws InternalError naming the problem (deadlock included).
ScheduleRun run_schedule(const ScheduleOrders& orders, const ScheduleRunInput& input);

// Peak activations per rank from the order alone (times do not matter).
// chunk_weights [rank][chunk] (e.g. stored bytes per micro-batch) choose which
// moment is the peak; empty: 1 per chunk. pass_bytes [rank][chunk] (with stored
// bytes as weights): also the peak of live bytes plus the running pass's working
// set, at each forward and backward (peak_bytes and the fields after it).
std::vector<ActivationPeak> activation_peaks(
    const ScheduleOrders& orders, double weight_kept_fraction,
    const std::vector<std::vector<double>>& chunk_weights = {},
    const std::vector<std::vector<PassOverBytes>>& pass_bytes = {});

// One rank's actions as the passes the memory model's allocation trace replays
// (model/pass_step.h), in the order activation_peaks() walks them: F, B, W and
// BW as they are, an F&B as its F then its BW, transfers dropped.
std::vector<PassStep> rank_pass_steps(const std::vector<Action>& actions);

// The ZB memory model's kept share 32h / (34h + 5as) (runtime.py above; the
// per-layer 34sbh + 5as^2b of Korthikanti et al. arXiv:2205.05198 Table 2 with
// s and b factored out). Pass num_heads = 0 when attention scores are not
// stored (flash attention): 32 / 34.
double weight_kept_fraction(int64_t hidden_size, int64_t num_heads, int64_t seq_len);

// trainsim's model of one F&B duration (an assumption, not a published
// formula): the two passes share the SMs, so their compute adds, while the
// communication of each (EP all-to-all, exposed TP/CP collectives) hides under
// the other's compute, which is what DeepSeek-V3 (arXiv:2412.19437 section
// 3.2.1) overlaps the pair for: max(compute_f + compute_b, comm_f + comm_b)
// with compute = total - comm.
double overlapped_pair_s(double forward_s, double forward_comm_s, double backward_s,
                         double backward_comm_s);

namespace detail {
// Sizes and placement (first part of check_schedule_orders()): empty or why not.
std::string check_schedule_shape(const ScheduleOrders& orders);
// The zero-cost replay of check_schedule_orders(): empty, or why it stopped.
// Precondition: the sizes and placement check_schedule_orders() verifies first.
std::string dry_run_schedule(const ScheduleOrders& orders);
}  // namespace detail

}  // namespace trainsim
