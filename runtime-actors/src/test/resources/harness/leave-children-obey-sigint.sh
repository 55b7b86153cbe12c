# Leaves a setsid child and a double-forked one behind (each `sleep MARKER`, MARKER the first
# argument), then ends with code 7 on SIGINT, as a harness ending its turn when canceled.
marker=$1
trap 'echo got-sigint; exit 7' INT
setsid sh -c "sleep $marker" </dev/null >/dev/null 2>&1 &
( sh -c "sleep $marker </dev/null >/dev/null 2>&1 &" & )
echo ready
while :; do sleep 1; done
