#!/usr/bin/env python3
"""Evaluates (and calibrates) the GPU presets against published measured runs.

Reads tests/validation/data/published_runs.json, runs every case through the trainsim CLI and
compares the prediction with the measured value under the source's own quantity and FLOP
convention (the same rules as tests/validation/published_runs_test.cpp). With --fit it searches
the named efficiency parameters of one GPU preset to minimise the mean squared log error of the
step time over that GPU's "fit" cases only, and prints fit and held-out errors; the result is
then written into the preset by hand, with the numbers, in its "calibration" note.

Python 3 standard library only; not needed to build or test.

  # errors of every case with the presets as they are
  tests/validation/fit_presets.py --cli build/published/core/trainsim
  # calibrate parameters of one preset on its fit cases (--set fixes others while fitting)
  tests/validation/fit_presets.py --cli build/published/core/trainsim --gpu h100-sxm-80gb \
      --fit gemm,fp8_gemm,memory

The calibration committed in presets/systems (see each preset's notes) was produced with:
  A=attention_forward=1.2,attention_backward=1.0
  --gpu a100-sxm-80gb  --set $A --fit gemm,memory        (gemm_half_size also tried: 0)
  --gpu h100-sxm-80gb  --set $A --fit gemm,fp8_gemm,memory
  B=$A,gemm=0.6345,memory=0.4181                          (carried over from the H100 fit)
  --gpu b200-sxm-180gb --set $B --fit fp8_gemm,fp8_grouped_gemm
  --gpu gb200-nvl72    --set $B --fit fp8_gemm,grouped_gemm,fp8_grouped_gemm
  --gpu gb300-nvl72    --set $B --fit fp8_gemm,grouped_gemm
The CLI embeds the presets at build time: rebuild after editing a preset, then run
`ctest -R Published --verbose` for the numbers the README quotes.
"""
import argparse
import concurrent.futures
import copy
import json
import math
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "published_runs.json")
PRESETS = os.path.join(HERE, "..", "..", "presets")

# Parameter name -> path inside system.efficiency (or system) and search bounds.
PARAMS = {
    "gemm": (("efficiency", "gemm"), 0.3, 1.0),
    "grouped_gemm": (("efficiency", "grouped_gemm"), 0.2, 1.0),
    "fp8_gemm": (("efficiency", "fp8_gemm"), 0.2, 1.0),
    "fp8_grouped_gemm": (("efficiency", "fp8_grouped_gemm"), 0.1, 1.0),
    "attention_forward": (("efficiency", "attention_forward"), 0.2, 2.0),
    "attention_backward": (("efficiency", "attention_backward"), 0.2, 2.0),
    "gemm_half_size": (("efficiency", "gemm_half_size"), 0.0, 2048.0),
    "memory": (("efficiency", "memory", "efficiency"), 0.2, 1.0),
    "memory_latency_us": (("efficiency", "memory", "latency_us"), 0.0, 40.0),
    "inter_node_efficiency": (("inter_node", "efficiency"), 0.3, 1.0),
    "intra_node_efficiency": (("intra_node", "efficiency"), 0.3, 1.0),
    "straggler": (("straggler_coefficient",), 0.0, 0.2),
}


def model_dims(config, cli):
    """The model section as the CLI resolved it (presets expanded)."""
    model = config["model"]
    if isinstance(model, dict) and "preset" not in model:
        return model
    pid = model if isinstance(model, str) else model["preset"]
    with open(os.path.join(PRESETS, "models", pid + ".json")) as f:
        resolved = json.load(f)["model"]
    if isinstance(model, dict):
        resolved = {**resolved, **{k: v for k, v in model.items() if k != "preset"}}
    return resolved


