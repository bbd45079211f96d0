#!/usr/bin/env bash
# CLI contract of `trainsim search` and `trainsim whatif`: envelope on stdout,
# exit 0 ok / 2 bad input / 1 usage.
set -u
bin="$1"
fail() { echo "FAIL: $*"; exit 1; }
spec='{"model":{"preset":"llama3-8b","num_layers":4},"system":"h100-sxm-80gb","num_gpus":8,"global_batch_size":32,"seq_len":4096,"top_k":2}'
out=$(echo "$spec" | "$bin" search -); rc=$?
[ $rc -eq 0 ] || fail "search exit $rc: $out"
for key in '"ok":true' '"top":\[{' '"pareto":\[{' '"counts":{' '"rank":1' '"config":{"model"'; do
  echo "$out" | grep -q "$key" || fail "search output lacks $key: $out"
done
out=$(echo '{"model":"llama3-8b","system":"h100-sxm-80gb","num_gpus":0,"global_batch_size":32,"seq_len":4096}' | "$bin" search -); rc=$?
[ $rc -eq 2 ] || fail "bad search exit $rc (want 2): $out"
echo "$out" | grep -q '"path":"/num_gpus"' || fail "bad search path: $out"
out=$("$bin" search /nonexistent/spec.json); rc=$?
[ $rc -eq 2 ] || fail "missing file exit $rc (want 2)"
"$bin" search >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "search without a file exit $rc (want 1)"
cfg='{"model":"llama3-8b","training":{"seq_len":4096,"micro_batch_size":1,"global_batch_size":64,"tp":2,"pp":2,"sequence_parallel":true},"system":{"preset":"h100-sxm-80gb","num_gpus":16},"whatif":{"factors":[0.5,2]}}'
out=$(echo "$cfg" | "$bin" whatif -); rc=$?
[ $rc -eq 0 ] || fail "whatif exit $rc: $out"
echo "$out" | grep -q '"most_sensitive":"' || fail "whatif output: $out"
echo "$out" | grep -q '"figure":"inter_node_bandwidth"' || fail "whatif figures: $out"
out=$(echo '{"model":"llama3-8b","whatif":{"factors":[0]}}' | "$bin" whatif -); rc=$?
[ $rc -eq 2 ] || fail "bad whatif exit $rc (want 2): $out"
echo "$out" | grep -q '"path":"/whatif/factors/0"' || fail "bad whatif path: $out"
"$bin" --help | grep -q 'trainsim search SPEC.json' || fail "usage does not list search"
echo "search cli ok"
