#!/bin/sh
# A fake harness that plays a scenario file (its first argument) line by line.
# Lines starting with '!' are directions, every other line is printed to stdout as is:
#   !pid FILE        write this shell's pid to FILE
#   !read-task       read one line from stdin (the task) and print it as a note event
#   !exit N          exit with code N
#   !ignore-int      ignore SIGINT from now on (children inherit it)
#   !cancel-on-int   on SIGINT print a turn-failed{canceled} event and exit 130
#   !wait-interrupt  read stdin lines until one is INTERRUPT, then print turn-failed{canceled}
#   !hang            sleep until killed
#   !child-hang      start a child that sleeps until killed (it outlives nothing: same group)
#   !eat-stdin       read stdin to its end
scenario="$1"
canceled='{"type":"turn-failed","kind":"canceled","message":"interrupted"}'
# The scenario is read on fd 3, so the harness's stdin stays the runtime's pipe.
while IFS= read -r line <&3 || [ -n "$line" ]; do
  case "$line" in
    '!pid '*) echo $$ > "${line#!pid }" ;;
    '!read-task') IFS= read -r task; printf '{"type":"note","value":"task: %s"}\n' "$task" ;;
    '!exit '*) exit "${line#!exit }" ;;
    '!ignore-int') trap '' INT ;;
    '!cancel-on-int') trap 'echo "$canceled"; exit 130' INT ;;
    '!wait-interrupt')
      while IFS= read -r got; do
        if [ "$got" = INTERRUPT ]; then echo "$canceled"; exit 0; fi
      done ;;
    '!hang') while :; do sleep 1; done ;;
    '!child-hang') sh -c 'while :; do sleep 1; done' & ;;
    '!eat-stdin') cat > /dev/null ;;
    *) printf '%s\n' "$line" ;;
  esac
done 3< "$scenario"
