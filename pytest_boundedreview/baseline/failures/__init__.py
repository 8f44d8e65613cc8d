"""What a test's outcome is, and how its failure is told again elsewhere."""
