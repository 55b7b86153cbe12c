# Children that outlive the parent: a child and a grandchild (pipes redirected away), then the
# parent prints the result and exits 0.
. "${0%/*}/prelude.sh"
IFS= read -r task
sh -c 'sleep 300 & wait' < /dev/null > /dev/null 2>&1 &
echo '{"type":"turn-end","value":"left children behind"}'
exit 0
