"""Typed dispositions: the committed waivers file, read from the reviewed snapshot (or with
``waivers_from = "base"``, from the base commit), and what it does to one review's findings.
A waiver the change itself adds is marked as such wherever it is reported. A waiver takes a
finding out of the gate only by its rules, and the finding stays in the report with its
waiver; a waiver that applies to nothing is reported.

- ``user`` never waives a protected finding (security, data-loss, authorization, cryptography,
  plus ``protected_categories``) nor an unclassified one (a category outside the taxonomy, or
  a check without a ``category``).
- ``security-reviewer`` waives those only on the exact revision its evidence names.
- Past ``expires`` a waiver is void; one that matches nothing is stale.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING

from ..change import git
from ..change.freeze import tree_with
from ..core.errors import ConfigError
from ..models.record import record

if TYPE_CHECKING:  # the finding and waiver models load only when a waivers file exists
    from ..core.settings.config import Settings
    from ..models.finding import ReportFinding
    from ..models.report import CheckResult
    from ..models.waiver import WaivedFinding, Waiver, WaiverNote


def known_categories() -> set[str]:
    """Every category of the taxonomy, protected ones included."""
    from ..models.finding import ADVISORY_CATEGORIES, BLOCKING_CATEGORIES
    from ..models.waiver import PROTECTED_CATEGORIES

    return {*BLOCKING_CATEGORIES, *ADVISORY_CATEGORIES, *PROTECTED_CATEGORIES}


def parse(text: str, where: str) -> list[Waiver]:
    """The waivers of a file's text, or a :class:`ConfigError` naming file, entry and field."""
    from pydantic import ValidationError

    from ..core.configfile import toml
    from ..core.validation import describe_all
    from ..models.waiver import Waiver

    tomllib = toml()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"waiver"})
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {unknown[0]!r}; only [[waiver]] entries belong here"
        )
    entries = data.get("waiver", [])
    if not isinstance(entries, list):
        raise ConfigError(f"{where}: `waiver` must be an array of tables ([[waiver]])")
    waivers = []
    for number, entry in enumerate(entries, 1):
        try:
            waivers.append(Waiver.model_validate(entry))
        except ValidationError as exc:
            named = entry.get("fingerprint") if isinstance(entry, dict) else None
            which = f"[[waiver]] entry {number}" + (f" ({named})" if named else "")
            raise ConfigError(f"{where}: {which}: {'; '.join(describe_all(exc))}") from None
    return waivers


def blob_names(tree: str, settings: Settings, base: str | None) -> list[str]:
    """The blobs :func:`load` and :func:`added` read: the waivers file in the snapshot
    ``tree`` and at the ``base`` commit."""
    return [f"{rev}:{settings.waivers_file}" for rev in (tree, base) if rev is not None]


def load(repo: git.Repo, tree: str, settings: Settings, base: str | None = None) -> list[Waiver]:
    """The waivers file as the reviewed snapshot has it (none when it has none); with
    ``waivers_from = "base"``, as the base commit ``base`` has it."""
    source = base if settings.waivers_from == "base" and base is not None else tree
    text = repo.show(source, settings.waivers_file)
    return [] if text is None else parse(text, settings.waivers_file)


def added(
    repo: git.Repo, base: str | None, settings: Settings, waivers: Sequence[Waiver]
) -> list[Waiver]:
    """The ``waivers`` the change itself adds: those the base's waivers file lacks (all of
    them when the base's file cannot be read as waivers)."""
    if not waivers or base is None:
        return []
    text = repo.show(base, settings.waivers_file)
    try:
        there = [] if text is None else parse(text, settings.waivers_file)
    except ConfigError:
        there = []
    return [waiver for waiver in waivers if waiver not in there]


def code_revision(repo: git.Repo, revision: str, path: str) -> str:
    """The revision a security reviewer's evidence names: the snapshot without the waivers
    file, so recording a waiver does not change what it was made on. Plans keep theirs."""
    tree = revision.removeprefix("tree:")
    if tree == revision or repo.show(tree, path) is None:
        return revision
    return "tree:" + tree_with(repo, tree, path, None)


