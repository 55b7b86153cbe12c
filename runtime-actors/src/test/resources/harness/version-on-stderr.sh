# Prints its version on stderr only.
echo 'fake 3.0.0' >&2
