// The shape model calibrated on a GPU's measured per-shape GEMM tables
// (core/src/time/gemm_calibration.h), on a synthetic system whose shape model
// is flat (no wave quantization, no K roll-off), so every figure below follows
// from the table by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "time/efficiency.h"

namespace trainsim {
namespace {

constexpr double kBf16Plateau = 0.8, kFp8Plateau = 0.7, kSustained = 0.9;

std::string grouped_key(int64_t groups, int64_t m, const char* stage_tail) {
  return "ng=" + std::to_string(groups) + ", M=" + std::to_string(m) +
         ", N=3072, K=4096, dtype=bf16, out_dtype=bf16, main_grad_dtype=fp32, " + stage_tail;
}
constexpr const char* kForwardTail =
    "stage=fwd, grad=False, accumulate=False, use_split_accumulator=False, single_output=True";

SystemSpec system_with_tables() {
  SystemSpec s;
  s.gpu.peak_bf16_flops_per_s = 1e15;
  s.gpu.peak_fp8_flops_per_s = 2e15;
  EfficiencySpec& e = s.efficiency;
  e.gemm[static_cast<size_t>(GemmFormat::kBf16)] = kBf16Plateau;
  e.gemm[static_cast<size_t>(GemmFormat::kFp8)] = kFp8Plateau;
  e.sustained_fraction = kSustained;
  e.num_sms = 1;  // one-element tiles on one SM: every shape fills whole waves
  e.tile_m = 1;
  e.tile_n = 1;
  e.gemm_k_half = 0.0;  // no K roll-off: the model is the plateau for every shape
  // Dense table at half the model (residual 0.5: the table's own level).
  e.measured_gemm["b=1, m=4096, k=4096, n=4096, layout=TN, accumulate=False, out_dtype=bf16"] = 0.4;
  e.measured_gemm["b=1, m=8192, k=4096, n=8192, layout=TN, accumulate=False, out_dtype=bf16"] = 0.4;
  // Grouped: 128 rows per expert at a quarter of the model, 1024 rows at half.
  e.measured_grouped_gemm[grouped_key(64, 128, kForwardTail)] = 0.2;
  e.measured_grouped_gemm[grouped_key(8, 1024, kForwardTail)] = 0.4;
  return s;
}

Op grouped_op(int64_t groups, int64_t m, GemmFormat format) {
  Op op;
  op.kind = OpKind::kGroupedLinear;
  op.format = format;
  op.fp8 = format != GemmFormat::kBf16;
  op.grouped = {groups, m, 3072, 4096};
  for (PassCost& c : op.cost) c.compute = ComputeClass::kGroupedGemm;
  return op;
}

TEST(GemmCalibrationTest, AnExactMeasuredShapeIsTheMeasuredFigure) {
  const EfficiencyLookup e =
      compute_efficiency(grouped_op(64, 128, GemmFormat::kBf16), Pass::kForward, system_with_tables(), {});
  EXPECT_TRUE(e.measured);
  EXPECT_DOUBLE_EQ(e.efficiency, 0.2);
}

// 256 rows per expert lies between the measured 128 and 1024 (log distances
// ln 2 and ln 4): residual (4 x 0.25 + 1 x 0.5) / 5 = 0.3, at the measured
// level (no sustained fraction, like an exact hit).
TEST(GemmCalibrationTest, AShapeBetweenMeasuredOnesInterpolatesTheirResiduals) {
  const EfficiencyLookup e =
      compute_efficiency(grouped_op(32, 256, GemmFormat::kBf16), Pass::kForward, system_with_tables(), {});
  EXPECT_TRUE(e.measured);
  EXPECT_EQ(e.figure, Figure::kMeasuredGroupedGemm);
  EXPECT_NEAR(e.efficiency, kBf16Plateau * 0.3, 1e-12);
  EXPECT_GT(e.efficiency, 0.2);
  EXPECT_LT(e.efficiency, 0.4);
}

// FP8 was not measured: its own plateau (and the sustained fraction) keeps
// the level; the table gives the small-M penalty relative to its dense level
// (residual 0.25 over 0.5).
TEST(GemmCalibrationTest, AnUnmeasuredFormatTakesTheShapeDependenceRelativeToTheDenseLevel) {
  const SystemSpec calibrated = system_with_tables();
  const EfficiencyLookup e =
      compute_efficiency(grouped_op(64, 128, GemmFormat::kFp8), Pass::kForward, calibrated, {});
  EXPECT_FALSE(e.measured);
  EXPECT_EQ(e.calibration_figure, Figure::kMeasuredGroupedGemm);
  EXPECT_NEAR(e.efficiency, kFp8Plateau * (0.25 / 0.5) * kSustained, 1e-12);

  SystemSpec bare = calibrated;
  bare.efficiency.measured_gemm.clear();
  bare.efficiency.measured_grouped_gemm.clear();
  const EfficiencyLookup plain =
      compute_efficiency(grouped_op(64, 128, GemmFormat::kFp8), Pass::kForward, bare, {});
  EXPECT_EQ(plain.calibration_figure, Figure::kCount);
  EXPECT_NEAR(plain.efficiency, kFp8Plateau * kSustained, 1e-12);
}

// Without a dense table there is no level to normalise an unmeasured format by:
// the shape model stands alone.
TEST(GemmCalibrationTest, NoDenseTableLeavesUnmeasuredFormatsToTheShapeModel) {
  SystemSpec s = system_with_tables();
  s.efficiency.measured_gemm.clear();
  const EfficiencyLookup e = compute_efficiency(grouped_op(64, 128, GemmFormat::kFp8), Pass::kForward, s, {});
  EXPECT_EQ(e.calibration_figure, Figure::kCount);
  EXPECT_NEAR(e.efficiency, kFp8Plateau * kSustained, 1e-12);
}

// A system without a shape model (SimuMax's own configs: one flat factor per
// class) prices an unmeasured shape at that factor, as SimuMax does.
TEST(GemmCalibrationTest, WithoutAShapeModelAnUnmeasuredShapeTakesTheFlatFactor) {
  SystemSpec s = system_with_tables();
  s.efficiency.num_sms = 0;
  const EfficiencyLookup hit = compute_efficiency(grouped_op(64, 128, GemmFormat::kBf16), Pass::kForward, s, {});
  EXPECT_DOUBLE_EQ(hit.efficiency, 0.2);
  const EfficiencyLookup miss = compute_efficiency(grouped_op(32, 256, GemmFormat::kBf16), Pass::kForward, s, {});
  EXPECT_FALSE(miss.measured);
  EXPECT_NEAR(miss.efficiency, kBf16Plateau * kSustained, 1e-12);
}

// Another pass has no measured point here: the table does not stand in for it.
TEST(GemmCalibrationTest, APassWithoutMeasuredShapesIsNotCalibrated) {
  const EfficiencyLookup e = compute_efficiency(grouped_op(64, 128, GemmFormat::kBf16),
                                                Pass::kBackwardWeight, system_with_tables(), {});
  EXPECT_FALSE(e.measured);
  EXPECT_EQ(e.calibration_figure, Figure::kCount);
  EXPECT_NEAR(e.efficiency, kBf16Plateau * kSustained, 1e-12);
}

}  // namespace
}  // namespace trainsim
