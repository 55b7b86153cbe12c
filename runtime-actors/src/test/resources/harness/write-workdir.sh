#!/bin/sh
# Writes a file in its working directory and says whether it could.
if echo inside > ./written 2>/dev/null; then echo "workdir written"; else echo "workdir refused"; fi
