"""Plan review."""
