#!/bin/sh
# Placeholder harness for examples/hello: reads one task line from stdin and answers in the
# built-in JSONL driver's line format. Deterministic, no network, no credentials.
IFS= read -r task || task=""
printf '%s\n' '{"type":"delta","text":"Hello"}'
printf '%s\n' '{"type":"delta","text":", world!"}'
printf '%s\n' '{"type":"result","text":"Hello, world!","usage":{"fresh_input":12,"cache_read":0,"cache_write":0,"output":4,"thinking":0}}'
