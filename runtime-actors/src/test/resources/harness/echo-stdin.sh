# Echoes stdin; ends when stdin is closed.
exec cat
