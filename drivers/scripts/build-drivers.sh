#!/usr/bin/env bash
# Builds the built-in process drivers (drivers/rust) with Debian's offline Rust toolchain for
# wasm32-unknown-unknown, wraps each core module as a murmur:driver@0.6.0 component with the pinned
# jco (drivers/tools), and copies the components to
# drivers/src/main/resources/io/capsule/driver/builtin/<name>.wasm, where the Java build picks
# them up (the Java build itself needs no Rust).
#
#   drivers/scripts/build-drivers.sh          rebuild and overwrite the committed components
#   drivers/scripts/build-drivers.sh --check  rebuild into a temporary folder and fail, listing
#                                             each committed .wasm that differs from its sources
#
# Both modes then run drivers/tools/verify-components.mjs on the built components (the golden
# transcripts through jco's independent canonical-ABI bindings).
#
# The build is deterministic (fixed toolchain from Debian packages, Cargo.lock, release profile
# with one codegen unit and no symbols, source paths remapped, jco pinned by package-lock.json), so
# --check compares bytes. It installs nothing but `npm ci` in drivers/tools when node_modules is
# absent; a missing tool fails with the apt or npm step that provides it.
set -euo pipefail

DRIVERS=(claude-code codex gemini jsonl)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
module="$(cd "$here/.." && pwd)"
root="$(cd "$module/.." && pwd)"
workspace="$module/rust"
tools="$module/tools"
resources="$module/src/main/resources/io/capsule/driver/builtin"
apt_hint="apt-get install -y --no-install-recommends rustc cargo libstd-rust-dev-wasm32 lld-16 librust-serde-json-dev librust-serde-derive-dev wabt"

check=false
case "${1:-}" in
  "") ;;
  --check) check=true ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

fail() { echo "build-drivers: $*" >&2; exit 1; }

# Debian's binaries, never the rustup ones on PATH (they have no wasm32 std).
debian_bin() {
  local pkg="$1" name="$2" path
  path="$(dpkg -L "$pkg" 2>/dev/null | grep -E "/bin/$name\$" | head -n1 || true)"
  [[ -n "$path" && -x "$path" ]] || fail "Debian's $name is missing; install it with: $apt_hint"
  echo "$path"
}

command -v dpkg >/dev/null || fail "dpkg not found: this build needs Debian's Rust packages ($apt_hint)"
RUSTC="$(debian_bin rustc rustc)"
CARGO="$(debian_bin cargo cargo)"
sysroot="$("$RUSTC" --print sysroot)"
[[ -d "$sysroot/lib/rustlib/wasm32-unknown-unknown/lib" ]] \
  || fail "the wasm32 std for $RUSTC is missing; install it with: apt-get install -y libstd-rust-dev-wasm32"
command -v wasm-ld-16 >/dev/null || fail "wasm-ld-16 is missing; install it with: apt-get install -y lld-16"
[[ -d /usr/share/cargo/registry/serde_json-1.0.87 ]] \
  || fail "serde_json 1.0.87 is missing from Debian's cargo registry; install it with: apt-get install -y librust-serde-json-dev"
command -v wasm-objdump >/dev/null || fail "wasm-objdump is missing; install it with: apt-get install -y wabt"
command -v node >/dev/null || fail "node is missing; install Node 20 (apt-get install -y nodejs npm)"
if [[ ! -d "$tools/node_modules/@bytecodealliance/jco" ]]; then
  command -v npm >/dev/null || fail "npm is missing; install it with: apt-get install -y npm"
  (cd "$tools" && npm ci --no-audit --no-fund) || fail "npm ci in $tools failed"
fi

if $check; then
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
  target="$out/target"
else
  out="$resources"
  target="$workspace/target"
fi
mkdir -p "$out"

# The remap keeps the checkout location out of the binaries (panic locations name source files).
export RUSTC CARGO_TARGET_DIR="$target"
(
  cd "$workspace"
  packages=()
  for d in "${DRIVERS[@]}"; do packages+=(-p "$d-driver"); done
  "$CARGO" build --release --locked --offline --target wasm32-unknown-unknown "${packages[@]}" \
    --config "target.wasm32-unknown-unknown.rustflags=['--remap-path-prefix=$workspace=/capsule-drivers']"
)

for d in "${DRIVERS[@]}"; do
  core="$target/wasm32-unknown-unknown/release/${d//-/_}_driver.wasm"
  [[ -f "$core" ]] || fail "the build did not produce $core"
  # The driver contract grants nothing: a core module that imports anything would be refused at load.
  if wasm-objdump -j Import -x "$core" 2>/dev/null | grep -q '^ - '; then
    fail "$d imports something; a driver must import nothing: $(wasm-objdump -j Import -x "$core" | grep '^ - ' | head -n1)"
  fi
  wasm-objdump -j Memory -x "$core" | grep -q 'max=' || fail "$d declares no memory maximum"
  node "$tools/wrap-component.mjs" "$core" "$out/$d.wasm"
done

# Every golden transcript through each component via jco's own canonical-ABI bindings: an
# independent check of the hand-written exports.
node "$tools/verify-components.mjs" "$out" || fail "the built components do not reproduce the golden events"

if $check; then
  stale=()
  for d in "${DRIVERS[@]}"; do
    committed="$resources/$d.wasm"
    if [[ ! -f "$committed" ]] || ! cmp -s "$committed" "$out/$d.wasm"; then
      stale+=("${committed#"$root/"}")
    fi
  done
  if ((${#stale[@]})); then
    echo "build-drivers: these committed components differ from their sources (run drivers/scripts/build-drivers.sh and commit):" >&2
    printf '  %s\n' "${stale[@]}" >&2
    exit 1
  fi
  echo "build-drivers: all ${#DRIVERS[@]} committed components match their sources"
else
  for d in "${DRIVERS[@]}"; do echo "built $resources/$d.wasm ($(stat -c %s "$resources/$d.wasm") bytes)"; done
fi
