#!/bin/sh
# Placeholder harness for examples/hello, speaking the built-in jsonl driver's contract
# (drivers/rust/crates/jsonl): `--version` prints a tested contract version; otherwise it reads
# the one `turn` line the runtime writes to stdin and answers with JSONL events ending in
# `result`. Deterministic: no network, no credentials, no files written.
if [ "$1" = "--version" ]; then
  echo "hello-harness 1"
  exit 0
fi
IFS= read -r turn || turn=""
printf '%s\n' '{"type":"delta","text":"Hello"}'
printf '%s\n' '{"type":"delta","text":", world!"}'
printf '%s\n' '{"type":"result","text":"Hello, world!","usage":{"fresh_input":12,"cache_read":0,"cache_write":0,"output":4,"thinking":0}}'
