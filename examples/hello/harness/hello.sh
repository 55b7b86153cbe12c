#!/bin/sh
# The example harness of examples/hello: a tiny "agent" that speaks the built-in jsonl driver's
# contract (docs/jsonl.md) with nothing but /bin/sh. It answers the task,
# streams its answer in a few deltas and reports what it "spent". Deterministic, no network, no
# credentials. Contract version 1 (printed for --version, which the runtime's version probe asks).
if [ "${1:-}" = "--version" ]; then
  echo "hello-harness 1"
  exit 0
fi

# The runtime writes one JSON line: {"type":"turn","task":…,"system":…,"session":{"id":…},…}.
IFS= read -r turn || turn=""

# Pull two strings out of that line without a JSON parser. The values stay JSON-escaped, which is
# what we need to print them back inside JSON strings.
field() {
  printf '%s' "$turn" | sed -n "s/.*\"$1\":\"\(\([^\"\\\\]\|\\\\.\)*\)\".*/\1/p"
}
task=$(field task)
session=$(printf '%s' "$turn" | sed -n 's/.*"session":{"id":"\([^"]*\)".*/\1/p')
[ -n "$task" ] || task="(no task)"

say() { printf '%s\n' "$1"; sleep 0.05; }

say "{\"type\":\"session\",\"id\":\"$session\",\"auth\":\"subscription\",\"model\":\"hello-1\"}"
say '{"type":"delta","text":"Hello! "}'
say '{"type":"delta","text":"You asked: "}'
say "{\"type\":\"delta\",\"text\":\"$task\"}"

# "Tokens": a quarter of the characters in and out, as a stand-in for a real model's counts.
in_tokens=$(( (${#turn} + 3) / 4 ))
answer="Hello! You asked: $task"
out_tokens=$(( (${#answer} + 3) / 4 ))
usage="{\"fresh_input\":$in_tokens,\"cache_read\":0,\"cache_write\":0,\"output\":$out_tokens,\"thinking\":0}"

say "{\"type\":\"text\",\"text\":\"$answer\"}"
say "{\"type\":\"result\",\"text\":\"$answer\",\"usage\":$usage}"
