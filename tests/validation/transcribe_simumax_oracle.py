#!/usr/bin/env python3
"""Transcribes SimuMax's oracle predictions into trainsim's own validation data.

Source: SimuMax v1.2 (MooreThreads/SimuMax, commit 4dcaae5) run over a grid of
configurations on its a100_pcie system (a differential-testing oracle; SimuMax
is within ~1% of real Megatron-LM memory). The input file is the project's
shared validation set (simumax_a100_oracle.json); the output keeps, per case
that SimuMax completed, its SimuMax model/strategy inputs (the format
`trainsim import simumax` reads) and the predicted per-stage memory and time.

Run manually when the source changes:
  tests/validation/transcribe_simumax_oracle.py SRC.json > tests/validation/data/simumax_a100_oracle.json
"""
import json
import sys

GIB = 2**30
MEMORY_FIELDS = {
    "peak_alloc_GiB": "peak_bytes",
    "dense_weight_GiB": "dense_weight_bytes",
    "dense_grad_GiB": "dense_grad_bytes",
    "dense_optimizer_state_GiB": "dense_optimizer_bytes",
    "moe_weight_GiB": "moe_weight_bytes",
    "moe_grad_GiB": "moe_grad_bytes",
    "moe_optimizer_state_GiB": "moe_optimizer_bytes",
    "te_dummy_wgrad_GiB": "te_dummy_wgrad_bytes",
    "peak_activation_in_1F1B_GiB": "peak_activation_bytes",
}


def stage_memory(stage):
    out = {new: round(stage[old] * GIB) for old, new in MEMORY_FIELDS.items() if old in stage}
    out["cached_micro_batch_num"] = stage.get("cached_micro_batch_num")
    out["peak_path"] = stage.get("peak_path")
    return out


def stage_time(breakdown, schedule):
    return {
        "fwd_compute_s": breakdown["fwd_compute_ms"] / 1e3,
        "bwd_compute_s": breakdown["bwd_compute_ms"] / 1e3,
        "recompute_s": breakdown["recompute_ms"] / 1e3,
        "optimizer_s": breakdown["optimizer_ms"] / 1e3,
        "intra_comm_exposed_s": breakdown["intra_comm_exposed_ms(tp+cp+ep+etp)"] / 1e3,
        "pp_comm_exposed_s": breakdown["pp_comm_exposed_ms"] / 1e3,
        "dp_comm_exposed_s": breakdown["dp_comm_exposed_ms"] / 1e3,
        "bubble_s": schedule["bubble_ms"] / 1e3 if schedule else None,
    }


def transcribe(case):
    model = dict(case["model_config"])
    for key in ("make_vocab_size_divisible_by",):
        if key in case.get("model_overrides", {}):
            model[key] = case["model_overrides"][key]
    out = {
        "id": case["id"],
        "recompute_preset": case.get("recompute_preset"),
        "simumax_model": model,
        "simumax_strategy": case["strategy_config"],
        "memory": {k: stage_memory(v) for k, v in case["memory"]["per_stage"].items()},
    }
    time = case.get("time") or {}
    if "iteration_ms" in time:
        schedules = time.get("per_stage_schedule", {})
        out["time"] = {
            "iteration_s": time["iteration_ms"] / 1e3,
            "tflops_per_gpu": time["tflops_per_gpu"],
            "mfu": time["mfu"],
            "stages": {
                k: stage_time(v, schedules.get(k + "_chunk"))
                for k, v in time["breakdown_per_iter"].items()
            },
        }
    return out


def main():
    src = json.load(open(sys.argv[1]))
    cases = [transcribe(c) for c in src["cases"] if c["status"] in ("ok", "partial") and c.get("memory")]
    json.dump(
        {
            "source": "SimuMax v1.2 (MooreThreads/SimuMax @4dcaae5) predictions on its a100_pcie system; "
            "transcribed by tests/validation/transcribe_simumax_oracle.py",
            "units": "bytes and seconds",
            "cases": cases,
        },
        sys.stdout,
        indent=1,
        sort_keys=True,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
