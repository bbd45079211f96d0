#!/usr/bin/env python3
"""Transcribes the measured per-shape GEMM efficiency tables of a SimuMax system
config into a trainsim system preset (efficiency.measured.gemm / grouped_gemm),
with the provenance entry naming repository, path and commit.

Source: MooreThreads/SimuMax configs/system/*.json, accelerator.op.matmul and
group_matmul "accurate_efficient_factor" (Transformer Engine GEMM and grouped
GEMM kernels of that GPU timed one shape at a time by SimuMax's
simu_tools/efficency_test; efficiency = achieved FLOP/s over the config's
tflops, which is the GPU's dense bf16 peak). Keys are SimuMax's shape keys,
the format trainsim's efficiency lookup builds (core/src/time/efficiency.cpp).

Run manually when the source changes, with a checkout of SimuMax at COMMIT:
  tests/validation/transcribe_simumax_gemm_tables.py SIMUMAX_CONFIG.json REPO_PATH COMMIT PRESET.json
"""
import json
import sys


def main():
    src, repo_path, commit, preset_path = sys.argv[1:5]
    config = json.load(open(src))
    ops = config["accelerator"]["op"]
    preset = json.load(open(preset_path))
    system = preset["system"]
    peak = system["gpu"]["peak_tflops"]["bf16"]
    measured = {}
    for simumax_op, ours in (("matmul", "gemm"), ("group_matmul", "grouped_gemm")):
        op = ops.get(simumax_op, {})
        if op.get("tflops") != peak:
            sys.exit(f"{simumax_op}: SimuMax tflops {op.get('tflops')} is not the preset's bf16 peak {peak}")
        table = op.get("accurate_efficient_factor", {})
        if table:
            measured[ours] = {key: round(value, 4) for key, value in table.items()}
    system["efficiency"]["measured"] = measured
    counts = ", ".join(f"{len(v)} {k}" for k, v in measured.items())
    system["provenance"]["/efficiency/measured"] = {
        "kind": "microbenchmark",
        "source": f"MooreThreads/SimuMax@{commit} {repo_path} accurate_efficient_factor of matmul and "
                  f"group_matmul ({counts} shapes; Transformer Engine kernels timed one shape at a time by "
                  "simu_tools/efficency_test on this GPU; fraction of the dense bf16 peak). Exact shapes use "
                  "the figure; other shapes scale the shape model by the residual of the nearest measured "
                  "shapes (core/src/time/gemm_calibration.h); FP8 formats keep their own plateau and take "
                  "the shape dependence relative to the dense table's median residual",
    }
    with open(preset_path, "w") as out:
        json.dump(preset, out, indent=2, ensure_ascii=False)
        out.write("\n")


if __name__ == "__main__":
    main()
