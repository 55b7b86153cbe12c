# Linger after the result: the terminal event, then stay alive holding stdout.
. "${0%/*}/prelude.sh"
IFS= read -r task
echo '{"type":"turn-end","value":"lingered"}'
sleep 300
