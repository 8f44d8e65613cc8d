"""What happened at head: failures re-run in the session's process, on its xdist workers or in an
early child, and each test's call witnessed against what was reported of it."""
