# Ends with code 7 on SIGINT; says so first.
trap 'echo got-sigint; exit 7' INT
echo ready
while :; do sleep 1; done
