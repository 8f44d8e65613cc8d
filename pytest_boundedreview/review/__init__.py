"""The post-test phase: checks, scans, lanes and triage as one round, and the gate."""
