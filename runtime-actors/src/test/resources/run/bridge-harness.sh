#!/bin/sh
# A fake harness that calls its capsule's tools through the run's tool bridge, as an MCP client
# would: it reads the bridge's URL and token from BRIDGE_URL / BRIDGE_TOKEN (the test driver puts
# the launch request's bridge there) and speaks JSON-RPC over HTTP with curl ($CURL).
#   $1 = the tool to call ("-" calls none), the remaining arguments are its args.
# It prints canonical driver events: a note with the task, a note "tools/list: a,b" with the names
# the bridge lists, a text with what the tool said (or "no bridge"), then turn-end.
tool="$1"
shift
IFS= read -r task
printf '{"type":"note","value":"task: %s"}\n' "$task"
if [ -z "$BRIDGE_URL" ] || [ "$tool" = - ]; then
  echo '{"type":"turn-end","value":"no bridge"}'
  exit 0
fi
post() {
  "$CURL" -sS --max-time 30 -X POST "$BRIDGE_URL" \
    -H "Authorization: Bearer $BRIDGE_TOKEN" \
    -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    "$@"
}
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bridge-harness","version":"1"}}}'
echo '{"type":"note","value":"initialize"}'
headers="$(post -D - -o /dev/null --data "$init")" || exit 3
session="$(printf '%s\n' "$headers" | tr -d '\r' | sed -n 's/^[Mm][Cc][Pp]-[Ss]ession-[Ii][Dd]: *//p')"
post -H "Mcp-Session-Id: $session" -o /dev/null \
  --data '{"jsonrpc":"2.0","method":"notifications/initialized"}' || exit 4
listed="$(post -H "Mcp-Session-Id: $session" \
  --data '{"jsonrpc":"2.0","id":3,"method":"tools/list"}')" || exit 6
names="$(printf '%s' "$listed" | grep -o '"name":"[^"]*"' | sed 's/"name":"\(.*\)"/\1/' | tr '\n' ',')"
printf '{"type":"note","value":"tools/list: %s"}\n' "${names%,}"
args=""
for a in "$@"; do
  args="$args${args:+,}\"$a\""
done
call="{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"$tool\",\"arguments\":{\"args\":[$args]}}}"
echo '{"type":"note","value":"tools/call"}'
result="$(post -H "Mcp-Session-Id: $session" --data "$call")" || exit 5
case "$result" in
  *'"isError":false'*) said="ok" ;;
  *) said="error" ;;
esac
text="$(printf '%s' "$result" | sed -n 's/.*"text":"\([^"\\]*\).*/\1/p')"
printf '{"type":"text","value":"tool %s: %s"}\n' "$said" "$text"
printf '{"type":"turn-end","value":"tool %s: %s"}\n' "$said" "$text"
