#!/usr/bin/env python3
"""The worst inputs we could think of, through the CLI, each under a memory
limit and a wall-clock watchdog. Every command must answer with one JSON
envelope (ok, or errors with a path), exit 0 or 2, never an internal error,
a crash or a hang. Memory is held to the bound by a limit (RLIMIT_AS), so the
test does not depend on the machine's load; time is read from the CPU time
each case used (user + system, which other jobs on a loaded machine do not
inflate much), with a generous factor over the 2 s target before it fails
(--cpu-slack), and a wall-clock watchdog far above it. The table it prints
gives each case's CPU time, wall time and peak resident memory.

usage: worst_inputs.py TRAINSIM_BINARY [--memory-mib 512] [--timeout-s 60]
                       [--cpu-target-s 2] [--cpu-slack 3]
                       [--no-memory-limit] [--only NAME]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

BASE_TRAINING = {"seq_len": 4096, "micro_batch_size": 1, "global_batch_size": 64, "tp": 2, "pp": 2}
BASE_SYSTEM = {"preset": "h100-sxm-80gb", "num_gpus": 16}


def config(**overrides):
    doc = {"model": "llama3-8b", "training": dict(BASE_TRAINING), "system": dict(BASE_SYSTEM)}
    doc.update(overrides)
    return json.dumps(doc)


def nested(depth, open_="[", close="]", inner="1"):
    return open_ * depth + inner + close * depth


def nested_objects(depth):
    return '{"a":' * depth + "1" + "}" * depth


def doubling_script(times):
    lines = ["A=x"] + ["A=$A$A"] * times
    return "\n".join(lines) + "\ntorchrun pretrain_gpt.py --num-layers $A\n"


MEGATRON_BASE = (
    "torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
    "--num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 "
    "--micro-batch-size 1 --global-batch-size 64 --bf16 --swiglu --normalization RMSNorm "
    "--position-embedding-type rope --vocab-size 32000 --tokenizer-type NullTokenizer ")

LLAMA_HF = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "vocab_size": 128256, "hidden_act": "silu",
    "tie_word_embeddings": False}


def hf(**overrides):
    doc = dict(LLAMA_HF)
    doc.update(overrides)
    return json.dumps(doc)


def pipeline_limit_config():
    # pp 64 x vpp 2 x 32768 micro-batches = 2^22 passes, the simulation's bound.
    return json.dumps({
        "model": {"preset": "llama3-70b", "num_layers": 128},
        "training": {"seq_len": 1024, "micro_batch_size": 1, "num_micro_batches": 32768,
                     "tp": 1, "pp": 64, "vpp": 2, "dp": 1},
        "system": {"preset": "h100-sxm-80gb"}})


def huge_model_config():
    return json.dumps({
        "model": {"num_layers": 100000, "hidden_size": 65536, "num_attention_heads": 512,
                  "num_kv_heads": 512, "ffn_hidden_size": 262144, "vocab_size": 262144,
                  "activation": "swiglu", "norm": "rmsnorm"},
        "training": {"seq_len": 1048576, "micro_batch_size": 1, "num_micro_batches": 64,
                     "tp": 8, "pp": 100, "cp": 8, "dp": 125, "sequence_parallel": True},
        "system": {"preset": "h100-sxm-80gb"}})


# (name, command args, stdin text or None, expectation)
# expectation: "ok", "error", or "error:<substring of the first error's message or path>".
def cases():
    big_key = "k" * (3 << 20)  # the longest that fits the 4 MiB document bound
    return [
        ("deep_arrays_in_model", ["estimate", "-"], config(model=None).replace("null", nested(150000)), "error:nesting deeper"),
        ("deep_objects_in_training", ["estimate", "-"],
         '{"model":"llama3-8b","training":' + nested_objects(150000) + ',"system":"h100-sxm-80gb"}', "error:nesting deeper"),
        ("deep_arrays_in_search", ["search", "-"],
         '{"model":"llama3-8b","system":"h100-sxm-80gb","num_gpus":8,"global_batch_size":32,"seq_len":4096,"training":'
         + nested(150000) + "}", "error:nesting deeper"),
        ("deep_arrays_in_whatif", ["whatif", "-"], config(whatif={"factors": None}).replace("null", nested(150000)), "error:nesting deeper"),
        ("deep_hf", ["import", "hf", "-"], '{"a":' + nested(150000) + "}", "error:nesting deeper"),
        ("recompute_modules_1000_duplicates", ["estimate", "-"],
         config(training=dict(BASE_TRAINING, recompute={"granularity": "selective", "modules": ["core_attn"] * 1000})),
         "error:duplicate module"),
        ("recompute_modules_10000_duplicates", ["estimate", "-"],
         config(training=dict(BASE_TRAINING, recompute={"granularity": "selective", "modules": ["core_attn"] * 10000})),
         "error:duplicate module"),
        ("unknown_key_3mib", ["estimate", "-"], config(**{big_key: 1}), "error:unknown key"),
        ("unknown_keys_80k", ["estimate", "-"],
         json.dumps({"model": "llama3-8b", "training": dict(BASE_TRAINING, **{"key_%06d_abcdefghijklmnopqrstuvwxyz" % i: 1 for i in range(80000)}),
                     "system": BASE_SYSTEM}), "error:unknown key"),
        ("duplicate_keys_100k", ["estimate", "-"], "{" + ",".join(['"model":"llama3-8b"'] * 100000) + "}", "error:duplicate key"),
        ("document_over_4mib", ["estimate", "-"], config(name=" " * (5 << 20)), "error:at most 4194304 bytes"),
        ("file_over_16mib", ["estimate", "-"], " " * (17 << 20), "error:larger than 16 MiB"),
        ("empty_arrays_4mib", ["estimate", "-"], '{"x":[' + ",".join(["[]"] * ((4 << 20) // 3 - 10)) + "]}", "error"),
        ("small_objects_4mib", ["estimate", "-"], '{"x":[' + ",".join(["{}"] * ((4 << 20) // 3 - 10)) + "]}", "error"),
        ("keys_4mib", ["estimate", "-"], '{"model":{' + ",".join('"%07d":0' % i for i in range((4 << 20) // 12)) + "}}", "error"),
        ("name_string_4mib", ["estimate", "-"], config(name="n" * ((4 << 20) - 300)), "ok"),
        ("integer_2_pow_64", ["estimate", "-"], config(training=dict(BASE_TRAINING, tp=18446744073709551615)), "error:beyond the 64-bit range"),
        ("nul_then_text", ["estimate", "-"], config() + "\0" + "garbage", "error:NUL byte"),
        ("utf16", ["estimate", "-"], None, "error:UTF-16"),
        ("pipeline_pass_limit", ["estimate", "-"], pipeline_limit_config(), "ok"),
        ("hundred_thousand_layers_million_tokens", ["estimate", "-"], huge_model_config(), "ok"),
        ("export_csv_pipeline_limit", ["export", "csv", "-"], pipeline_limit_config(), "ok"),
        ("export_megatron_huge", ["export", "megatron", "-"], huge_model_config(), "ok"),
        ("whatif_pipeline_limit", ["whatif", "-"], pipeline_limit_config(), "any"),
        ("whatif_1000_factors", ["whatif", "-"], config(whatif={"factors": [1.5] * 1000}), "error:at most 32 factors"),
        ("whatif_10000_figures", ["whatif", "-"], config(whatif={"figures": ["hbm_bandwidth"] * 10000}), "error:duplicate figure"),
        ("megatron_doubling_22", ["import", "megatron", "-"], doubling_script(22), "error:grows beyond"),
        ("megatron_doubling_60", ["import", "megatron", "-"], doubling_script(60), "error:grows beyond"),
        ("megatron_script_over_1mib", ["import", "megatron", "-"], MEGATRON_BASE + "#" * (2 << 20), "error:at most 1048576 bytes"),
        ("megatron_50k_unknown_flags", ["import", "megatron", "-"],
         MEGATRON_BASE + " ".join("--flag-%d %d" % (i, i) for i in range(50000)), "ok"),
        ("megatron_100k_lines_append", ["import", "megatron", "-"],
         "A=--bf16\n" + 'A="$A --x"\n' * 60000 + MEGATRON_BASE + "$A\n", "any"),
        ("megatron_nested_if_10000", ["import", "megatron", "-"], "if true; then\n" * 10000 + MEGATRON_BASE + "\n" + "fi\n" * 10000, "error:nested deeper"),
        ("megatron_array_150k", ["import", "megatron", "-"],
         "ARGS=(\n" + "--x 1\n" * 150000 + ")\n" + MEGATRON_BASE + '"${ARGS[@]}" "${ARGS[@]}" "${ARGS[@]}"\n', "any"),
        ("megatron_array_append_50k", ["import", "megatron", "-"],
         "A=()\n" + "A+=(--x)\n" * 50000 + MEGATRON_BASE + '"${A[@]}"\n', "any"),
        ("megatron_and_or_chain_100k", ["import", "megatron", "-"],
         "true && " * 100000 + "X=1\n" + MEGATRON_BASE + "\n", "ok"),
        ("megatron_heredocs", ["import", "megatron", "-"], ("cat <<EOF\n--num-layers 7\nEOF\n" * 20000) + MEGATRON_BASE, "ok"),
        ("hf_layer_types_100k", ["import", "hf", "-"],
         json.dumps(dict(LLAMA_HF, model_type="gemma2", architectures=None, hidden_act="gelu_pytorch_tanh", num_hidden_layers=100000,
                         layer_types=["sliding_attention", "full_attention"] * 50000, sliding_window=4096)), "ok"),
        ("hf_mlp_only_layers_900k", ["import", "hf", "-"],
         json.dumps(dict(LLAMA_HF, model_type="qwen3_moe", architectures=None, num_experts=8, num_experts_per_tok=2,
                         moe_intermediate_size=512, mlp_only_layers=list(range(31)) * 28000)), "any"),
        ("simumax_duplicate_keys", ["import", "simumax", "--model", "@model", "--strategy", "@strategy"], None, "error:duplicate key"),
        ("schema", ["schema"], None, "ok"),
        ("presets", ["presets"], None, "ok"),
    ]


def special_input(name, tmp):
    if name == "utf16":
        return config().encode("utf-16")
    if name == "simumax_duplicate_keys":
        model = os.path.join(tmp, "model.json")
        strategy = os.path.join(tmp, "strategy.json")
        with open(model, "w") as f:
            f.write('{"hidden_size":1,' + ",".join(['"layer_num":2'] * 100000) + "}")
        with open(strategy, "w") as f:
            f.write('{"seq_len":4096,"micro_batch_size":1,"micro_batch_num":1}')
        return {"@model": model, "@strategy": strategy}
    return None


def launch(memory_mib, timeout_s, result_path, command):
    """Launcher mode, a fresh small process: runs `command` (stdin/stdout/stderr
    inherited) under the address-space limit and reports its exit, wall time
    and own peak RSS. A child forked from the big generating process would
    report that process's peak as its own (Linux copies the high-water mark)."""
    def limit():
        if memory_mib:
            size = memory_mib << 20
            resource.setrlimit(resource.RLIMIT_AS, (size, size))
    start = time.monotonic()
    proc = subprocess.Popen(command, preexec_fn=limit)
    timed_out = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > timeout_s:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            timed_out = True
            break
        time.sleep(0.005)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    with open(result_path, "w") as f:
        json.dump({"rc": None if timed_out else proc.returncode, "wall_s": time.monotonic() - start,
                   "cpu_s": usage.ru_utime + usage.ru_stime, "maxrss_kib": usage.ru_maxrss}, f)
    return 0


