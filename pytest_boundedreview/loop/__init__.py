"""The loop ledger: rounds, attempts and ceilings, kept crash-safe on disk."""
