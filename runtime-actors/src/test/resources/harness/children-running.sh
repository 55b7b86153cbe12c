# Keeps running with two children.
sleep 300 &
sleep 300 &
echo ready
wait
