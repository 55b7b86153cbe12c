# Reads one line from stdin (kept open) and answers it.
echo ready
read line
echo "got $line"
