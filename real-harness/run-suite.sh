#!/usr/bin/env sh
# The real-harness suite: `capsule run` with the built-in claude-code, codex and gemini drivers
# against the real Claude Code, Codex and Gemini CLIs (pinned in package.json) and fake model APIs
# written in this module (Messages, Responses, Gemini).
#
# 1. Installs the pinned CLIs into real-harness/node_modules with `npm ci` when one is missing or
#    is not the pinned version (needs the npm registry once).
# 2. Builds and installs the modules the suite needs, test classes compiled, tests skipped
#    (needs Maven Central only if ~/.m2 lacks something).
# 3. Runs the suite's tests offline inside a loopback-only network namespace, so the real CLI
#    can reach nothing but the fake API on 127.0.0.1.
#
# Extra arguments go to the Maven run inside the namespace (e.g. -Dtest=RealGeminiIT#a401*).
# Exit code: Maven's.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin="$here/node_modules/.bin"

# The version package.json pins for an npm package.
pinned() {
  sed -n "s/.*\"$(printf '%s' "$1" | sed 's/[\/&]/\\&/g')\": *\"\([^\"]*\)\".*/\1/p" "$here/package.json" | head -n 1
}
# What an installed CLI says its version is: the token that looks like one (Claude Code prints
# "2.1.328 (Claude Code)", Codex "codex-cli 0.169.0", Gemini CLI "0.61.0").
installed() {
  [ -x "$bin/$1" ] || return 0
  "$bin/$1" --version 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+\.[0-9]+\.[0-9]+' | head -n 1 || true
}

stale=""
for pair in claude:@anthropic-ai/claude-code codex:@openai/codex gemini:@google/gemini-cli; do
  cli=${pair%%:*}
  want=$(pinned "${pair#*:}")
  have=$(installed "$cli")
  echo "real-harness: $cli ${have:-missing} (pinned $want)" >&2
  [ "$have" = "$want" ] || stale="$stale $cli"
done
if [ -n "$stale" ]; then
  echo "real-harness: installing the pinned CLIs (npm ci):$stale" >&2
  (cd "$here" && npm ci --no-audit --no-fund)
fi
cd "$root"
echo "real-harness: building the modules the suite needs (tests skipped)" >&2
./mvnw -B -ntp -P real-harness -pl real-harness -am install -DskipTests -Dspotless.check.skip=true
# Surefire resolves its JUnit provider only when it runs tests: let it run none here, online, so the
# offline run below finds it even in a fresh ~/.m2 (the filter matches no class, nothing starts).
./mvnw -B -ntp -q -P real-harness -pl real-harness surefire:test \
  -Dtest=NoSuchClassResolveProviderOnly -Dsurefire.failIfNoSpecifiedTests=false

start=$(date +%s)
log=$(mktemp)
status=0
# --map-root-user: no real privilege needed; only loopback exists in the new namespace.
unshare --net --map-root-user sh -c 'ip link set lo up && exec "$0" -B -ntp -o -P real-harness -pl real-harness verify "$@"' \
  ./mvnw "$@" 2>&1 | tee "$log" || true
grep -q 'BUILD SUCCESS' "$log" || status=1
echo "real-harness: suite took $(( $(date +%s) - start )) s" >&2
grep -E 'Tests run:|FAIL|ERROR\]' "$log" >&2 || true
rm -f "$log"
exit "$status"
