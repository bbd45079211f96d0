#!/usr/bin/env bash
# CLI contract of the import/export commands: envelope on stdout, exit 0 ok /
# 2 bad input / 1 usage; --raw prints the exported text itself.
set -u
bin="$1"
data="$2"
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

out=$("$bin" import hf "$data/data/hf/meta-llama-3-70b.json"); rc=$?
[ $rc -eq 0 ] || fail "import hf exit $rc: $out"
echo "$out" | grep -q '"num_kv_heads":8' || fail "import hf model: $out"
out=$("$bin" import hf - < "$data/data/hf/deepseek-v3.json"); rc=$?
[ $rc -eq 0 ] || fail "import hf stdin exit $rc: $out"
echo "$out" | grep -q '"mtp_num_layers":1' || fail "import hf mtp: $out"
echo "$out" | grep -q 'quantization_config' || fail "import hf notes: $out"
out=$(echo '{"model_type":"gpt2"}' | "$bin" import hf -); rc=$?
[ $rc -eq 2 ] || fail "import hf bad exit $rc (want 2): $out"
echo "$out" | grep -q '"path":"/hf/model_type"' || fail "import hf bad path: $out"
out=$("$bin" import hf /nonexistent.json); rc=$?
[ $rc -eq 2 ] || fail "import hf missing file exit $rc (want 2)"

out=$("$bin" import megatron "$data/data/megatron/mixtral_8x7b.sh" --system h200-sxm-141gb); rc=$?
[ $rc -eq 0 ] || fail "import megatron exit $rc: $out"
echo "$out" | grep -q '"preset":"h200-sxm-141gb"' || fail "import megatron system: $out"
echo "$out" | grep -q '"num_gpus":32' || fail "import megatron gpus: $out"
out=$(echo '--num-layers 2 --hidden-size 64' | "$bin" import megatron -); rc=$?
[ $rc -eq 2 ] || fail "import megatron bad exit $rc (want 2): $out"
echo "$out" | grep -q '"path":"/args/--num-attention-heads"' || fail "import megatron bad path: $out"
"$bin" import megatron >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "import megatron without file exit $rc (want 1)"
"$bin" import megatron a.sh --system >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "import megatron --system without id exit $rc (want 1)"

# import -> config -> export megatron -> import again -> estimate
"$bin" import megatron "$data/data/megatron/llama3_70b.sh" > "$tmp/imported.json" || fail "import llama3_70b"
# {"ok":true,"result":{"config":{...},"notes":[...]},"schema_version":1} -> {...}
sed 's/^{"ok":true,"result":{"config":\(.*\),"notes":\[.*$/\1/' "$tmp/imported.json" > "$tmp/config.json"
grep -q '^{"model":' "$tmp/config.json" || fail "config extraction: $(cat "$tmp/config.json")"
out=$("$bin" export megatron "$tmp/config.json"); rc=$?
[ $rc -eq 0 ] || fail "export megatron exit $rc: $out"
echo "$out" | grep -q '"command":"torchrun --nnodes 8 --nproc-per-node 8 pretrain_gpt.py' || fail "export command: $out"
"$bin" export megatron "$tmp/config.json" --raw > "$tmp/command.sh" || fail "export --raw"
head -1 "$tmp/command.sh" | grep -q '^torchrun --nnodes 8 --nproc-per-node 8 pretrain_gpt.py \\$' || fail "raw command: $(head -1 "$tmp/command.sh")"
out=$("$bin" import megatron - < "$tmp/command.sh"); rc=$?
[ $rc -eq 0 ] || fail "re-import exit $rc: $out"
echo "$out" | grep -q '"vpp":4' || fail "re-import vpp: $out"

out=$("$bin" export json "$tmp/config.json" --raw); rc=$?
[ $rc -eq 0 ] || fail "export json exit $rc"
echo "$out" | "$bin" estimate - | grep -q '"ok":true' || fail "canonical config does not estimate"
out=$("$bin" export csv "$tmp/config.json" --raw); rc=$?
[ $rc -eq 0 ] || fail "export csv exit $rc"
[ "$(echo "$out" | head -1)" = "section,stage,metric,value,unit" ] || fail "csv header: $(echo "$out" | head -1)"
echo "$out" | grep -q '^memory,,peak_bytes,' || fail "csv peak row"
out=$(echo '{"model":"llama3-8b"}' | "$bin" export csv - --raw); rc=$?
[ $rc -eq 2 ] || fail "export bad config exit $rc (want 2): $out"
echo "$out" | grep -q '"path":"/training"' || fail "export bad config path: $out"
"$bin" export yaml "$tmp/config.json" >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "export unknown format exit $rc (want 1)"
echo "cli interop ok"
