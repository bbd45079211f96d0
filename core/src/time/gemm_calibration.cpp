#include "time/gemm_calibration.h"

#include "time/efficiency.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim {
namespace {

// The value of `name` in a SimuMax shape key ("b=1, m=4096, k=8192, ..."); "" when absent.
std::string_view field(std::string_view key, std::string_view name) {
  size_t at = 0;
  while (at < key.size()) {
    size_t end = key.find(", ", at);
    if (end == std::string_view::npos) end = key.size();
    const std::string_view item = key.substr(at, end - at);
    const size_t eq = item.find('=');
    if (eq != std::string_view::npos && item.substr(0, eq) == name) return item.substr(eq + 1);
    at = end + 2;
  }
  return {};
}

double number(std::string_view key, std::string_view name) {
  const std::string_view v = field(key, name);
  return v.empty() ? 0.0 : std::strtod(std::string(v).c_str(), nullptr);
}

// One pass of a GEMM in the shape model's terms: rows m (per group), columns n,
// reduction k, groups.
struct PassShape {
  double m = 0.0, n = 0.0, k = 0.0, groups = 1.0;
};

// The pass of a dense key from its layout (efficiency.cpp gemm_key: TN forward,
// NN data gradient, NT weight gradient); its (m, n, k) are the pass's own.
Pass dense_pass(std::string_view layout) {
  return layout == "TN" ? Pass::kForward : layout == "NN" ? Pass::kBackwardData : Pass::kBackwardWeight;
}

Pass grouped_pass(std::string_view stage) {
  return stage == "fwd" ? Pass::kForward : stage == "bwd_grad_act" ? Pass::kBackwardData : Pass::kBackwardWeight;
}

// The pass's (m, n, k) of a grouped GEMM of per-group shape M x K by K x N
// (the same mapping as compute_efficiency's grouped branch).
PassShape grouped_pass_shape(Pass pass, double groups, double m, double n, double k) {
  switch (pass) {
    case Pass::kForward: return {m, n, k, groups};
    case Pass::kBackwardData: return {m, k, n, groups};
    case Pass::kBackwardWeight: return {n, k, m, groups};
  }
  return {m, n, k, groups};
}

PassShape dense_pass_shape(const Op& op, Pass pass) {
  const double rows = static_cast<double>(op.gemm.b * op.gemm.m);
  const double k = static_cast<double>(op.gemm.k), n = static_cast<double>(op.gemm.n);
  switch (pass) {
    case Pass::kForward: return {rows, n, k, 1.0};
    case Pass::kBackwardData: return {rows, k, n, 1.0};
    case Pass::kBackwardWeight: return {n, k, rows, 1.0};
  }
  return {rows, n, k, 1.0};
}

// The bf16 shape model (plateau x shape factor) the residuals are taken against.
double bf16_model(const EfficiencySpec& e, bool grouped, const PassShape& s) {
  const auto bf16 = static_cast<size_t>(GemmFormat::kBf16);
  const double plateau = grouped && e.grouped_gemm[bf16] > 0.0 ? e.grouped_gemm[bf16] : e.gemm[bf16];
  return plateau * gemm_shape_factor(e, e.gemm_k_half, s.m, s.n, s.k, s.groups);
}

// Measured points of one class and pass, keeping the gradient dtype of the run
// where the table has it (fp32 main-grad accumulation runs slower than bf16).
std::vector<GemmCalibrationPoint> points(const std::map<std::string, double>& table, bool grouped, Pass pass,
                                         const EfficiencySpec& e, std::string_view grad_dtype) {
  std::vector<GemmCalibrationPoint> all, same_grad;
  for (const auto& [key, measured] : table) {
    PassShape s;
    std::string_view grad;
    if (grouped) {
      if (field(key, "dtype") != "bf16" || grouped_pass(field(key, "stage")) != pass) continue;
      s = grouped_pass_shape(pass, number(key, "ng"), number(key, "M"), number(key, "N"), number(key, "K"));
      grad = field(key, "main_grad_dtype");
    } else {
      if (dense_pass(field(key, "layout")) != pass) continue;
      s = {number(key, "b") * number(key, "m"), number(key, "n"), number(key, "k"), 1.0};
      grad = pass == Pass::kBackwardWeight ? field(key, "out_dtype") : grad_dtype;
    }
    if (s.m <= 0.0 || s.n <= 0.0 || s.k <= 0.0 || s.groups <= 0.0) continue;
    const double model = bf16_model(e, grouped, s);
    if (model <= 0.0) continue;
    all.push_back({s.m, s.n, s.k, s.groups, measured / model});
    if (grad == grad_dtype) same_grad.push_back(all.back());
  }
  return same_grad.empty() ? all : same_grad;
}

// Inverse-distance-squared mean of the residuals of the nearest measured
// shapes, the distance taken in log m, log n, log k (GEMM efficiency varies
// with the ratio of dimensions, not their difference); an exact shape returns
// its own residual.
double interpolate(const std::vector<GemmCalibrationPoint>& pts, const PassShape& q) {
  constexpr size_t kNeighbours = 4;
  std::vector<std::pair<double, double>> by_distance;  // (squared distance, residual)
  by_distance.reserve(pts.size());
  for (const GemmCalibrationPoint& p : pts) {
    const double dm = std::log(p.m / q.m), dn = std::log(p.n / q.n), dk = std::log(p.k / q.k);
    by_distance.emplace_back(dm * dm + dn * dn + dk * dk, p.residual);
  }
  const size_t count = std::min(kNeighbours, by_distance.size());
  std::partial_sort(by_distance.begin(), by_distance.begin() + static_cast<std::ptrdiff_t>(count),
                    by_distance.end());
  if (by_distance.front().first < 1e-12) return by_distance.front().second;
  double weights = 0.0, sum = 0.0;
  for (size_t i = 0; i < count; ++i) {
    const double w = 1.0 / by_distance[i].first;
    weights += w;
    sum += w * by_distance[i].second;
  }
  return sum / weights;
}

// The median residual of the dense table's points (all passes); 0 when it has none.
double median_dense_residual(const std::array<std::vector<GemmCalibrationPoint>, kNumPasses>& dense) {
  std::vector<double> residuals;
  for (const auto& pass_points : dense) {
    for (const GemmCalibrationPoint& p : pass_points) residuals.push_back(p.residual);
  }
  if (residuals.empty()) return 0.0;
  const auto mid = residuals.begin() + static_cast<std::ptrdiff_t>(residuals.size() / 2);
  std::nth_element(residuals.begin(), mid, residuals.end());
  return *mid;
}

}  // namespace

