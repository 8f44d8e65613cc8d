"""The re-run child shared by the base and the head: its start, environment, recorder, options
and seed, the waits on it, the session's run as re-runs need it, and the base cache."""
