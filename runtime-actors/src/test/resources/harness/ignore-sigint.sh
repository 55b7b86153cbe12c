# Ignores SIGINT; only SIGKILL ends it.
trap '' INT
echo ready
while :; do sleep 1; done
