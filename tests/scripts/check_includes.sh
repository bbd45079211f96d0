#!/usr/bin/env bash
# The include graph points one way (README "Development"): no file includes
# io/ (gone), the estimators and search/whatif never see JSON, and no folder
# includes one above it. Usage: check_includes.sh REPO_ROOT
set -u
root="${1:?repo root}"
src="$root/core/src"
status=0
fail() { echo "FAIL: $*"; status=1; }

hits=$(grep -rn --exclude=check_includes.sh '#include "io/' "$root/core" "$root/tests" "$root/wasm" 2>/dev/null)
[ -z "$hits" ] || fail "includes of io/:"$'\n'"$hits"
hits=$(grep -rln 'nlohmann' "$src"/{model,memory,time,search,whatif} 2>/dev/null)
[ -z "$hits" ] || fail "nlohmann in an estimator, search or whatif:"$'\n'"$hits"

# folder: the folders it must not include (those above it, and its siblings' where noted).
while read -r folder forbidden; do
  hits=$(grep -rnE "#include \"($forbidden)/" "$src/$folder" 2>/dev/null)
  [ -z "$hits" ] || fail "$folder/ includes a folder above it:"$'\n'"$hits"
done <<'RULES'
model memory|time|search|whatif|schema|report|interop|api
memory time|search|whatif|schema|report|interop|api
time memory|search|whatif|schema|report|interop|api
search whatif|schema|report|interop|api
whatif search|schema|report|interop|api
schema report|interop|api
report interop|api
interop report|api
RULES
for file in "$src"/validate.* "$src"/estimate*; do
  hits=$(grep -nE '#include "(search|whatif|schema|report|interop|api)/' "$file")
  [ -z "$hits" ] || fail "$(basename "$file") includes a folder above it:"$'\n'"$hits"
done
[ $status -eq 0 ] && echo "include graph ok"
exit $status
