#!/bin/sh
# A hostile harness or tool (docs/containment.md "Escape suite"): it tries every escape it can
# and prints one line per case, "HELD <case>" when the sandbox refused it, "ESCAPED <case> <how>"
# when it got through. Arguments: what the host set up to be reached.
#   $1 a host directory no grant names, holding secret.txt
#   $2 a TCP port a host listener accepts on 127.0.0.1
#   $3 a host Unix socket path (under /run)
#   $4 an abstract Unix socket name a host listener accepts on
#   $5 a file name the host created in its /dev/shm
#   $6 a host process id
#   $7 how many MiB the file-size case writes (0: skip), $8 the open-files bound (0: skip)
hostdir=$1 port=$2 unixsock=$3 abstract=$4 shmfile=$5 hostpid=$6 fsize=${7:-0} fds=${8:-0}
proxy=127.0.0.1:3128

held() { echo "HELD $1"; }
escaped() { echo "ESCAPED $1 $2"; }
# check CASE COMMAND...: the case escaped when the command succeeds.
check() {
  name=$1
  shift
  if "$@" >/dev/null 2>&1; then escaped "$name" "$*"; else held "$name"; fi
}
# absent CASE PATH: the case escaped when the path is there at all (read-only is not enough).
absent() {
  if [ -e "$2" ] || [ -L "$2" ]; then escaped "$1" "$2 is visible"; else held "$1"; fi
}

check write-host-dir sh -c "echo pwned > '$hostdir/pwned'"
check read-host-secret cat "$hostdir/secret.txt"
absent host-dir-absent "$hostdir"
check write-system sh -c 'echo pwned > /usr/capsule-pwned'
check remount-root mount -o remount,rw /
check remount-usr mount -o remount,rw,bind /usr
check mount-tmpfs sh -c 'mkdir -p /tmp/m && mount -t tmpfs none /tmp/m'
check mknod-block mknod /tmp/blk b 8 0
check mknod-char mknod /tmp/chr c 1 3
check new-user-namespace unshare -U true
check new-mount-namespace unshare -m true
check sysctl-write sh -c 'v=$(cat /proc/sys/fs/file-max) && echo "$v" > /proc/sys/fs/file-max'
check loopback-direct socat -T2 /dev/null "TCP:127.0.0.1:$port,connect-timeout=2"
check proxy-connect-other-loopback sh -c "printf 'CONNECT 127.0.0.1:$port HTTP/1.1\r\nHost: 127.0.0.1:$port\r\n\r\n' | socat -T2 - TCP:$proxy | head -n 1 | grep -q ' 200 '"
absent unix-socket-path "$unixsock"
check unix-socket-connect socat -T2 /dev/null "UNIX-CONNECT:$unixsock"
check abstract-socket socat -T2 /dev/null "ABSTRACT-CONNECT:$abstract"
absent dev-shm-shared "/dev/shm/$shmfile"
check signal-host-process kill -0 "$hostpid"
check tty-inject sh -c 'exec 3</dev/tty'
# A netlink socket (ip talks to the kernel through one): refused by the syscall filter.
if command -v ip >/dev/null 2>&1; then
  check netlink-socket ip -o link show
else
  escaped netlink-socket "cannot be tried: no ip (iproute2) in the sandbox"
fi
# The filter is in place (mode 2: a filter).
if [ "$(sed -n 's/^Seccomp:[[:space:]]*//p' /proc/self/status)" = 2 ]; then
  held syscall-filter
else
  escaped syscall-filter "no seccomp filter"
fi
for p in /run /var /srv /mnt /media /opt /boot /sys /etc/shadow /etc/gshadow /etc/ssh /etc/sudoers; do
  absent "absent:$p" "$p"
done
caps=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
if [ "$caps" = 0000000000000000 ]; then held no-capabilities; else escaped no-capabilities "$caps"; fi
# Its own user namespace: not the host's (whose map is the whole range onto itself).
if grep -q '^ *0 *0 *4294967295' /proc/self/uid_map; then
  escaped own-user-namespace "the host's user namespace"
else
  held own-user-namespace
fi
nnp=$(sed -n 's/^NoNewPrivs:[[:space:]]*//p' /proc/self/status)
if [ "$nnp" = 1 ]; then held no-new-privs; else escaped no-new-privs "$nnp"; fi
if [ "$fsize" -gt 0 ]; then
  # A file-size bomb: the write stops at the limit (SIGXFSZ kills dd, or it fails with EFBIG).
  dd if=/dev/zero of=/tmp/big bs=1M count="$fsize" >/dev/null 2>&1
  size=$(wc -c < /tmp/big 2>/dev/null || echo 0)
  rm -f /tmp/big
  if [ "$size" -lt $((fsize * 1048576)) ]; then held file-size-bomb; else escaped file-size-bomb "$size bytes"; fi
fi
if [ "$fds" -gt 0 ]; then
  # fd exhaustion: the kernel's per-process bound is in place, soft and hard alike.
  soft=$(ulimit -S -n) hard=$(ulimit -H -n)
  if [ "$soft" != unlimited ] && [ "$hard" != unlimited ] && [ "$hard" -le "$fds" ]; then
    held fd-exhaustion
  else
    escaped fd-exhaustion "soft $soft hard $hard"
  fi
fi
echo "DONE"
