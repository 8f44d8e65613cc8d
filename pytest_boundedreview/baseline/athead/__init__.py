"""What happened at head: failures re-run where they ran, and each test's call witnessed."""
