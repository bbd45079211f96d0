#!/usr/bin/env python3
"""Writes the seed corpora and the libFuzzer dictionary of the fuzz targets.

  make_seeds.py OUT_DIR [--cli BUILD/core/trainsim] [--all-systems]

OUT_DIR/<target>/ gets one file per seed, OUT_DIR/trainsim.dict the JSON keys
and enum strings. Seeds for estimate_fuzz: every model preset under three
parallel strategies valid by construction (dense, GQA, MLA, MoE; some with a
sliding window and MTP layers;
tp/pp/vpp/cp/ep/sp, recompute, ZeRO, dtypes) on the system presets in rotation
(--all-systems: on every one of them), every bad input pinned in
tests/schema/config_errors_test.cpp (merge patches of the base config in
tests/test_util.h), the web smoke config and, with --cli, SimuMax oracle cases
converted by `trainsim import simumax`. Seeds for simumax_import_fuzz: every
third case of tests/validation/data/simumax_a100_oracle.json (--all-systems:
every case), with and without a SimuMax system file. Seeds for hf_import_fuzz
and megatron_import_fuzz: tests/data/hf/*.json and tests/data/megatron/*.sh,
plus a config.json and a pretrain_gpt.py command line per dense model preset
(OUT_DIR/megatron_import_fuzz.dict holds the flag names). Inputs of several documents
are joined by "\\n=====\\n" (tests/fuzz/fuzz_support.h).
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEPARATOR = "\n=====\n"

# A SimuMax system file (simumax/configs/system/*.json layout) with the fields
# trainsim's importer reads; values are A100-like.
SIMUMAX_SYSTEM = {
    "sys_name": "a100_like",
    "num_per_node": 8,
    "accelerator": {
        "mode": "roofline",
        "mem_gbs": 80,
        "op": {
            "default": {"tflops": 312, "efficient_factor": 0.75},
            "matmul": {"tflops": 312, "efficient_factor": 0.75,
                       "accurate_efficient_factor": {"b=1, m=4096, k=4096, n=4096, layout=TN": 0.8}},
            "sdp_fwd": {"efficient_factor": 0.7},
            "sdp_bwd": {"efficient_factor": 0.6},
            "fp8_matmul": {"tflops": 624, "efficient_factor": 0.6},
        },
        "bandwidth": {
            "default": {"gbps": 1900, "efficient_factor": 0.9, "latency_us": 5},
            "permute_fwd": {"gbps": 1500, "efficient_factor": 0.8, "latency_us": 8},
            "ce": {"gbps": 1900, "efficient_factor": 0.8, "latency_us": 40},
        },
    },
    "networks": {
        "high_intra_node": {
            "bandwidth": {"gbps": 300, "latency_us": 3, "efficient_factor": 0.8},
            "op": {"all_reduce": {"efficient_factor": 0.7, "latency_us": 10},
                   "all2all": {"efficient_factor": 0.5}},
        },
        "inter_node": {"bandwidth": {"gbps": 100, "latency_us": 5, "efficient_factor": 0.8}},
    },
}


def simumax_pcie_system():
    system = json.loads(json.dumps(SIMUMAX_SYSTEM))
    networks = system["networks"]
    del networks["high_intra_node"]
    networks["intra_with_pcie"] = True
    for size, gbps in (("2x", 24), ("4x", 12), ("8x", 10)):
        networks["intra_node_pcie_" + size] = {
            "bandwidth": {"gbps": gbps, "latency_us": 10},
            "op": {"all_gather": {"dp_fixed_bw": {"2": gbps, "4": gbps * 0.9}},
                   "reduce_scatter": {"dp_fixed_bw": {"8": gbps * 0.8}}}}
    return system


def divisors(n, limit):
    return [d for d in range(1, limit + 1) if n % d == 0]


def largest(candidates, ok):
    good = [c for c in candidates if ok(c)]
    return max(good) if good else 1


def strategies(model):
    """Three strategies valid for `model` by construction."""
    heads = model["num_attention_heads"]
    kv = model.get("num_kv_heads", heads)
    mla = "mla" in model
    moe = model.get("moe")
    layers = model["num_layers"]
    widths = [model["ffn_hidden_size"]]
    if moe and moe.get("shared_expert_ffn_hidden_size", 0) > 0:
        widths.append(moe["shared_expert_ffn_hidden_size"])

    def tp_ok(tp):
        return heads % tp == 0 and (mla or kv % tp == 0) and all(w % tp == 0 for w in widths)

    tp = largest([1, 2, 4, 8], tp_ok)
    pp = largest([1, 2, 4], lambda p: layers % p == 0)
    out = []
    # 1. One GPU, nothing split.
    out.append(({"seq_len": 2048, "micro_batch_size": 1, "global_batch_size": 8}, 1))
    # 2. tp x pp x dp=2 with sequence parallelism, full recompute, ZeRO-1.
    dp = 2
    t = {"seq_len": 4096, "micro_batch_size": 1, "global_batch_size": 2 * dp * 4, "tp": tp, "pp": pp,
         "dp": dp, "sequence_parallel": tp > 1, "zero_stage": 1,
         "recompute": {"granularity": "full", "method": "block", "num_layers": 1}}
    if moe:
        t["ep"] = largest(divisors(moe["num_experts"], 64), lambda e: (tp * dp) % e == 0)
    out.append((t, tp * pp * dp))
    # 3. Interleaved pipeline, context parallelism, selective recompute, ZeRO-3, fp8.
    vpp = 2 if pp > 1 and layers % (pp * 2) == 0 else 1
    cp = 2
    a2a = heads % (tp * cp) == 0 and (mla or kv % (tp * cp) == 0)
    dp = 4
    t = {"seq_len": 8192, "micro_batch_size": 2, "num_micro_batches": 2 * pp, "tp": tp, "pp": pp,
         "vpp": vpp, "cp": cp, "dp": dp, "sequence_parallel": tp > 1, "zero_stage": 3,
         "dtype": "fp8", "cp_comm_type": "a2a" if a2a else "p2p",
         "recompute": {"granularity": "selective", "modules": ["core_attn"]}}
    if moe:
        t["ep"] = largest(divisors(moe["num_experts"], 64), lambda e: (tp * cp * dp) % e == 0)
        t["recompute"]["modules"].append("moe_act")
        t["moe_capacity_factor"] = 1.25
        t["moe_pad_to_capacity"] = True
    if vpp == 1:
        del t["vpp"]
    out.append((t, tp * pp * cp * dp))
    return out


def preset_ids(kind):
    return sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(ROOT, "presets", kind, "*.json")))


def preset_config_seeds(all_systems):
    seeds = []
    systems = preset_ids("systems")
    for i, model_id in enumerate(preset_ids("models")):
        with open(os.path.join(ROOT, "presets", "models", model_id + ".json")) as f:
            model = json.load(f)["model"]
        for j, (training, gpus) in enumerate(strategies(model)):
            # Every system comes up; all of them x every model would slow the fuzzer's start.
            system_id = systems[(i + j) % len(systems)] if not all_systems else None
            for system in [system_id] if system_id else systems:
                config = {"model": model_id, "training": training,
                          "system": {"preset": system, "num_gpus": gpus}}
                if (i + j) % 3 == 0:  # some with the model written out in full
                    config["model"] = model
                elif (i + j) % 3 == 1:  # some with a sliding window and MTP layers
                    config["model"] = {"preset": model_id, "sliding_window_tokens": 1024,
                                       "full_attention_every_n_layers": 1 + j, "mtp_num_layers": j % 2}
                seeds.append(("preset-%s-%s-%d" % (model_id, system, j), config))
    return seeds


def bad_input_seeds():
    with open(os.path.join(ROOT, "tests", "test_util.h")) as f:
        base = json.loads(re.search(r'base_config\(\) \{\s*return nlohmann::json::parse\(R"\((.*?)\)"\);',
                                    f.read(), re.S).group(1))
    with open(os.path.join(ROOT, "tests", "schema", "config_errors_test.cpp")) as f:
        text = f.read()
    seeds = []
    for name, patch in re.findall(r'\{"(\w+)",\s*R"\((.*?)\)"', text, re.S):
        try:
            seeds.append(("bad-" + name, merge_patch(json.loads(json.dumps(base)), json.loads(patch))))
        except json.JSONDecodeError:
            continue
    seeds.append(("base", base))
    return seeds


def hf_seeds(models):
    """tests/data/hf/*.json, and a llama-style config.json for every dense preset."""
    seeds = [(os.path.basename(p)[:-5], open(p).read())
             for p in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "hf", "*.json")))]
    for model_id, m in models:
        if "moe" in m or "mla" in m:
            continue
        config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                  "hidden_size": m["hidden_size"], "intermediate_size": m["ffn_hidden_size"],
                  "num_attention_heads": m["num_attention_heads"],
                  "num_key_value_heads": m.get("num_key_value_heads", m.get("num_kv_heads", m["num_attention_heads"])),
                  "num_hidden_layers": m["num_layers"], "vocab_size": m["vocab_size"],
                  "tie_word_embeddings": m.get("tie_embeddings", False), "hidden_act": "silu"}
        seeds.append(("preset-" + model_id, json.dumps(config, indent=1)))
    return seeds


def megatron_seeds(models):
    """tests/data/megatron/*.sh, and a pretrain_gpt.py command line per dense preset."""
    seeds = [(os.path.basename(p)[:-3], open(p).read())
             for p in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "megatron", "*.sh")))]
    for i, (model_id, m) in enumerate(models):
        if "moe" in m or "mla" in m:
            continue
        training, gpus = strategies(m)[1]
        args = ["torchrun --nproc_per_node 8 pretrain_gpt.py", "--num-layers", m["num_layers"],
                "--hidden-size", m["hidden_size"], "--ffn-hidden-size", m["ffn_hidden_size"],
                "--num-attention-heads", m["num_attention_heads"], "--group-query-attention",
                "--num-query-groups", m.get("num_kv_heads", m["num_attention_heads"]),
                "--vocab-size", m["vocab_size"], "--seq-length", training["seq_len"],
                "--micro-batch-size", training["micro_batch_size"],
                "--global-batch-size", training["global_batch_size"],
                "--tensor-model-parallel-size", training["tp"],
                "--pipeline-model-parallel-size", training["pp"], "--swiglu", "--bf16",
                "--use-distributed-optimizer", "--recompute-granularity", "full",
                "--recompute-method", "block", "--recompute-num-layers", 1]
        if training["sequence_parallel"]:
            args.append("--sequence-parallel")
        lines, i = [args[0]], 1
        while i < len(args):  # a flag and its value on one line
            has_value = i + 1 < len(args) and not str(args[i + 1]).startswith("--")
            lines.append("%s %s" % (args[i], args[i + 1]) if has_value else args[i])
            i += 2 if has_value else 1
        text = " \\\n    ".join(lines) + "\n"
        system = preset_ids("systems")[i % len(preset_ids("systems"))]
        seeds.append(("preset-" + model_id, text + SEPARATOR + system))
    return seeds


def megatron_dictionary():
    with open(os.path.join(ROOT, "core", "src", "interop", "megatron", "megatron_flags.cpp")) as f:
        flags = set(re.findall(r'"(--[a-z0-9-]+)"', f.read()))
    return sorted(flags) + ["=", "\\\n", "${", "}", "$(", ")", "'", '"', "#", ";", "&&", "(", "export ",
                            "torchrun ", "pretrain_gpt.py", "bf16", "fp8", "full", "selective", "block"]


def merge_patch(target, patch):  # RFC 7396
    if not isinstance(patch, dict):
        return patch
    if not isinstance(target, dict):
        target = {}
    for key, value in patch.items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = merge_patch(target.get(key), value)
    return target


def simumax_cases():
    with open(os.path.join(ROOT, "tests", "validation", "data", "simumax_a100_oracle.json")) as f:
        return json.load(f)["cases"]


def write(directory, name, text):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "w") as f:
        f.write(text)


def collect_strings(value, out):
    if isinstance(value, dict):
        for key, item in value.items():
            out.add(key)
            collect_strings(item, out)
    elif isinstance(value, list):
        for item in value:
            collect_strings(item, out)
    elif isinstance(value, str) and len(value) < 40:
        out.add(value)


def dict_entry(word):
    """One libFuzzer dictionary line: the word in quotes, escaped with \\, \\" and \\xNN."""
    out = []
    for byte in word.encode():
        c = chr(byte)
        out.append("\\" + c if c in '\\"' else c if 32 <= byte < 127 else "\\x%02X" % byte)
    return '"' + "".join(out) + '"'


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--cli", help="native trainsim CLI, to convert SimuMax cases into configs")
    parser.add_argument("--all-systems", action="store_true",
                        help="every model on every system (default: systems in rotation)")
    args = parser.parse_args()
    strings = set()
    estimate = preset_config_seeds(args.all_systems) + bad_input_seeds()
    with open(os.path.join(ROOT, "tests", "wasm", "smoke_config.json")) as f:
        estimate.append(("wasm-smoke", json.load(f)))
    cases = simumax_cases()
    systems = [("none", None), ("nvlink", SIMUMAX_SYSTEM), ("pcie", simumax_pcie_system())]
    cases = cases if args.all_systems else cases[::3]  # a third is plenty to start from
    for i, case in enumerate(cases):
        name, system = systems[i % len(systems)]
        docs = [json.dumps(case["simumax_model"]), json.dumps(case["simumax_strategy"])]
        if system is not None:
            docs.append(json.dumps(system))
        write(os.path.join(args.out, "simumax_import_fuzz"), "case-%s-%s" % (case["id"], name),
              SEPARATOR.join(docs))
        for doc in (case["simumax_model"], case["simumax_strategy"], system):
            collect_strings(doc, strings)
        if args.cli and i % 4 == 0:
            converted = convert_with_cli(args.cli, case, system, args.out)
            if converted is not None:
                estimate.append(("simumax-%s-%s" % (case["id"], name), converted))
    for name, config in estimate:
        write(os.path.join(args.out, "estimate_fuzz"), name + ".json", json.dumps(config))
        collect_strings(config, strings)
    models = []
    for model_id in preset_ids("models"):
        with open(os.path.join(ROOT, "presets", "models", model_id + ".json")) as f:
            models.append((model_id, json.load(f)["model"]))
    hf = hf_seeds(models)
    for name, text in hf:
        write(os.path.join(args.out, "hf_import_fuzz"), name + ".json", text)
        collect_strings(json.loads(text), strings)
    megatron = megatron_seeds(models)
    for name, text in megatron:
        write(os.path.join(args.out, "megatron_import_fuzz"), name + ".sh", text)
    with open(os.path.join(args.out, "megatron_import_fuzz.dict"), "w") as f:
        for word in megatron_dictionary():
            f.write(dict_entry(word) + "\n")
    strings.update(["true", "false", "null"])
    with open(os.path.join(args.out, "trainsim.dict"), "w") as f:
        for word in sorted(strings):
            f.write(dict_entry(json.dumps(word)) + "\n")  # JSON string tokens, quotes included
    print("seeds: estimate_fuzz %d, simumax_import_fuzz %d, hf_import_fuzz %d, megatron_import_fuzz %d;"
          " dictionary %d entries" % (len(estimate), len(cases), len(hf), len(megatron), len(strings)))


def convert_with_cli(cli, case, system, out):
    paths = []
    for kind, doc in (("model", case["simumax_model"]), ("strategy", case["simumax_strategy"]),
                      ("system", system)):
        if doc is None:
            continue
        path = os.path.join(out, "tmp-%s.json" % kind)
        with open(path, "w") as f:
            json.dump(doc, f)
        paths += ["--" + kind, path]
    result = subprocess.run([cli, "import", "simumax"] + paths, capture_output=True, text=True)
    for i in range(1, len(paths), 2):
        os.remove(paths[i])
    try:
        envelope = json.loads(result.stdout)
    except json.JSONDecodeError:
        return None
    return envelope["result"]["config"] if envelope.get("ok") else None


if __name__ == "__main__":
    sys.exit(main())
