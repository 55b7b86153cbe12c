# Leaves two children running (holding stdout) and exits.
sleep 300 &
sleep 300 &
echo ready
exit 0
