#include "memory/peak_names.h"

namespace trainsim {

std::string describe_op(const ModelPlan& plan, int32_t block_id, int32_t op, int64_t layer,
                        WalkPhase phase) {
  static const char* kPhases[] = {"forward", "backward", "recompute forward", "recompute backward"};
  if (block_id < 0) return "end of forward";
  const Block& block = *plan.blocks[static_cast<size_t>(block_id)];
  std::string name = op < 0 ? "end" : block.ops[static_cast<size_t>(op)].name;
  if (layer >= 0) {
    // A multi-layer block (uniform recompute group): find the layer of the op.
    if (block.num_layers > 1 && op >= 0) {
      int64_t starts = 0;
      for (int32_t i = 1; i <= op; ++i) {
        if (std::string(block.ops[static_cast<size_t>(i)].name) == "input_layernorm") ++starts;
      }
      layer += starts;
    }
    name = "layer " + std::to_string(layer) + " " + name;
  }
  return name + " (" + kPhases[static_cast<int>(phase)] + ")";
}

std::string describe_pass(const TraceLabel& label) {
  if (label.block < 0 && label.micro_batch < 0) {
    switch (label.section) {
      case TraceSection::kSetup: return "setup";
      case TraceSection::kOptimizerStep: return "optimizer step";
      default: return "first pass";
    }
  }
  static const char* kPasses[] = {"F", "B", "W", "B"};
  return std::string(kPasses[static_cast<int>(label.pass)]) + " mb " +
         std::to_string(label.micro_batch) + " chunk " + std::to_string(label.chunk);
}

std::string describe_label(const ModelPlan& plan, const TraceLabel& label) {
  if (label.block < 0) {
    static const char* kSections[] = {"model setup", "first step", "first optimizer step", "step"};
    return std::string(label.buffer) + " (" + kSections[static_cast<int>(label.section)] + ")";
  }
  std::string name = describe_op(plan, label.block, label.op, label.layer, label.phase);
  return name + ", " + describe_pass(label) +
         (label.section == TraceSection::kStep1 ? " of the first step" : "");
}

}  // namespace trainsim
