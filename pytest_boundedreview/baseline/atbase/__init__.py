"""The re-run at the base: a checkout of the base, the re-run started there (or early, at the
first question the cache does not know), and what happened to each test."""
