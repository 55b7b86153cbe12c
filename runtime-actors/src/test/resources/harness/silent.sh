# Prints nothing.
exit 0
