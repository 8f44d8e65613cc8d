"""What a classification of the session's failures holds (classify.py makes it) and what a
session asks the base besides its failures: plain values, read by the report, the gate and the
review phase without the machinery that runs tests at the base."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field, replace

from ..core.redaction import Redact
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

    def scrubbed(self, redact: Redact) -> Classification:
        """This classification as the report and the reviewers receive it: the node id of each
        failure and newly skipped test (a parametrize id can hold a secret), its reason and
        base signature, and the limitations, scrubbed by ``redact``. Signatures were scrubbed
        where they were taken, before base and head were compared; node ids only here, after
        every re-run and match used them as they are."""

        def each(failures: list[TestFailure]) -> list[TestFailure]:
            return [
                replace(
                    f,
                    nodeid=redact(f.nodeid),
                    reason=redact(f.reason) if f.reason else f.reason,
                    base_signature=redact(f.base_signature) if f.base_signature else None,
                )
                for f in failures
            ]

        return replace(
            self,
            target_related=each(self.target_related),
            pre_existing=each(self.pre_existing),
            flaky=each(self.flaky),
            unknown=each(self.unknown),
            limitations=[redact(text) for text in self.limitations],
            newly_skipped=each(self.newly_skipped),
        )


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
