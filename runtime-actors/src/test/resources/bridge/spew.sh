#!/bin/sh
# Bridge test tool: writes $1 bytes of 'x' to stdout, then one line to stderr, then exits 0.
head -c "$1" /dev/zero | tr '\000' x
echo "done" >&2
