# One line of $1 bytes, then a short line.
head -c "$1" /dev/zero | tr '\0' 'a'
printf '\nafter\n'
