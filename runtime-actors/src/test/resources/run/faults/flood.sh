# Stdout flood: 400000 valid note lines as fast as the pipe takes them, then the result.
# (The count is FLOOD_LINES in HarnessFaultMatrixTest.)
. "${0%/*}/prelude.sh"
IFS= read -r task
yes '{"type":"note","value":"flood"}' | head -n 400000
echo '{"type":"turn-end","value":"flooded"}'