GemmCalibrationTables::GemmCalibrationTables(const SystemSpec& system, const TrainingSpec& training) {
  const EfficiencySpec& e = system.efficiency;
  // Without a shape model (num_sms 0: one flat factor per class, as SimuMax's own
  // configs price a shape their table lacks, tests/validation/simumax_oracle_time_test.cpp)
  // there is nothing to calibrate: an unmeasured shape takes that factor.
  usable_ = e.num_sms > 0 && e.gemm[static_cast<size_t>(GemmFormat::kBf16)] > 0.0;
  if (!usable_) return;
  const std::string_view grad_dtype = training.grad_reduce_in_bf16 ? "bf16" : "fp32";
  for (const bool grouped : {false, true}) {
    const auto& table = grouped ? e.measured_grouped_gemm : e.measured_gemm;
    if (table.empty()) continue;
    for (const Pass pass : {Pass::kForward, Pass::kBackwardData, Pass::kBackwardWeight}) {
      points_[grouped ? 1 : 0][static_cast<size_t>(pass)] = points(table, grouped, pass, e, grad_dtype);
    }
  }
  dense_level_ = median_dense_residual(points_[0]);
}

std::optional<GemmCalibration> GemmCalibrationTables::calibrate(const Op& op, Pass pass) const {
  const ComputeClass cls = op.cost[static_cast<int>(pass)].compute;
  const bool grouped = cls == ComputeClass::kGroupedGemm;
  if (!usable_ || (!grouped && cls != ComputeClass::kGemm)) return std::nullopt;
  const std::vector<GemmCalibrationPoint>& pts = points_[grouped ? 1 : 0][static_cast<size_t>(pass)];
  if (pts.empty()) return std::nullopt;
  GemmCalibration out;
  const bool bf16 = !op.fp8 && op.format == GemmFormat::kBf16;
  if (!bf16) {
    out.dense_level = dense_level_;
    if (out.dense_level <= 0.0) return std::nullopt;  // no dense level to normalise by
  }
  // Rows per expert is an average that rounds to 0 with fewer routed tokens
  // than experts; an expert that gets a token still runs one row tile.
  const PassShape q = grouped ? grouped_pass_shape(pass, static_cast<double>(op.grouped.num_groups),
                                                   std::max(1.0, static_cast<double>(op.grouped.m)),
                                                   static_cast<double>(op.grouped.n),
                                                   static_cast<double>(op.grouped.k))
                              : dense_pass_shape(op, pass);
  out.residual = interpolate(pts, q);
  return out;
}

std::optional<GemmCalibration> calibrate_gemm(const Op& op, Pass pass, const SystemSpec& system,
                                              const TrainingSpec& training) {
  return GemmCalibrationTables(system, training).calibrate(op, pass);
}

}  // namespace trainsim
