#include "time/attention_efficiency.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trainsim {
namespace {

// Linear in log2(seq_len) between the two bracketing points, clamped at the ends
// (kernel benchmarks are published at powers of two: 512 ... 16K).
double curve_at(const AttentionCurve& curve, double seq_len) {
  const auto& p = curve.points;
  if (p.empty()) return 0.0;
  if (seq_len <= p.front().first) return p.front().second;
  if (seq_len >= p.back().first) return p.back().second;
  for (size_t i = 1; i < p.size(); ++i) {
    if (seq_len <= p[i].first) {
      const double x0 = std::log2(p[i - 1].first), x1 = std::log2(p[i].first);
      const double t = x1 > x0 ? (std::log2(seq_len) - x0) / (x1 - x0) : 0.0;
      return p[i - 1].second + t * (p[i].second - p[i - 1].second);
    }
  }
  return p.back().second;
}

// The curves of the requested masking; the other masking's when none exists.
std::vector<const AttentionCurve*> curves_of(const std::vector<AttentionCurve>& all, bool causal,
                                             bool& exact_mask) {
  std::vector<const AttentionCurve*> out;
  for (const AttentionCurve& c : all) {
    if (c.causal == causal) out.push_back(&c);
  }
  exact_mask = !out.empty();
  if (out.empty()) {
    for (const AttentionCurve& c : all) out.push_back(&c);
  }
  return out;
}

}  // namespace

double attention_table_efficiency(const std::vector<AttentionCurve>& table, int64_t head_dim,
                                  bool causal, double seq_len) {
  bool exact_mask = false;
  const std::vector<const AttentionCurve*> curves = curves_of(table, causal, exact_mask);
  if (curves.empty()) return 0.0;
  // Bracketing head dims: the exact one, else linear between the nearest below
  // and above, clamped to the smallest / largest published.
  const AttentionCurve* below = nullptr;
  const AttentionCurve* above = nullptr;
  for (const AttentionCurve* c : curves) {
    if (c->head_dim <= head_dim && (below == nullptr || c->head_dim > below->head_dim)) below = c;
    if (c->head_dim >= head_dim && (above == nullptr || c->head_dim < above->head_dim)) above = c;
  }
  if (below == nullptr) return curve_at(*above, seq_len);
  if (above == nullptr || above == below) return curve_at(*below, seq_len);
  const double t = static_cast<double>(head_dim - below->head_dim) /
                   static_cast<double>(above->head_dim - below->head_dim);
  return curve_at(*below, seq_len) + t * (curve_at(*above, seq_len) - curve_at(*below, seq_len));
}

double attention_wave_utilization(double tiles, int64_t num_sms) {
  if (num_sms <= 0 || tiles <= 0.0) return 1.0;
  const double sms = static_cast<double>(num_sms);
  return tiles / (std::ceil(tiles / sms) * sms);
}

}  // namespace trainsim