def convention_flops(model, seq_len, sequences, convention):
    """Model FLOPs per step (core/src/model/flops.cpp) for the non-default conventions."""
    h, s, l, v = model["hidden_size"], seq_len, model["num_layers"], model["vocab_size"]
    if convention == "narayanan2021":
        return 96.0 * sequences * s * l * h * h * (1 + s / (6.0 * h) + v / (16.0 * l * h))
    if convention == "korthikanti2022":
        return 72.0 * sequences * l * s * h * h * (1 + s / (6.0 * h) + v / (12.0 * h * l))
    if convention == "megatron_legacy":
        a = model["num_attention_heads"]
        g = model.get("num_kv_heads", a)
        head_dim = model.get("head_dim", h // a)
        glu = 1.5 if model.get("activation", "swiglu") == "swiglu" else 1.0
        ffn = model["ffn_hidden_size"]
        if model.get("moe"):
            moe = model["moe"]
            ffn = moe["expert_ffn_hidden_size"] * moe["top_k"] + \
                moe.get("shared_expert_ffn_hidden_size", 0)
        return 12.0 * sequences * s * l * h * h * (
            (1 + g / a + s / h) * (a * head_dim / h) + ffn / h * glu + v / (2.0 * l * h))
    raise ValueError(convention)


def run_cli(cli, config):
    out = subprocess.run([cli, "estimate", "-"], input=json.dumps(config), capture_output=True,
                         text=True, check=False)
    envelope = json.loads(out.stdout)
    if not envelope.get("ok"):
        raise RuntimeError(json.dumps(envelope.get("errors")))
    return envelope["result"]


def with_layers(config, layers):
    c = copy.deepcopy(config)
    model = c["model"]
    if isinstance(model, str):
        c["model"] = {"preset": model, "num_layers": layers}
    else:
        model["num_layers"] = layers
    return c


def predict(cli, case, system_patch):
    """(predicted, measured, predicted step s, measured-equivalent step s) of one case."""
    config = copy.deepcopy(case["config"])
    merge(config["system"], system_patch)
    m = case["measured"]
    if m["quantity"] == "layer_time_s":
        per_stage = []
        for layers in (1, 2):
            stage = run_cli(cli, with_layers(config, layers))["time"]["stages"][0]
            per_stage.append(stage["forward_per_micro_batch_s"] + stage["backward_per_micro_batch_s"])
        value = per_stage[1] - per_stage[0]
        return value, m["value"], value, m["value"]
    result = run_cli(cli, config)
    step = result["time"]["iteration_s"]
    gpus = config["system"]["num_gpus"]
    tokens = result["throughput"]["tokens_per_step"]
    if m["quantity"] == "iteration_s":
        return step, m["value"], step, m["value"]
    if m["quantity"] == "tokens_per_s_per_gpu":
        return tokens / step / gpus, m["value"], step, tokens / m["value"] / gpus
    if m["quantity"] == "model_tflops_per_gpu":
        model = model_dims(config, cli)
        seq = config["training"]["seq_len"]
        flops = convention_flops(model, seq, tokens / seq, m["flop_convention"])
        return flops / step / gpus / 1e12, m["value"], step, flops / (m["value"] * 1e12) / gpus
    raise ValueError(m["quantity"])


def merge(target, patch):
    for k, v in patch.items():
        if isinstance(v, dict) and isinstance(target.get(k), dict):
            merge(target[k], v)
        else:
            target[k] = v


def patch_for(values):
    patch = {}
    for name, value in values.items():
        path = PARAMS[name][0]
        node = patch
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value
    return patch


def evaluate(cli, cases, values, workers=2):
    patch = patch_for(values)
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        rows = list(pool.map(lambda c: (c, predict(cli, c, patch)), cases))
    return rows


def summarize(rows, label):
    errors = [abs(p / m - 1) for _, (p, m, _, _) in rows]
    if not errors:
        return
    worst = max(rows, key=lambda r: abs(r[1][0] / r[1][1] - 1))
    print("%-10s n=%3d median |err| %5.1f%%  max %5.1f%% (%s)" % (
        label, len(errors), 100 * statistics.median(errors), 100 * max(errors), worst[0]["id"]))


def fit(cli, cases, names, start):
    """Coordinate descent with shrinking steps on log step-time error (robust, derivative free)."""
    values = dict(start)
    def loss(v):
        rows = evaluate(cli, cases, v)
        return sum(math.log(ps / ms) ** 2 for _, (_, _, ps, ms) in rows) / len(rows)
    best = loss(values)
    step = {n: 0.1 * (PARAMS[n][2] - PARAMS[n][1]) for n in names}
    for _ in range(6):
        improved = True
        while improved:
            improved = False
            for n in names:
                for sign in (1, -1):
                    trial = dict(values)
                    trial[n] = min(PARAMS[n][2], max(PARAMS[n][1], values[n] + sign * step[n]))
                    if trial[n] == values[n]:
                        continue
                    value = loss(trial)
                    if value < best - 1e-9:
                        best, values, improved = value, trial, True
                        break
        step = {n: s / 3 for n, s in step.items()}
    return values, best


def current_value(gpu, name):
    with open(os.path.join(PRESETS, "systems", gpu + ".json")) as f:
        node = json.load(f)["system"]
    path = PARAMS[name][0]
    for key in path:
        node = node.get(key, {}) if isinstance(node, dict) else {}
    if node == {}:
        return {"gemm_half_size": 0.0, "straggler": 0.0}.get(name, 1.0) if name not in (
            "fp8_gemm", "fp8_grouped_gemm") else None
    return node


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", required=True, help="path to the built trainsim CLI")
    parser.add_argument("--gpu", help="only these system presets' cases (comma-separated; "
                                      "several GPUs share one set of fitted values)")
    parser.add_argument("--fit", help="comma-separated parameters to calibrate (needs --gpu)")
    parser.add_argument("--set", default="", help="name=value,... overrides to evaluate with")
    parser.add_argument("--verbose", action="store_true", help="one line per case")
    args = parser.parse_args()
    with open(DATA) as f:
        cases = json.load(f)["cases"]
    if args.gpu:
        gpus = args.gpu.split(",")
        cases = [c for c in cases if c["gpu"] in gpus]
    values = {}
    for item in filter(None, args.set.split(",")):
        name, value = item.split("=")
        values[name] = float(value)
    if args.fit:
        if not args.gpu:
            sys.exit("--fit needs --gpu")
        names = args.fit.split(",")
        start = dict(values)
        for n in names:
            if n not in start:
                v = current_value(gpus[0], n)
                if v is None:  # fp8 efficiencies default to the bf16 ones
                    v = current_value(gpus[0], n.replace("fp8_", ""))
                start[n] = v
        fitted, loss = fit(args.cli, [c for c in cases if c["role"] == "fit"], names, start)
        print("fitted:", json.dumps({k: round(v, 4) for k, v in fitted.items()}),
              "rms log error %.4f" % math.sqrt(loss))
        values = fitted
    rows = evaluate(args.cli, cases, values)
    if args.verbose:
        for c, (p, m, ps, ms) in rows:
            print("%-62s %-5s %-24s pred %10.4g meas %10.4g  %+6.1f%%" % (
                c["id"][:62], c["role"][:5], c["source"][:24], p, m, 100 * (p / m - 1)))
    for gpu in sorted({c["gpu"] for c, _ in rows}):
        g = [r for r in rows if r[0]["gpu"] == gpu]
        print("==", gpu)
        summarize([r for r in g if r[0]["role"] == "fit"], "fit")
        summarize([r for r in g if r[0]["role"] == "held_out"], "held-out")
        summarize(g, "all")
    print("== all GPUs")
    summarize(rows, "all")


if __name__ == "__main__":
    main()
