#!/bin/sh
# Bridge test tool: tries to create the file named $1 in its working directory.
echo written > "$1"
