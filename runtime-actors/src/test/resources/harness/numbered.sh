# Writes the numbers 1 to $1, one a line, as fast as it can, then "numbered-done".
seq 1 "$1"
echo numbered-done
