#!/bin/sh
# Bridge test tool: starts a child in its own process group, then (when given a FIFO path)
# announces "<its pid> <child pid>" on it and waits for ever. The pid is the group id.
sleep 300 &
if [ -n "$1" ]; then echo "$$ $!" > "$1"; fi
wait
