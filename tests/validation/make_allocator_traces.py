#!/usr/bin/env python3
"""Writes the synthetic allocation traces in data/allocator_traces/ (deterministic).

Each trace is a JSON list of [id, size_bytes, is_free] events, the format read by
allocator_replay_gpu.py (real PyTorch on a GPU) and allocator_traces_test.cpp
(trainsim's caching-allocator replay). Sizes stay small enough (peak < 4 GiB)
for any CUDA GPU.

    python3 tests/validation/make_allocator_traces.py
"""
import json
import os
import random

MIB = 1024 * 1024
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data", "allocator_traces")


class Trace:
    def __init__(self):
        self.events = []
        self.next_id = 0

    def alloc(self, size):
        self.next_id += 1
        self.events.append([self.next_id, int(size), False])
        return self.next_id

    def free(self, ident):
        self.events.append([ident, 0, True])


def growing_sequence():
    """Variable-length batches: each iteration stores per-layer activations
    sized by a sequence length that grows a little, then frees them. Cached
    segments sized for the previous length are slightly too small: the
    fragmentation case expandable segments target (Note [Expandable Segments])."""
    t = Trace()
    hidden = 2048
    for it in range(12):
        seq = 1024 + 96 * it
        stored = []
        for _layer in range(8):
            stored.append(t.alloc(seq * hidden * 2))  # bf16 hidden states
            stored.append(t.alloc(seq * hidden * 4 * 2))  # MLP activation
            tmp = t.alloc(seq * hidden * 2 * 3)  # fused QKV, freed at once
            t.free(tmp)
        for ident in reversed(stored):
            t.free(ident)
    return t.events


def transformer_steps():
    """Two training steps of a small model: weights stay live, each layer's
    forward keeps activations and frees temporaries (LIFO), the backward frees
    activations in reverse while gradients come and go."""
    rng = random.Random(11)
    t = Trace()
    seq, hidden, ffn = 2048, 1024, 4096
    weights = [t.alloc(s) for s in [hidden * hidden * 3 * 2, hidden * hidden * 2,
                                     hidden * ffn * 2 * 2, 4 * hidden * 2] * 4]
    for _step in range(2):
        stored = []
        for _layer in range(4):
            stored += [t.alloc(seq * hidden * 2), t.alloc(seq * ffn * 2), t.alloc(hidden * 4)]
            tmps = [t.alloc(seq * hidden * 2 * rng.choice([1, 3])), t.alloc(rng.randint(512, MIB))]
            for ident in reversed(tmps):
                t.free(ident)
        for ident in reversed(stored):
            grad = t.alloc(seq * hidden * 2)
            t.free(ident)
            t.free(grad)
    for ident in reversed(weights):
        t.free(ident)
    return t.events


def small_and_mid_mix():
    """Interleaved small (<= 1 MiB: 2 MiB segments) and mid-size (1-10 MiB:
    shared 20 MiB segments) requests with random-order frees, exercising
    splitting, merging and best fit."""
    rng = random.Random(5)
    t = Trace()
    live = []
    for _ in range(1500):
        if live and rng.random() < 0.45:
            t.free(live.pop(rng.randrange(len(live))))
        elif rng.random() < 0.6:
            live.append(t.alloc(rng.randint(1, MIB)))
        else:
            live.append(t.alloc(rng.randint(MIB + 1, 10 * MIB - 1)))
    for ident in live:
        t.free(ident)
    return t.events


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, events in [("growing_sequence", growing_sequence()),
                         ("transformer_steps", transformer_steps()),
                         ("small_and_mid_mix", small_and_mid_mix())]:
        path = os.path.join(OUT, name + ".json")
        with open(path, "w") as f:
            f.write("[\n" + ",\n".join(json.dumps(e) for e in events) + "\n]\n")
        print(path, len(events), "events")


if __name__ == "__main__":
    main()
