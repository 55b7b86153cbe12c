# Dies by a signal in the middle of a line.
printf 'a\nb\npartial'
kill -s KILL $$
