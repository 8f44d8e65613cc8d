"""``bounded-review waive FINGERPRINT``: append a typed, accountable waiver to the committed
waivers file, for a finding of the last report, under the same rules the review applies."""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..change import git
from ..change.statedir import approver
from ..core.errors import UsageError
from ..core.settings.config import load_settings
from ..core.statefile import write_atomic
from ..core.validation import describe_all
from ..models.report import Report
from ..models.waiver import PROTECTED_CATEGORIES, Waiver
from ..triage.waivers import code_revision, parse, refusal
from .documents import last_report


def _category(report: Report, fingerprint: str, checks: dict[str, str | None]) -> str | None:
    """The category of ``fingerprint`` in ``report``; a :class:`UsageError` when it has none."""
    found = report.findings
    for finding in [*found.blocking, *found.advisory, *found.waived]:
        if finding.fingerprint == fingerprint:
            return finding.category
    for check in report.checks:
        if any(f.fingerprint == fingerprint for f in [*check.target_related, *check.waived]):
            return checks.get(check.name)
    raise UsageError(
        f"fingerprint {fingerprint!r} is not a finding or check finding of the last report "
        f"({report.target.revision}): copy it from `bounded-review report`"
    )


def _basic(text: str) -> str:
    """``text`` as a TOML basic string (JSON's escapes, and DEL escaped as TOML requires)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml(waiver: Waiver) -> str:
    """The waiver as a ``[[waiver]]`` table."""
    lines = ["[[waiver]]"]
    for key in ("fingerprint", "disposition", "reason", "by"):
        lines.append(f"{key} = {_basic(getattr(waiver, key))}")
    if waiver.expires is not None:
        lines.append(f"expires = {waiver.expires.isoformat()}")
    if waiver.evidence is not None:
        reference = _basic(waiver.evidence.reference)
        revision = _basic(waiver.evidence.revision)
        lines.append(f"evidence = {{ reference = {reference}, revision = {revision} }}")
    return "\n".join(lines) + "\n"


def cmd_waive(args: argparse.Namespace) -> int:
    repo = git.open_repo(Path.cwd())
    settings, _ = load_settings(Path.cwd(), repo.root, {}, approver(repo))
    report = last_report(args.report)
    checks = {check.name: check.category for check in settings.checks}
    category = _category(report, args.fingerprint, checks)
    by = args.by or git.run(["config", "user.email"], repo.root, check=False).stdout.decode()
    revision = code_revision(repo, report.target.revision, settings.waivers_file)
    entry: dict[str, Any] = {
        "fingerprint": args.fingerprint,
        "disposition": args.disposition,
        "reason": args.reason,
        "by": by.strip(),
    }
    if args.expires:
        try:
            entry["expires"] = datetime.date.fromisoformat(args.expires)
        except ValueError:
            raise UsageError(f"--expires {args.expires!r} is not a date (YYYY-MM-DD)") from None
        if entry["expires"] < datetime.datetime.now(datetime.timezone.utc).date():
            raise UsageError(f"--expires {args.expires} is past: the waiver would be void")
    if args.evidence:
        entry["evidence"] = {"reference": args.evidence, "revision": revision}
    if not entry["by"]:
        raise UsageError("no --by given and no `git config user.email`: say who answers for it")
    try:
        waiver = Waiver.model_validate(entry)
    except ValidationError as exc:
        raise UsageError(f"the waiver is not valid: {'; '.join(describe_all(exc))}") from None
    protected = {*PROTECTED_CATEGORIES, *settings.protected_categories}
    refused = refusal(waiver, category, revision, protected)
    if refused:
        raise UsageError(f"refused: {refused}")
    path = (repo.root / settings.waivers_file).resolve()  # a linked file is written through
    old = path.read_bytes() if path.exists() else b""
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    parse(old.decode("utf-8"), settings.waivers_file)  # a malformed file is not appended to
    gap = b"" if not old else (b"\n" if old.endswith(b"\n") else b"\n\n")
    new = old + gap + _toml(waiver).encode("utf-8")
    if parse(new.decode("utf-8"), settings.waivers_file)[-1] != waiver:
        raise UsageError(f"{path}: the appended waiver would not read back as written")
    write_atomic(path, new)
    path.chmod(mode)  # the file keeps its permissions
    print(f"waived {args.fingerprint} ({args.disposition}, by {waiver.by}) in {path}")
    return 0
