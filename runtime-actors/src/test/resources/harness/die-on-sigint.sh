# Says ready, then becomes a process that dies of SIGINT's default action.
echo ready
exec sleep 300
