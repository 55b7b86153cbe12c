# Sourced first by every fault script. $1 is the case directory: record this shell's pid and its
# process group there, and start a stray child that holds none of the harness's pipes, so every
# case also proves that a child the harness left behind dies with the group.
dir="$1"
echo $$ > "$dir/pid"
cut -d' ' -f5 /proc/$$/stat > "$dir/pgid"
sleep 300 < /dev/null > /dev/null 2>&1 &
echo $! > "$dir/child"
