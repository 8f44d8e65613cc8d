"""What a classification of the session's failures holds (classify.py makes it) and what a
session asks the base besides its failures: plain values, read by the report, the gate and the
review phase without the machinery that runs tests at the base."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field

from ..models import TestFailure
from ..models.record import record


@record
class Classification:
    target_related: list[TestFailure] = field(default_factory=list)
    pre_existing: list[TestFailure] = field(default_factory=list)
    flaky: list[TestFailure] = field(default_factory=list)
    unknown: list[TestFailure] = field(default_factory=list)
    limitations: list[str] = field(default_factory=list)
    # Tests skipped (or xfailed) at head that pass at the base (see Questions).
    newly_skipped: list[TestFailure] = field(default_factory=list)
    # The tests the base collects from the paths listed; None when it was not asked or
    # could not tell.
    listed: frozenset[str] | None = None


@record(frozen=True)
class Questions:
    """What a session asks the base besides its failures: whether the tests it skipped (or
    xfailed), and the files it skipped whole at collection, pass there; and which tests the
    base collects from ``listing`` (paths relative to the rootdir)."""

    skipped: Sequence[str] = ()
    skipped_files: Sequence[str] = ()
    listing: Sequence[str] = ()

    def __bool__(self) -> bool:
        return bool(self.skipped or self.skipped_files or self.listing)
