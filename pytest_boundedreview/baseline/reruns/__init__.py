"""The re-run child both sides use: its start, what it is given, the waits on it, the cache."""
