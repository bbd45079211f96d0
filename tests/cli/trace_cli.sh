#!/usr/bin/env bash
# `trainsim trace`: the envelope on stdout (exit 0 ok / 2 bad input / 1 usage);
# -o writes the trace document itself, which parses as JSON with the Trace
# Event Format's top-level keys; bad input is answered as estimate answers it.
set -u
bin="$1"
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
cfg='{"model":"llama3-8b","training":{"seq_len":4096,"micro_batch_size":1,"global_batch_size":64,"tp":2,"pp":2,"sequence_parallel":true},"system":{"preset":"h100-sxm-80gb","num_gpus":16}}'
echo "$cfg" > "$tmp/config.json"

out=$("$bin" trace "$tmp/config.json"); rc=$?
[ $rc -eq 0 ] || fail "trace exit $rc: $out"
echo "$out" | grep -q '"ok":true' || fail "trace not ok: $out"
echo "$out" | grep -q '"traceEvents"' || fail "no traceEvents in the envelope"

out=$(echo "$cfg" | "$bin" trace - -o "$tmp/step.json"); rc=$?
[ $rc -eq 0 ] || fail "trace -o exit $rc: $out"
echo "$out" | grep -q "\"written\":\"$tmp/step.json\"" || fail "trace -o summary: $out"
head -c 20 "$tmp/step.json" | grep -q '^{"displayTimeUnit"\|^{"otherData"\|^{"traceEvents"' \
  || fail "the file is not the trace document: $(head -c 80 "$tmp/step.json")"
for key in '"traceEvents"' '"displayTimeUnit":"ms"' '"trainsim_version"' '"process_name"' \
           '"ph":"X"' '"ph":"s"' '"ph":"f"' '"ph":"C"' '"stage 1 (layers 16-31)"'; do
  grep -q "$key" "$tmp/step.json" || fail "the trace has no $key"
done
if command -v python3 >/dev/null; then
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert isinstance(d["traceEvents"], list) and len(d["traceEvents"]) > 0' \
    "$tmp/step.json" || fail "the trace file is not valid JSON with events"
fi

# Bad input: the same envelope as estimate, exit 2, nothing written.
bad='{"model":"llama3-8b","training":{"seq_len":4096,"micro_batch_size":1,"global_batch_size":64,"tp":3,"pp":2},"system":{"preset":"h100-sxm-80gb","num_gpus":16}}'
want=$(echo "$bad" | "$bin" estimate -)
out=$(echo "$bad" | "$bin" trace - -o "$tmp/bad.json"); rc=$?
[ $rc -eq 2 ] || fail "infeasible config exit $rc (want 2): $out"
[ "$out" = "$want" ] || fail "trace errors differ from estimate's: $out vs $want"
[ ! -e "$tmp/bad.json" ] || fail "a trace was written for a bad config"
out=$("$bin" trace /nonexistent/file.json); rc=$?
[ $rc -eq 2 ] || fail "missing file exit $rc (want 2)"
echo "$out" | grep -q 'cannot read file' || fail "missing file message: $out"
out=$("$bin" trace "$tmp/config.json" -o "$tmp/no/such/dir/x.json"); rc=$?
[ $rc -eq 2 ] || fail "unwritable output exit $rc (want 2): $out"
echo "$out" | grep -q '"path":"-o"' || fail "unwritable output path: $out"

# Usage.
"$bin" trace >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "trace without a file exit $rc (want 1)"
"$bin" trace a.json b.json >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "trace with two files exit $rc (want 1)"
"$bin" trace a.json -o >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "trace -o without a path exit $rc (want 1)"
out=$("$bin" trace --help); rc=$?
[ $rc -eq 0 ] || fail "trace --help exit $rc"
echo "$out" | grep -q 'usage: trainsim trace' || fail "trace --help text: $out"
"$bin" --help | grep -q 'trainsim trace CONFIG.json' || fail "trace missing from the usage text"
echo "trace cli ok"
