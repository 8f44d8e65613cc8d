"""Triage: every lane finding checked, verified, demoted or rejected, and merged.

Order matters and is fixed: validation, location, quote, reproduction, demotion, scout
reconciliation, then deduplication — so a finding whose quote or reproduction fails is rejected
even when another lane raised a valid finding at the same place.
"""
