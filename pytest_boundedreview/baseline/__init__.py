"""Stage 2: the tests' failures at head and at base, classified."""
