"""Stable identities of findings across rounds: path, category and the located text."""

from __future__ import annotations

import hashlib


def normalise_text(text: str) -> str:
    """Whitespace folded, so re-indentation does not change an identity."""
    return " ".join(text.split())


def finding_fingerprint(path: str, category: str, located_text: str) -> str:
    """Not the line number (lines move) and not the reviewer's wording (it changes)."""
    key = "\0".join([path, category, normalise_text(located_text)])
    return hashlib.sha256(key.encode()).hexdigest()[:20]
