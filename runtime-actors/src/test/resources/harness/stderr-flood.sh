# Much stderr, whose tail is kept, then exit 1.
i=0
while [ $i -lt 2000 ]; do echo "stderr line $i" >&2; i=$((i+1)); done
printf 'no newline at the end' >&2
exit 1
