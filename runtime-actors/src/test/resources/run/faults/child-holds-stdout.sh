# A child that keeps the harness's stdout open after the parent printed the result and exited.
. "${0%/*}/prelude.sh"
IFS= read -r task
sleep 300 &
echo '{"type":"turn-end","value":"child holds stdout"}'
exit 0
