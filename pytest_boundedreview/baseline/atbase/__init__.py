"""The re-run at the base: where and how it starts, early or at the session's end."""
