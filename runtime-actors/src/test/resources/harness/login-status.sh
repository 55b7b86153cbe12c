# A login check answer on both streams, exit 1, showing the granted env and workdir.
echo "logged-out PATH=$PATH HOME=${HOME:-unset} PWD=$(pwd -P)"
echo 'please sign in' >&2
exit 1
