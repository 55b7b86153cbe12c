#!/bin/sh
# Reaches the run's loopback service at 127.0.0.1:$1 directly and through the proxy.
echo "direct $(curl -s --noproxy '*' --max-time 5 "http://127.0.0.1:$1/")"
echo "proxied $(curl -s --max-time 5 "http://127.0.0.1:$1/")"
