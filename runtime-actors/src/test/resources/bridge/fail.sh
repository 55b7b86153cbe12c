#!/bin/sh
# Bridge test tool: writes to both streams and exits 3.
echo "partial result"
echo "something went wrong" >&2
exit 3