@record
class Disposed:
    """One review's findings and checks after the waivers: what still counts, what a waiver
    took out (still reported), and the waivers that did not apply."""

    findings: list[ReportFinding] = field(default_factory=list)
    waived: list[WaivedFinding] = field(default_factory=list)
    checks: list[CheckResult] = field(default_factory=list)
    notes: list[WaiverNote] = field(default_factory=list)


def refusal(waiver: Waiver, category: str | None, revision: str, protected: set[str]) -> str | None:
    """Why ``waiver`` may not waive a finding of ``category`` on ``revision``, or ``None``."""
    unclassified = category is None or category not in known_categories() | protected
    guarded = unclassified or category in protected
    what = "an unclassified finding" if unclassified else f"a protected finding ({category})"
    if waiver.disposition == "user" and guarded:
        return f"a user waiver never waives {what}: a security-reviewer waiver may"
    evidence = waiver.evidence
    if evidence is not None and evidence.revision != revision:  # bound to the exact revision
        return f"its evidence ({evidence.reference}) is for {evidence.revision}, not {revision}"
    return None


def dispose(
    waivers: Sequence[Waiver],
    findings: Sequence[ReportFinding],
    checks: Sequence[CheckResult],
    revision: str,
    settings: Settings,
    today: datetime.date | None = None,
    added: Sequence[Waiver] = (),
) -> Disposed:
    """Apply ``waivers`` to ``findings`` and the checks' target-related findings; those in
    ``added`` (the change adds them itself) are marked so wherever they are reported."""
    from ..models.waiver import PROTECTED_CATEGORIES, WaivedCheckFinding, WaivedFinding

    today = today or datetime.datetime.now(datetime.timezone.utc).date()
    protected = {*PROTECTED_CATEGORIES, *settings.protected_categories}
    categories: Mapping[str, str | None] = {c.name: c.category for c in settings.checks}
    out = Disposed(findings=list(findings), checks=list(checks))
    for waiver in waivers:
        new = waiver in added
        if waiver.expires is not None and waiver.expires < today:
            why = f"expired on {waiver.expires.isoformat()}"
            out.notes.append(_note("void", waiver, why, new))
            continue
        # what it matches is decided on the review's findings, whatever earlier waivers did
        matched = sum(f.fingerprint == waiver.fingerprint for f in findings)
        matched += sum(
            f.fingerprint == waiver.fingerprint for c in checks for f in c.target_related
        )
        for finding in [f for f in out.findings if f.fingerprint == waiver.fingerprint]:
            refused = refusal(waiver, finding.category, revision, protected)
            if refused:
                out.notes.append(_note("refused", waiver, refused, new))
                continue
            out.findings.remove(finding)
            kept = finding.model_dump(by_alias=True)
            out.waived.append(
                WaivedFinding.model_validate({**kept, "waiver": waiver, "added_by_change": new})
            )
        for index, check in enumerate(out.checks):
            hits = [f for f in check.target_related if f.fingerprint == waiver.fingerprint]
            if not hits:
                continue
            refused = refusal(waiver, categories.get(check.name), revision, protected)
            if refused:
                out.notes.append(_note("refused", waiver, refused, new))
                continue
            waived = [
                WaivedCheckFinding.model_validate(
                    {
                        **hit.model_dump(),
                        "check": check.name,
                        "waiver": waiver,
                        "added_by_change": new,
                    }
                )
                for hit in hits
            ]
            left = [f for f in check.target_related if f.fingerprint != waiver.fingerprint]
            out.checks[index] = dataclasses.replace(
                check, target_related=left, waived=[*check.waived, *waived]
            )
        if not matched:
            out.notes.append(_note("stale", waiver, "matches no finding of this review", new))
    return out


def _note(state: str, waiver: Waiver, why: str, new: bool) -> WaiverNote:
    from ..models.waiver import WaiverNote

    return WaiverNote.model_validate(
        {
            "state": state,
            "fingerprint": waiver.fingerprint,
            "disposition": waiver.disposition,
            "by": waiver.by,
            "why": why,
            "added_by_change": new,
        }
    )
