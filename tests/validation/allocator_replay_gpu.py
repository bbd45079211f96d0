#!/usr/bin/env python3
"""Replays allocation traces through PyTorch's real CUDA caching allocator.

Not run by CI: it needs PyTorch and a CUDA GPU. For each trace file (a JSON
list of [id, size_bytes, is_free] events, or {"events": [...]}) and each
allocator configuration, a fresh Python process sets PYTORCH_CUDA_ALLOC_CONF,
replays the events in order with torch.empty(size, dtype=torch.uint8,
device="cuda") (a free drops the tensor) and reports
torch.cuda.max_memory_allocated, max_memory_reserved and memory_reserved at
the end, plus a few torch.cuda.memory_stats counters. Compare with the
simulated figures that trainsim prints for the same files:

    ctest -R AllocatorTraces --output-on-failure -V     (or)
    build/tests/trainsim_tests --gtest_filter='AllocatorTraces*'
    python3 tests/validation/allocator_replay_gpu.py tests/validation/data/allocator_traces/*.json

Options: --conf adds PYTORCH_CUDA_ALLOC_CONF strings to the default two
("" and "expandable_segments:True"); --capacity-gib caps the allocator with
torch.cuda.set_per_process_memory_fraction (the simulator's capacity_bytes;
PyTorch checks the cap against the segment size it would cudaMalloc, also with
expandable segments); --json prints one JSON object per run instead of a table.
"""
import argparse
import json
import os
import subprocess
import sys

MIB = 1024.0 * 1024.0
DEFAULT_CONFS = ["", "expandable_segments:True"]


def load_events(path):
    with open(path) as f:
        data = json.load(f)
    if isinstance(data, dict):
        data = data["events"]
    return [(int(e[0]), int(e[1]), bool(e[2])) for e in data]


def replay_in_this_process(path, capacity_gib):
    import torch  # imported here: the parent process never touches CUDA

    device = torch.device("cuda")
    torch.cuda.init()
    if capacity_gib:
        total = torch.cuda.get_device_properties(device).total_memory
        torch.cuda.set_per_process_memory_fraction(min(1.0, capacity_gib * 2**30 / total), device)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(device)
    events = load_events(path)
    live = {}
    oom_event = None
    for index, (ident, size, is_free) in enumerate(events):
        if is_free:
            del live[ident]
            continue
        try:
            live[ident] = torch.empty(size, dtype=torch.uint8, device=device)
        except torch.cuda.OutOfMemoryError:
            oom_event = index
            break
    torch.cuda.synchronize(device)
    stats = torch.cuda.memory_stats(device)
    return {
        "trace": os.path.basename(path),
        "conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(device),
        "events": len(events),
        "oom_event": oom_event,
        "max_memory_allocated": torch.cuda.max_memory_allocated(device),
        "max_memory_reserved": torch.cuda.max_memory_reserved(device),
        "memory_allocated_end": torch.cuda.memory_allocated(device),
        "memory_reserved_end": torch.cuda.memory_reserved(device),
        "segments_end": stats.get("segment.all.current", 0),
        "num_alloc_retries": stats.get("num_alloc_retries", 0),
        "num_device_alloc": stats.get("num_device_alloc", 0),
        "num_device_free": stats.get("num_device_free", 0),
    }


def run_child(path, conf, capacity_gib):
    env = dict(os.environ)
    env["PYTORCH_CUDA_ALLOC_CONF"] = conf
    command = [sys.executable, os.path.abspath(__file__), "--child", path]
    if capacity_gib:
        command += ["--capacity-gib", str(capacity_gib)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["exit status %d" % done.returncode]
        return {"trace": os.path.basename(path), "conf": conf, "error": lines[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def print_table(rows):
    header = ("trace", "conf", "max_alloc_MiB", "max_reserved_MiB", "reserved_end_MiB",
              "segments", "retries", "oom_event")
    print(" | ".join(header))
    for r in rows:
        if "error" in r:
            print(f"{r['trace']} | {r['conf'] or '(default)'} | error: {r['error']}")
            continue
        print(" | ".join([
            r["trace"], r["conf"] or "(default)",
            f"{r['max_memory_allocated'] / MIB:.2f}", f"{r['max_memory_reserved'] / MIB:.2f}",
            f"{r['memory_reserved_end'] / MIB:.2f}", str(r["segments_end"]),
            str(r["num_alloc_retries"]), str(r["oom_event"]),
        ]))
    if rows and "torch" in rows[0]:
        print(f"torch {rows[0]['torch']} on {rows[0]['gpu']}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+", help="trace JSON files")
    parser.add_argument("--conf", action="append", default=[], help="extra PYTORCH_CUDA_ALLOC_CONF")
    parser.add_argument("--capacity-gib", type=float, default=0.0)
    parser.add_argument("--json", action="store_true", help="one JSON object per run")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(replay_in_this_process(args.traces[0], args.capacity_gib)))
        return
    rows = [run_child(path, conf, args.capacity_gib)
            for path in args.traces for conf in DEFAULT_CONFS + args.conf]
    if args.json:
        for r in rows:
            print(json.dumps(r))
    else:
        print_table(rows)


if __name__ == "__main__":
    main()
