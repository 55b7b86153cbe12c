# Two lines (one CRLF), an empty line, an unterminated tail, a stderr line, exit 3.
printf 'one\ntwo\r\n\nunterminated-tail'
echo 'something went wrong' >&2
exit 3
