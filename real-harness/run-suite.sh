#!/usr/bin/env sh
# The real-harness suite: `capsule run` with the built-in claude-code driver against the real
# Claude Code CLI (pinned in package.json) and a fake Messages API written in this module.
#
# 1. Installs the pinned CLI into real-harness/node_modules with `npm ci` when it is missing or
#    is not the pinned version (needs the npm registry once).
# 2. Builds and installs the modules the suite needs, test classes compiled, tests skipped
#    (needs Maven Central only if ~/.m2 lacks something).
# 3. Runs the suite's tests offline inside a loopback-only network namespace, so the real CLI
#    can reach nothing but the fake API on 127.0.0.1.
#
# Extra arguments go to the Maven run inside the namespace (e.g. -Dtest=RealClaudeIT#a401*).
# Exit code: Maven's.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
pinned=$(sed -n 's/.*"@anthropic-ai\/claude-code": *"\([^"]*\)".*/\1/p' "$here/package.json" | head -n 1)
claude="$here/node_modules/.bin/claude"

installed=""
if [ -x "$claude" ]; then
  installed=$("$claude" --version 2>/dev/null | awk '{print $1}') || installed=""
fi
if [ "$installed" != "$pinned" ]; then
  echo "real-harness: installing @anthropic-ai/claude-code $pinned (npm ci)" >&2
  (cd "$here" && npm ci --no-audit --no-fund)
fi
echo "real-harness: $("$claude" --version)" >&2

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
