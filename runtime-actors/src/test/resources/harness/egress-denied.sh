#!/bin/sh
# Asks the egress proxy three times for a host:port outside its allowlist (arg: the port), then
# says how each went. Every ask is refused with 403.
for i in 1 2 3; do
  echo "denied $(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$1/")"
done
