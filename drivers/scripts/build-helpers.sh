#!/usr/bin/env bash
# Builds the engine's own small WebAssembly helpers from their text sources
# (drivers/src/main/wat/NAME.wat -> drivers/src/main/resources/io/capsule/driver/engine/NAME.wasm)
# with wabt's wat2wasm, whose output depends only on the source.
#
#   drivers/scripts/build-helpers.sh          rebuild and overwrite the committed .wasm files
#   drivers/scripts/build-helpers.sh --check  fail, listing each committed .wasm that differs
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
module="$(cd "$here/.." && pwd)"
sources="$module/src/main/wat"
resources="$module/src/main/resources/io/capsule/driver/engine"

check=false
case "${1:-}" in
  "") ;;
  --check) check=true ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac
command -v wat2wasm >/dev/null || { echo "build-helpers: wat2wasm is missing; install it with: apt-get install -y wabt" >&2; exit 1; }

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
stale=()
for wat in "$sources"/*.wat; do
  name="$(basename "$wat" .wat)"
  wat2wasm "$wat" -o "$out/$name.wasm"
  if $check; then
    cmp -s "$out/$name.wasm" "$resources/$name.wasm" || stale+=("$resources/$name.wasm")
  else
    mkdir -p "$resources"
    cp "$out/$name.wasm" "$resources/$name.wasm"
    echo "built $resources/$name.wasm"
  fi
done
if ((${#stale[@]})); then
  echo "build-helpers: these committed helpers differ from their sources (run drivers/scripts/build-helpers.sh):" >&2
  printf '  %s\n' "${stale[@]}" >&2
  exit 1
fi
$check && echo "build-helpers: every committed helper matches its source"
exit 0
