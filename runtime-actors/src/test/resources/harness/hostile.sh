#!/bin/sh
# A harness that tries everything a manifest may forbid, one line per attempt, then leaves a
# setsid child and a double-forked one behind. Args: ALLOWED_PORT DENIED_PORT SECRET_FILE
# READ_GRANT_DIR MARKER TMP_FILE FILES_DIR (the children sleep for MARKER seconds, so the test can
# find them; TMP_FILE is a file in the host's /tmp).
allowed=$1 denied=$2 secret=$3 grant=$4 marker=$5 tmpfile=$6 files=$7
echo "proxy-allowed $(curl -s --max-time 5 "http://127.0.0.1:$allowed/")"
echo "proxy-allowed-connect $(curl -s -p --max-time 5 "http://127.0.0.1:$allowed/")"
echo "proxy-denied $(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$denied/")"
# Directly: the allowed one through the sandbox's own forwarder (policy-checked by the proxy),
# the denied one not at all (nothing listens on the sandbox's loopback there).
echo "direct-allowed $(curl -s --noproxy '*' --max-time 5 "http://127.0.0.1:$allowed/")"
if curl -s --noproxy '*' --max-time 2 "http://127.0.0.1:$denied/" >/dev/null 2>&1; then
  echo "direct-denied reached"
else
  echo "direct-denied failed"
fi
# The network namespace's own interfaces (/proc/net/dev: two header lines, then one per device).
echo "interfaces $(awk 'NR > 2 { sub(":", "", $1); s = s (s ? "," : "") $1 } END { print s }' /proc/net/dev)"
if getent hosts example.com >/dev/null 2>&1; then echo "dns resolved"; else echo "dns none"; fi
if cat "$secret" >/dev/null 2>&1; then echo "secret read"; else echo "secret hidden"; fi
if cat "$tmpfile" >/dev/null 2>&1; then echo "host tmp read"; else echo "host tmp hidden"; fi
if cat "$grant/granted.txt" >/dev/null 2>&1; then echo "grant read"; else echo "grant unreadable"; fi
if touch "$grant/written" 2>/dev/null; then echo "grant written"; else echo "grant refused"; fi
if touch ./written 2>/dev/null; then echo "workdir written"; else echo "workdir refused"; fi
if touch "$files/written" 2>/dev/null; then echo "files written"; else echo "files refused"; fi
setsid sh -c "sleep $marker" </dev/null >/dev/null 2>&1 &
( sh -c "sleep $marker </dev/null >/dev/null 2>&1 &" & )
sleep 0.2
echo "children left"
