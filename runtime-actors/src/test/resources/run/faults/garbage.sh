# Binary garbage: a line of invalid UTF-8, 64 KiB of random bytes, then the result.
. "${0%/*}/prelude.sh"
IFS= read -r task
printf '\377\376 not utf-8 \200\n'
head -c 65536 /dev/urandom
echo
echo '{"type":"turn-end","value":"after the garbage"}'
