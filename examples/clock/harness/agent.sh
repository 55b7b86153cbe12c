#!/bin/sh
[ "$1" = --version ] && { echo "clock-harness 1"; exit 0; }   # the contract's version
IFS= read -r turn
url=$(printf '%s' "$turn" | sed -n 's/.*"url":"\([^"]*\)".*/\1/p')
token=$(printf '%s' "$turn" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
call='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"date","arguments":{"args":["-u"]}}}'
printf '{"type":"tool_call","id":"c1","name":"date","input":{"args":["-u"]}}\n'
now=$(curl -s -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -d "$call" "$url" \
  | sed -n 's/.*"text":"\([^"]*\)".*/\1/p')
printf '{"type":"tool_result","id":"c1","output":"%s","is_error":false}\n' "$now"
printf '{"type":"result","text":"It is %s","usage":{"fresh_input":10,"output":5}}\n' "$now"
