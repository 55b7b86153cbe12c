# Exits 145 by itself, as Gemini CLI does after an HTTP 401 (the status modulo 256).
echo 'denied'
exit 145
