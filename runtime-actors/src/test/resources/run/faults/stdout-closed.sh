# Stdout closed while alive: a delta, close stdout, then stay alive with no terminal event.
. "${0%/*}/prelude.sh"
IFS= read -r task
echo '{"type":"text-delta","value":"still here"}'
exec 1>&-
sleep 300
