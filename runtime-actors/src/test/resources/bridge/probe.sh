#!/bin/sh
# Bridge test tool: shows what it was given (each argument, the working directory, two
# environment variables) and copies its stdin, so a test can see exactly how it was run.
for a in "$@"; do printf 'arg=%s\n' "$a"; done
printf 'cwd=%s\n' "$(pwd)"
printf 'var=%s\n' "${BRIDGE_TEST_VAR-unset}"
printf 'home=%s\n' "${HOME-unset}"
cat
