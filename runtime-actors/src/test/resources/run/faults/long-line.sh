# One line of 20 MiB (no newline inside), then the result.
. "${0%/*}/prelude.sh"
IFS= read -r task
head -c 20971520 /dev/zero | tr '\000' 'a'
echo
echo '{"type":"turn-end","value":"after the long line"}'
