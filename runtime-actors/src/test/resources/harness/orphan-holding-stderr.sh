# Leaves a child holding stderr open, says something on stderr, exits 4.
sleep 300 >/dev/null &
echo 'last words' >&2
exit 4
