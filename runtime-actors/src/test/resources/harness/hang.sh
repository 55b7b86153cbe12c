# Writes its pid (= its group) to ./hang.pid, then never answers.
echo $$ > hang.pid
sleep 300 &
sleep 300
