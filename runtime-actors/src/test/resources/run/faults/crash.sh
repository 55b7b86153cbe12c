# Crash mid-turn: half a text, then exit 3 with no terminal event.
. "${0%/*}/prelude.sh"
IFS= read -r task
echo '{"type":"text-delta","value":"half a"}'
echo 'boom' >&2
exit 3
