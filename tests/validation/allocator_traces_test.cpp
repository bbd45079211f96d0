// Simulated caching-allocator figures for the traces in
// tests/validation/data/allocator_traces/*.json (or the directory named by
// TRAINSIM_ALLOCATOR_TRACE_DIR), printed in the same table layout as
// tests/validation/allocator_replay_gpu.py prints PyTorch's real figures on a
// GPU, so the two can be compared line by line. Each trace is a JSON list of
// [id, size_bytes, is_free]. The test itself only checks that every trace
// replays and keeps reserved >= allocated; the comparison with a GPU is manual.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "memory/caching_allocator.h"
#include "test_util.h"

namespace trainsim {
namespace {

std::vector<AllocEvent> load_trace(const std::string& path) {
  const nlohmann::json doc = nlohmann::json::parse(testing::read_text_file(path));
  const nlohmann::json& list = doc.is_object() ? doc.at("events") : doc;
  std::vector<AllocEvent> events;
  events.reserve(list.size());
  for (const nlohmann::json& e : list) {
    events.push_back({e.at(0).get<int64_t>(), e.at(1).get<int64_t>(), e.at(2).get<bool>()});
  }
  return events;
}

std::vector<std::filesystem::path> trace_files() {
  const char* override_dir = std::getenv("TRAINSIM_ALLOCATOR_TRACE_DIR");
  const std::filesystem::path dir =
      override_dir != nullptr
          ? std::filesystem::path(override_dir)
          : std::filesystem::path(testing::test_data_path("validation/data/allocator_traces"));
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

double mib(int64_t bytes) { return static_cast<double>(bytes) / static_cast<double>(kAllocMiB); }

TEST(AllocatorTraces, PrintSimulatedFigures) {
  const std::vector<std::filesystem::path> files = trace_files();
  ASSERT_GE(files.size(), 3U);
  std::printf(
      "trace | conf | max_alloc_MiB | max_reserved_MiB | reserved_end_MiB | segments | retries | "
      "oom_event\n");
  for (const std::filesystem::path& file : files) {
    const std::vector<AllocEvent> events = load_trace(file.string());
    for (const bool expandable : {false, true}) {
      AllocatorOptions options;
      options.expandable_segments = expandable;
      const AllocatorReplay r = replay(events, options);
      const AllocatorStats& s = r.stats;
      std::printf("%s | %s | %.2f | %.2f | %.2f | %lld | %lld | %s\n",
                  file.filename().string().c_str(),
                  expandable ? "expandable_segments:True" : "(default)",
                  mib(s.peak_allocated_bytes), mib(s.peak_reserved_bytes), mib(s.reserved_bytes),
                  static_cast<long long>(s.segments), static_cast<long long>(s.num_alloc_retries),
                  r.oom ? std::to_string(r.oom_event_index).c_str() : "None");
      EXPECT_FALSE(r.oom) << file;
      EXPECT_GE(s.peak_reserved_bytes, s.peak_allocated_bytes) << file;
      EXPECT_GE(s.at_peak_reserved.fragmentation_bytes(), 0) << file;
    }
  }
}

}  // namespace
}  // namespace trainsim
