# Closes its stdout and keeps running.
echo before-close
exec 1>&-
exec sleep 300
