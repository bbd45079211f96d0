// Accuracy that transfers: step time on measured runs the model was not fitted
// on. Every per-GPU figure of the presets comes from datasheets and kernel
// microbenchmarks (presets' system.provenance); the end-to-end fitted figures
// are two global ones, the same in every preset: efficiency.sustained_fraction
// (the fraction of burst-clock kernel efficiency a long training run sustains)
// and efficiency.host.launch_us (the host's CPU time per eagerly launched
// kernel, a property of the PyTorch / Transformer Engine software stack).
// Three protocols, each printing per-GPU / per-source tables:
//   in-sample       both fitted on every case;
//   leave-one-GPU-generation-out (LOGO)  fitted without the generation predicted
//                   (ampere, hopper, blackwell, blackwell_ultra);
//   leave-one-source-out (LOSO)          fitted without the source predicted.
// The fit minimises the mean squared log step-time ratio. Each case's step time
// is modelled, at each launch cost of a grid, as a + b / f in the fraction f
// from two estimates (f = 1, 0.8), linearly between grid points; the held-out
// cases are then estimated exactly at the fold's fitted pair.
// The issue's targets (LOGO median <= 5%, every case <= 15%) are printed beside
// the bounds the model meets today, which the test holds as regression guards.
// A per-mode table then groups the same errors by the parallel modes a case uses
// (a case counts under every mode it uses), so readers see which modes transfer.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "test_util.h"
#include "validation/published_cases.h"

