# Writes $1 lines as fast as it can, then "flood-done".
yes 'flood-line-0123456789-0123456789-0123456789' | head -n "$1"
echo flood-done
