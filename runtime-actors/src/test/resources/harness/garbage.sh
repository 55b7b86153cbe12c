# Invalid UTF-8 in a line.
printf '\377\376ok\300\n'