namespace trainsim {
namespace {

using validation::Outcome;
using validation::PublishedCase;

// Regression guards, a little above what the model meets today (the test prints today's
// figures; the issue's targets are 5% / 15%).
constexpr double kLogoMedianGuard = 0.055;
constexpr double kLogoCaseGuard = 0.45;
constexpr double kLosoMedianGuard = 0.055;
constexpr double kInSampleMedianGuard = 0.055;
constexpr double kFitLow = 0.5, kFitHigh = 1.0, kFractionStep = 0.0005;
// The launch-cost grid (us): surrogates are built at these points, and the fit
// searches between them in kLaunchStep_us steps. Its top bounds the fit to a
// plausible range, a few times the 5-25 us secondary sources give per eager op:
// the cases outside Blackwell hardly constrain the figure (fitted without
// Blackwell it ran to 98.5 us on a grid to 100, and the GB200 Qwen3-235B rows
// then came out 60% too slow, with the expert GEMMs still at the native 5 us),
// so the bound is a prior, stated, not a fit.
constexpr double kLaunchGrid_us[] = {0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0};
constexpr size_t kLaunchPoints = std::size(kLaunchGrid_us);
constexpr double kLaunchStep_us = 0.5;

struct Fit {
  double fraction = kFitHigh;
  double launch_us = 0.0;
};

nlohmann::json patch(const Fit& fit) {
  return {{"efficiency", {{"sustained_fraction", fit.fraction}, {"host", {{"launch_us", fit.launch_us}}}}}};
}

struct Surrogate {  // step ratio (predicted / measured) = a + b / f, at one launch cost
  double a = 0.0, b = 0.0;
  double at(double f) const { return a + b / f; }
};

struct Data {
  std::vector<const PublishedCase*> cases;
  std::vector<std::array<Surrogate, kLaunchPoints>> surrogate;  ///< per case, per grid point
};

const Data& data() {
  static const Data d = [] {
    Data out;
    for (const PublishedCase& c : validation::published_cases()) {
      std::array<Surrogate, kLaunchPoints> per_launch;
      std::string error;
      for (size_t k = 0; k < kLaunchPoints; ++k) {
        const Outcome one = validation::evaluate(c, patch({1.0, kLaunchGrid_us[k]}));
        const Outcome low = validation::evaluate(c, patch({0.8, kLaunchGrid_us[k]}));
        error = one.error + low.error;
        if (!error.empty()) break;
        const double r1 = one.step_ratio(), r08 = low.step_ratio();
        per_launch[k].b = (r08 - r1) / 0.25;
        per_launch[k].a = r1 - per_launch[k].b;
      }
      if (!error.empty()) {
        ADD_FAILURE() << c.id << ": " << error;
        continue;
      }
      out.cases.push_back(&c);
      out.surrogate.push_back(per_launch);
    }
    return out;
  }();
  return d;
}

// The case's surrogate step ratio at (f, launch), linear in the launch cost between grid points.
double surrogate_ratio(const std::array<Surrogate, kLaunchPoints>& s, const Fit& at) {
  size_t k = 0;
  while (k + 2 < kLaunchPoints && at.launch_us > kLaunchGrid_us[k + 1]) ++k;
  const double w = (at.launch_us - kLaunchGrid_us[k]) / (kLaunchGrid_us[k + 1] - kLaunchGrid_us[k]);
  return (1.0 - w) * s[k].at(at.fraction) + w * s[k + 1].at(at.fraction);
}

// The (sustained fraction, launch cost) pair minimising the mean squared log step ratio over the
// selected cases: a grid search over the whole box (the loss is cheap; no local minimum traps it).
Fit fit(const std::function<bool(const PublishedCase&)>& use) {
  const Data& d = data();
  std::vector<size_t> selected;
  for (size_t i = 0; i < d.cases.size(); ++i) {
    if (use(*d.cases[i])) selected.push_back(i);
  }
  Fit best_fit;
  double best = 1e300;
  const double launch_high = kLaunchGrid_us[kLaunchPoints - 1];
  for (double l = 0.0; l <= launch_high + 1e-9; l += kLaunchStep_us) {
    for (double f = kFitLow; f <= kFitHigh + 1e-12; f += kFractionStep) {
      double loss = 0.0;
      for (const size_t i : selected) {
        const double r = surrogate_ratio(d.surrogate[i], {f, l});
        loss += r > 0.0 ? std::log(r) * std::log(r) : 1e6;
      }
      if (loss < best) {
        best = loss;
        best_fit = {f, l};
      }
    }
  }
  return best_fit;
}

struct Group {
  std::vector<double> errors;
  double worst = -1.0;
  std::string worst_id;
  double worst_signed = 0.0;
  void add(const std::string& id, double e) {
    errors.push_back(std::fabs(e));
    if (std::fabs(e) > worst) {
      worst = std::fabs(e);
      worst_id = id;
      worst_signed = e;
    }
  }
};

struct Table {
  std::map<std::string, Group> by_gpu, by_generation, by_source;
  Group all;
  std::map<std::string, double> error_of;  ///< signed, per case id
};

void print(const char* protocol, const Table& t) {
  auto line = [&](const char* kind, const std::string& name, const Group& g) {
    std::printf("[transfer] %-9s %-10s %-30s n %3zu  median |err| %5.1f%%  max %6.1f%%  worst %s (%+.1f%%)\n",
                protocol, kind, name.c_str(), g.errors.size(), 100 * validation::median(g.errors),
                100 * g.worst, g.worst_id.c_str(), 100 * g.worst_signed);
  };
  for (const auto& [name, g] : t.by_generation) line("generation", name, g);
  for (const auto& [name, g] : t.by_gpu) line("gpu", name, g);
  for (const auto& [name, g] : t.by_source) line("source", name, g);
  line("all", "all", t.all);
}

// Estimates every case exactly at the fraction its fold fitted.
Table run(const char* protocol, const std::function<std::string(const PublishedCase&)>& fold_of) {
  const Data& d = data();
  std::map<std::string, Fit> fitted;
  for (const PublishedCase* c : d.cases) {
    const std::string fold = fold_of(*c);
    if (fitted.count(fold)) continue;
    fitted[fold] = fold.empty() ? fit([](const PublishedCase&) { return true; })
                                : fit([&](const PublishedCase& o) { return fold_of(o) != fold; });
    std::printf("[transfer] %-9s fold %-30s sustained_fraction %.4f launch_us %.1f\n", protocol,
                fold.empty() ? "(all cases)" : fold.c_str(), fitted[fold].fraction, fitted[fold].launch_us);
  }
  Table t;
  for (const PublishedCase* c : d.cases) {
    const Outcome o = validation::evaluate(*c, patch(fitted[fold_of(*c)]));
    EXPECT_TRUE(o.error.empty()) << c->id << ": " << o.error;
    if (!o.error.empty()) continue;
    const double e = o.relative_error();
    std::printf("[transfer] %-9s case %-64s %-15s %+6.1f%%\n", protocol, c->id.c_str(), c->gpu.c_str(),
                100 * e);
    t.by_gpu[c->gpu].add(c->id, e);
    t.by_generation[validation::generation_of(c->gpu)].add(c->id, e);
    t.by_source[c->source].add(c->id, e);
    t.all.add(c->id, e);
    t.error_of[c->id] = e;
  }
  print(protocol, t);
  return t;
}

// The parallel modes a case uses (its parsed config): tp > 1, pp > 1, cp > 1, ep > 1,
// ZeRO >= 2 (Megatron-FSDP / FSDP2 import as ZeRO 3), and pure data parallel (none of those).
std::vector<std::string> modes_of(const PublishedCase& c) {
  Config parsed;
  Issues issues;
  if (!parse_config(c.config.dump(), parsed, issues)) return {"(unparsed)"};
  const ParallelSpec& p = parsed.training.parallel;
  std::vector<std::string> out;
  if (p.tp > 1) out.push_back("tp>1");
  if (p.pp > 1) out.push_back("pp>1");
  if (p.cp > 1) out.push_back("cp>1");
  if (p.ep > 1) out.push_back("ep>1");
  if (parsed.training.zero_stage >= 2) out.push_back("zero>=2/fsdp");
  if (out.empty()) out.push_back("pure dp");
  return out;
}

// Median / max |error| by parallel mode under each protocol.
void print_modes(const std::vector<std::pair<const char*, const Table*>>& protocols) {
  std::map<std::string, std::vector<std::string>> ids_of;
  for (const PublishedCase* c : data().cases) {
    for (const std::string& mode : modes_of(*c)) ids_of[mode].push_back(c->id);
  }
  for (const auto& [mode, ids] : ids_of) {
    std::printf("[transfer] mode %-13s n %3zu", mode.c_str(), ids.size());
    for (const auto& [protocol, table] : protocols) {
      Group g;
      for (const std::string& id : ids) {
        const auto it = table->error_of.find(id);
        if (it != table->error_of.end()) g.add(id, it->second);
      }
      std::printf("  %s median %5.1f%% max %5.1f%%", protocol, 100 * validation::median(g.errors),
                  100 * g.worst);
    }
    std::printf("\n");
  }
}

TEST(TransferTest, InSampleLeaveOneGenerationOutAndLeaveOneSourceOut) {
  ASSERT_GE(data().cases.size(), 100u);
  const Table in = run("in-sample", [](const PublishedCase&) { return std::string(); });
  const Table logo = run("LOGO", [](const PublishedCase& c) { return validation::generation_of(c.gpu); });
  const Table loso = run("LOSO", [](const PublishedCase& c) { return c.source; });
  std::printf("[transfer] targets of the issue: LOGO median <= 5%%, every case <= 15%%; "
              "today: LOGO median %.1f%%, worst %.1f%% (%s)\n",
              100 * validation::median(logo.all.errors), 100 * logo.all.worst,
              logo.all.worst_id.c_str());
  print_modes({{"in-sample", &in}, {"LOGO", &logo}, {"LOSO", &loso}});
  EXPECT_LE(validation::median(in.all.errors), kInSampleMedianGuard);
  EXPECT_LE(validation::median(logo.all.errors), kLogoMedianGuard);
  EXPECT_LE(logo.all.worst, kLogoCaseGuard) << logo.all.worst_id;
  EXPECT_LE(validation::median(loso.all.errors), kLosoMedianGuard);
}

// The presets carry the in-sample fit of the two global figures (within the
// fit's resolution): refit (this test prints it) when the physics changes.
TEST(TransferTest, PresetsCarryTheInSampleGlobalFigures) {
  const Fit fitted = fit([](const PublishedCase&) { return true; });
  std::set<std::string> gpus;
  for (const PublishedCase* c : data().cases) gpus.insert(c->gpu);
  for (const std::string& gpu : gpus) {
    const nlohmann::json preset = nlohmann::json::parse(testing::read_text_file(
        std::string(TRAINSIM_PRESETS_DIR) + "/systems/" + gpu + ".json"));
    const nlohmann::json& efficiency = preset["system"]["efficiency"];
    EXPECT_NEAR(efficiency["sustained_fraction"].get<double>(), fitted.fraction, 0.03)
        << gpu << ": the in-sample fit is " << fitted.fraction;
    EXPECT_NEAR(efficiency["host"]["launch_us"].get<double>(), fitted.launch_us, 3.0)
        << gpu << ": the in-sample fit is " << fitted.launch_us << " us";
  }
}

// The published case with this id, or nullptr.
const PublishedCase* case_with_id(const std::string& id) {
  for (const PublishedCase& c : validation::published_cases()) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

// FP8 over BF16, NVFP4 over FP8 (and over another FP8 recipe) speed-ups of pairs of runs with
// the same GPU, model and layout: the ratio of measured throughputs against the
// ratio of predicted ones (presets as they are).
TEST(TransferTest, LowPrecisionSpeedUpOfPairedRuns) {
  struct Pair {
    const char* faster;
    const char* slower;
  };
  const Pair pairs[] = {
      {"mbridge26.02-DGX-GB200-qwen3-235B-A22B-FP8-MX-256gpu", "mbridge25.11-DGX-GB200-Qwen3_235B_a22B-BF16-256gpu"},
      {"mbridge25.11-DGX-B200-LLAMA3_8B-FP8-CS-8gpu", "mbridge25.11-DGX-B200-llama3-8B-FP8-MX-8gpu"},
      {"mbridge25.11-DGX-GB200-LLAMA3_8B-FP8-CS-8gpu", "mbridge25.11-DGX-GB200-llama3-8B-FP8-MX-8gpu"},
      {"mbridge25.11-DGX-GB300-LLAMA3_8B-FP8-CS-8gpu", "mbridge25.11-DGX-GB300-llama3-8B-FP8-MX-8gpu"},
      {"mbridge25.09-DGX-B200-llama3-405B-FP8-CS-128gpu", "mbridge25.09-DGX-B200-llama3-405B-FP8-MX-128gpu"},
      // NVFP4 against the FP8 run of the same layout (Megatron-Bridge 26.02).
      {"mbridge26.02-DGX-GB300-llama3-70B-NVFP4-64gpu", "mbridge26.02-DGX-GB300-llama3-70B-FP8-MX-64gpu"},
      {"mbridge26.02-DGX-GB200-llama3-70B-NVFP4-64gpu", "mbridge26.02-DGX-GB200-llama3-70B-FP8-MX-64gpu"},
      {"mbridge26.02-DGX-GB300-llama3-405B-NVFP4-256gpu", "mbridge26.02-DGX-GB300-llama3-405B-FP8-CS-256gpu"},
      {"mbridge26.02-DGX-GB200-llama3-405B-NVFP4-256gpu", "mbridge26.02-DGX-GB200-llama3-405B-FP8-MX-256gpu"},
  };
  std::vector<double> errors;
  for (const Pair& p : pairs) {
    const PublishedCase* faster = case_with_id(p.faster);
    const PublishedCase* slower = case_with_id(p.slower);
    ASSERT_TRUE(faster != nullptr && slower != nullptr) << p.faster << " / " << p.slower;
    const Outcome fast = validation::evaluate(*faster);
    const Outcome slow = validation::evaluate(*slower);
    ASSERT_TRUE(fast.error.empty() && slow.error.empty()) << fast.error << slow.error;
    const double measured = fast.measured / slow.measured;    // tokens/s ratio
    const double predicted = fast.predicted / slow.predicted;
    const double e = predicted / measured - 1.0;
    errors.push_back(std::fabs(e));
    std::printf("[transfer] speed-up %-52s / %-52s measured %.3f predicted %.3f (%+.1f%%)\n",
                p.faster, p.slower, measured, predicted, 100 * e);
  }
  EXPECT_LE(validation::median(errors), 0.10);
}

// Expert-parallel overlap (--overlap-moe-expert-parallel-comm) on against off, same run otherwise:
// Megatron-Bridge PR #5094's controlled A/B (Qwen3-30B-A3B, 16 H100, HybridEP, step times),
// a measurement never fitted. The predicted speed-up must stay within 10% of the measured one.
TEST(TransferTest, ExpertParallelOverlapSpeedUpOfPairedRuns) {
  const char* on = "mbridge-pr5094-H100-qwen3-30B-A3B-BF16-16gpu-ep-overlap-on";
  const char* off = "mbridge-pr5094-H100-qwen3-30B-A3B-BF16-16gpu-ep-overlap-off";
  const PublishedCase* with = case_with_id(on);
  const PublishedCase* without = case_with_id(off);
  ASSERT_TRUE(with != nullptr && without != nullptr) << on << " / " << off;
  const Outcome fast = validation::evaluate(*with);
  const Outcome slow = validation::evaluate(*without);
  ASSERT_TRUE(fast.error.empty() && slow.error.empty()) << fast.error << slow.error;
  ASSERT_TRUE(fast.time_like && slow.time_like);  // both measured as step times
  const double measured = slow.measured / fast.measured;
  const double predicted = slow.predicted / fast.predicted;
  const double e = predicted / measured - 1.0;
  std::printf("[transfer] speed-up %-52s / %-52s measured %.3f predicted %.3f (%+.1f%%)\n", on, off, measured,
              predicted, 100 * e);
  EXPECT_GT(predicted, 1.0);
  EXPECT_LE(std::fabs(e), 0.10);
}

}  // namespace
}  // namespace trainsim