def run(binary, args, data, memory_mib, timeout_s, tmp):
    """Runs one case: (exit code or None on timeout, stdout, stderr, wall s, CPU s, peak RSS KiB)."""
    paths = [os.path.join(tmp, name) for name in ("stdin", "stdout", "stderr", "result.json")]
    with open(paths[0], "wb") as f:
        f.write(data)
    with open(paths[0], "rb") as fin, open(paths[1], "wb") as fout, open(paths[2], "wb") as ferr:
        subprocess.run([sys.executable, os.path.abspath(__file__), "--launch", str(memory_mib),
                        str(timeout_s), paths[3], binary] + args,
                       stdin=fin, stdout=fout, stderr=ferr, check=True)
    with open(paths[3]) as f:
        result = json.load(f)
    with open(paths[1], "rb") as f:
        out = f.read()
    with open(paths[2], "rb") as f:
        err = f.read()
    return result["rc"], out, err, result["wall_s"], result["cpu_s"], result["maxrss_kib"]


def check(name, expect, rc, out):
    if rc is None:
        return "timed out"
    if rc not in (0, 2):
        return "exit %d (want 0 or 2)" % rc
    try:
        envelope = json.loads(out)
    except ValueError as error:
        return "stdout is not one JSON envelope (%s): %r" % (error, out[:200])
    if envelope.get("internal"):
        return "internal error: %r" % out[:300]
    if envelope.get("ok") != (rc == 0):
        return "exit %d disagrees with ok=%r" % (rc, envelope.get("ok"))
    if not envelope["ok"]:
        errors = envelope.get("errors", [])
        if not errors or len(errors) > 101:
            return "%d errors (want 1 to 101)" % len(errors)
        for error in errors:
            if not isinstance(error.get("path"), str) or not error.get("message"):
                return "error without a path or message: %r" % error
            if len(error["path"]) > 300 or len(error["message"]) > 2100:
                return "an error echoes too much (%d, %d chars)" % (len(error["path"]), len(error["message"]))
    if expect == "any":
        return ""
    if expect == "ok" and not envelope["ok"]:
        return "want ok, got %r" % out[:300]
    if expect.startswith("error"):
        if envelope["ok"]:
            return "want an error, got ok"
        fragment = expect[len("error:"):] if ":" in expect else ""
        first = envelope["errors"][0]
        if fragment and fragment not in first["message"] and fragment not in first["path"]:
            return "first error %r lacks %r" % (first, fragment)
    return ""


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--launch":
        return launch(int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5:])
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--memory-mib", type=int, default=512)
    parser.add_argument("--timeout-s", type=float, default=60.0)
    parser.add_argument("--cpu-target-s", type=float, default=2.0)
    parser.add_argument("--cpu-slack", type=float, default=3.0)
    parser.add_argument("--no-memory-limit", action="store_true")
    parser.add_argument("--only")
    options = parser.parse_args()
    memory = 0 if options.no_memory_limit else options.memory_mib
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        print("%-40s %6s %7s %8s %9s  %s" % ("case", "exit", "cpu s", "wall s", "peak MiB", "result"))
        slowest = 0.0
        for name, args, text, expect in cases():
            if options.only and name != options.only:
                continue
            data = text.encode() if isinstance(text, str) else b""
            special = special_input(name, tmp)
            if isinstance(special, bytes):
                data = special
            elif isinstance(special, dict):
                args = [special.get(a, a) for a in args]
            rc, out, err, wall, cpu, rss_kib = run(options.binary, args, data, memory, options.timeout_s, tmp)
            problem = check(name, expect, rc, out)
            if not problem and cpu > options.cpu_target_s * options.cpu_slack:
                problem = "%.2f s of CPU time, more than %.0f x the %.1f s target" % (
                    cpu, options.cpu_slack, options.cpu_target_s)
            slowest = max(slowest, cpu)
            note = "" if cpu <= options.cpu_target_s else " (over the %.1f s target)" % options.cpu_target_s
            print("%-40s %6s %7.2f %8.2f %9.1f  %s%s" % (name, rc, cpu, wall, rss_kib / 1024.0,
                                                          problem or "ok", note))
            if problem:
                failures.append("%s: %s%s" % (name, problem, (" stderr: " + err.decode(errors="replace")[:300]) if err else ""))
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        return 1
    print("\nall worst inputs answered; the slowest used %.2f s of CPU time%s" % (
        slowest, ", each within %d MiB of address space" % memory if memory else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
