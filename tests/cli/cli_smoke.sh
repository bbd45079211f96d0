#!/usr/bin/env bash
# CLI contract: envelope on stdout, exit 0 ok / 2 bad input / 1 usage.
set -u
bin="$1"
data="$2"
fail() { echo "FAIL: $*"; exit 1; }
cfg='{"model":"llama3-8b","training":{"seq_len":4096,"micro_batch_size":1,"global_batch_size":64,"tp":2,"pp":2,"sequence_parallel":true},"system":{"preset":"h100-sxm-80gb","num_gpus":16}}'
out=$(echo "$cfg" | "$bin" estimate -); rc=$?
[ $rc -eq 0 ] || fail "estimate exit $rc: $out"
echo "$out" | grep -q '"ok":true' || fail "estimate not ok: $out"
echo "$out" | grep -q '"peak_bytes"' || fail "no peak_bytes: $out"
out=$(echo '{"model":"llama3-8b"}' | "$bin" estimate -); rc=$?
[ $rc -eq 2 ] || fail "bad input exit $rc (want 2): $out"
echo "$out" | grep -q '"path":"/training"' || fail "bad input path: $out"
out=$("$bin" estimate /nonexistent/file.json); rc=$?
[ $rc -eq 2 ] || fail "missing file exit $rc (want 2)"
echo "$out" | grep -q 'cannot read file' || fail "missing file message: $out"
"$bin" frobnicate >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "unknown command exit $rc (want 1)"
out=$("$bin" presets); rc=$?
[ $rc -eq 0 ] || fail "presets exit $rc"
echo "$out" | grep -q '"llama3-8b"' || fail "presets list: $out"
out=$("$bin" presets h100-sxm-80gb); rc=$?
[ $rc -eq 0 ] || fail "preset show exit $rc"
echo "$out" | grep -q '"sources"' || fail "preset show: $out"
out=$(echo "$cfg" | "$bin" alloc-trace - --stage 1); rc=$?
[ $rc -eq 0 ] || fail "alloc-trace exit $rc: $out"
echo "$out" | grep -q '"events"' || fail "alloc-trace has no events: $out"
out=$(echo "$cfg" | "$bin" alloc-trace - --stage 2); rc=$?
[ $rc -eq 2 ] || fail "alloc-trace with a stage out of range exit $rc (want 2): $out"
"$bin" alloc-trace >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "alloc-trace without a file exit $rc (want 1)"
echo "cli smoke ok"
