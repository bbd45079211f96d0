#include "search/search.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "memory/outside_memory.h"
#include "search/batch_resolve.h"
#include "search/class_search.h"
#include "search/collector.h"
#include "search/floor.h"
#include "search/space.h"

namespace trainsim {
namespace {

// Classes per batch: every class of a batch sees what the batches before it
// proved, and nothing of its own batch, whatever the number of threads.
constexpr size_t kBatchClasses = 16;

// Runs fn(worker, item) for items [0, n) on `threads` threads (the caller's
// included), returning when all are done.
class Pool {
 public:
  explicit Pool(int threads) {
    for (int t = 1; t < threads; ++t) threads_.emplace_back([this, t] { loop(t); });
  }
  ~Pool() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }
  void run(size_t n, const std::function<void(int, size_t)>& fn) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      fn_ = &fn;
      size_ = n;
      next_ = 0;
      busy_ = threads_.size();
      ++generation_;
    }
    wake_.notify_all();
    work(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return busy_ == 0; });
  }

 private:
  void work(int worker) {
    for (size_t i = next_.fetch_add(1); i < size_; i = next_.fetch_add(1)) (*fn_)(worker, i);
  }
  void loop(int worker) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      work(worker);
      const std::lock_guard<std::mutex> lock(mutex_);
      if (--busy_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int, size_t)>* fn_ = nullptr;
  size_t size_ = 0;
  std::atomic<size_t> next_{0};
  size_t busy_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace

SearchOutcome run_search(const SearchSpec& spec, const SearchPage& page,
                         const SearchOptions& options) {
  SearchOutcome out;
  const SearchSpace space(spec);
  const std::vector<LayoutClass> classes = space.classes();
  out.total_classes = space.num_classes();
  out.total_combinations = space.combinations();
  // Static memory above this cannot pass the verdict: it needs allocated + outside
  // memory <= (1 - headroom) x usable capacity.
  out.memory_budget_bytes = usable_capacity_bytes(spec.system.gpu) * (1.0 - spec.memory_headroom);

  std::vector<int64_t> selected;
  if (page.whole) {
    selected.resize(classes.size());
    for (size_t i = 0; i < classes.size(); ++i) selected[i] = static_cast<int64_t>(i);
  } else if (page.limit >= 0) {
    const auto total = static_cast<int64_t>(classes.size());
    const int64_t end = std::min(total, page.offset + std::min(page.limit, total));
    for (int64_t i = std::min(page.offset, total); i < end; ++i) selected.push_back(i);
  } else {
    for (const int64_t i : page.classes) {
      if (i >= 0 && i < static_cast<int64_t>(classes.size())) selected.push_back(i);
    }
  }
  if (!page.whole) {
    out.page_classes = selected;
    std::sort(out.page_classes.begin(), out.page_classes.end());
  }
  SearchFloors floors(spec, space);
  if (options.floors) {
    for (const int64_t i : selected) floors.measure(classes[static_cast<size_t>(i)]);
  }
  std::vector<ClassOrder> order;
  order.reserve(selected.size());
  for (const int64_t i : selected) {
    const LayoutClass& c = classes[static_cast<size_t>(i)];
    order.push_back({i, c.combinations, floors.class_floor_s(c)});
  }
  std::stable_sort(order.begin(), order.end(), [](const ClassOrder& a, const ClassOrder& b) {
    return a.floor_s < b.floor_s || (a.floor_s == b.floor_s && a.index < b.index);
  });
  if (page.plan_only) {
    for (const ClassOrder& o : order) out.counts.considered += o.combinations;
    out.counts.layout_classes = static_cast<int64_t>(order.size());
    out.order = std::move(order);
    return out;
  }

  const int threads = std::max(1, options.threads);
  std::vector<std::unique_ptr<ClassWorker>> workers;
  for (int t = 0; t < threads; ++t) {
    workers.push_back(std::make_unique<ClassWorker>(spec, space, floors, out.memory_budget_bytes,
                                                    options.floors, options.points,
                                                    options.replay_all));
  }
  Collector collector(spec, page.bound);
  Pool pool(threads);
  FitJudge judge(spec, workers.front()->evaluator());  // used between batches only
  std::vector<ClassResult> results(kBatchClasses);
  for (size_t begin = 0; begin < order.size(); begin += kBatchClasses) {
    const size_t size = std::min(kBatchClasses, order.size() - begin);
    const Incumbents known = collector.incumbents();
    const std::function<void(int, size_t)> task = [&](int worker, size_t i) {
      const LayoutClass& c = classes[static_cast<size_t>(order[begin + i].index)];
      results[i] = workers[static_cast<size_t>(worker)]->process(c, known);
    };
    pool.run(size, task);
    // The replay for the plans that enter the merged top K and front (batch_resolve.h).
    ClassResult verified;
    resolve_batch(spec, results, size, collector, judge, verified);
    for (size_t i = 0; i < size; ++i) {
      results[i].fits.clear();
      collector.merge(std::move(results[i]));
      results[i] = ClassResult();
    }
    collector.merge(std::move(verified));
  }

  out.counts = collector.counts();
  out.top = collector.top();
  CandidateEvaluator evaluator(spec, out.memory_budget_bytes);
  for (const ScoredCandidate& s : out.top) out.top_estimates.push_back(evaluator.full(s.candidate));
  out.pareto = collector.front();
  out.points = std::move(collector.points());
  thin_points(out.points);
  out.closest = collector.closest();
  return out;
}

}  // namespace trainsim
