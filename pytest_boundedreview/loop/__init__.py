"""The loop ledger: a review's rounds and their lanes' attempts, bounded and kept crash-safe
on disk."""
