"""The rules a change is reviewed under: ``[tool.bounded-review]`` as the base commit has it,
read from git without touching the working tree, against the change's own.

A change that relaxes a key of :data:`~pytest_boundedreview.core.settings.baserules.RULES` is
reviewed under the base's value, and the report lists what it proposes as an advisory finding;
a change that tightens one applies at once. A first configuration (none at the base) is held to
the defaults, which are then the base's rules; a base configuration this version cannot read or
validate gives way to the change's, with a limitation that says so. When the two tables are
equal, the base's is not validated again. The base and the target kind, which choose the base
commit itself, are read ahead where the change cannot reach (:func:`chosen`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast, get_args

from ..core.configfile import MAX_CONFIG_BYTES, TABLE, read_toml, toml
from ..core.pytestconfig.pytestini import options_of, words
from ..core.settings.baserules import REDUCING, Proposal, configured_values, govern
from ..core.settings.config import Settings, validated
from ..models.record import record
from . import git
from .base import unconfigured_base
from .freeze import RequestedKind

if TYPE_CHECKING:
    from ..models.finding import ReportFinding

NOTE = "config: applies after merge"


@record(frozen=True)
class Ruled:
    """The settings of this review, what the change proposes, and where its table is."""

    settings: Settings
    proposals: list[Proposal] = field(default_factory=list)
    path: str = "pyproject.toml"  # the change's configuration file, from the repository root
    text: str = ""  # its text, to find a key's line
    limitations: list[str] = field(default_factory=list)
    # the value the rules give, without the command line, of each option given that can
    # make the review less than they ask (report/claims.py)
    configured: dict[str, object] = field(default_factory=dict)

    def findings(self) -> list[ReportFinding]:
        """One advisory finding per relaxing value the change proposes."""
        return [_finding(p, self.path, _line(self.text, p.key)) for p in self.proposals]


def _candidates(start: Path, root: Path) -> list[str]:
    """``pyproject.toml`` from ``start`` up to ``root``, as paths from the repository root."""
    try:
        folder = start.resolve().relative_to(root.resolve())
    except ValueError:
        return ["pyproject.toml"]
    return [(parent / "pyproject.toml").as_posix() for parent in [folder, *folder.parents]]


def blob_names(repo: git.Repo, commit: str, start: Path) -> list[str]:
    """The blobs :func:`base_table` reads: each ``pyproject.toml`` it may look in."""
    return [f"{commit}:{name}" for name in _candidates(start, repo.root)]


def base_table(
    repo: git.Repo, commit: str, start: Path
) -> tuple[str | None, dict[str, Any] | None, str | None]:
    """The nearest ``pyproject.toml`` with the table at ``commit``, searched as the working
    tree's is, in one read: (its path, the table, why it cannot be read). ``(None, None,
    None)`` when the base has none."""
    names = _candidates(start, repo.root)
    blobs = git.read_objects(repo.root, blob_names(repo, commit, start))
    for name in names:
        blob = blobs.get(f"{commit}:{name}")
        if blob is None:
            continue
        if len(blob) > MAX_CONFIG_BYTES:
            return name, None, f"{len(blob)} bytes is over the limit of {MAX_CONFIG_BYTES}"
        tomllib = toml()
        try:
            data = tomllib.loads(blob.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            return name, None, f"not valid TOML: {exc}"
        table = data.get("tool", {}).get("bounded-review") if isinstance(data, dict) else None
        if table is None:
            continue
        if not isinstance(table, dict):
            return name, None, f"[{TABLE}] is not a table"
        return name, table, None
    return None, None, None


@record(frozen=True)
class Chosen:
    """The base and target kind a review is frozen with."""

    base: str | None
    target: RequestedKind


def chosen(
    repo: git.Repo,
    settings: Settings,
    overrides: Mapping[str, object],
    start: Path,
    head: str | None,
    env: Mapping[str, str],
) -> Chosen | None:
    """The base and target the review is frozen with when the working tree's table names
    either and no option does: the configuration's at a commit the change cannot move (the
    merge base with the base named without configuration, else HEAD). ``None`` when the
    working tree names neither: the freeze takes the options and defaults, and :func:`rule`
    holds them to the base commit's table."""
    named = [key for key in ("base", "target") if key not in overrides]
    if all(getattr(settings, key) == getattr(Settings, key) for key in named):
        return None
    at = reference(repo, env, head)
    table = (base_table(repo, at, start)[1] if at else None) or {}
    base = overrides.get("base", table.get("base"))
    target = overrides.get("target", table.get("target"))
    return Chosen(
        base if isinstance(base, str) else None,
        cast("RequestedKind", target) if target in get_args(RequestedKind) else "auto",
    )


def reference(repo: git.Repo, env: Mapping[str, str], head: str | None) -> str | None:
    """A commit the change cannot move: the merge base of ``head`` with the base named without
    any configuration, else ``head`` itself (``None`` before the first commit)."""
    return (unconfigured_base(repo, env, head) or head) if head else None


def addopts_at(repo: git.Repo, commit: str | None, path: Path) -> tuple[str, ...] | None:
    """The ``addopts`` of the pytest configuration file ``path`` as ``commit`` has it (``None``
    when it has no such file or the file cannot be read); a file outside the repository is
    none of the change's, read as it is."""
    try:
        name = path.resolve().relative_to(repo.root.resolve()).as_posix()
    except ValueError:
        text: str | None = path.read_text(encoding="utf-8", errors="replace")
    else:
        text = repo.show(commit, name) if commit else None
    try:
        options = options_of(path.name, text) if text is not None else None
    except ValueError:
        return None
    return words((options or {}).get("addopts", ()))


def rule(
    repo: git.Repo,
    base_commit: str | None,
    head: Settings,
    head_path: Path | None,
    start: Path,
    overrides: Mapping[str, object] | None = None,
    extra: Mapping[str, object] | None = None,
) -> Ruled:
    """The settings ``head`` (loaded from ``head_path``, with ``overrides`` given at
    invocation and ``extra``, the change's own options from its pytest configuration) gives
    way to where the base's configuration is stricter."""
    given = {key: value for key, value in (overrides or {}).items() if value is not None}
    ruled = _rule(repo, base_commit, head, head_path, start, given, extra or {})
    if not given.keys() & REDUCING:  # the usual run: no table read again
        return ruled
    base = None
    if base_commit is not None:  # a first configuration is held to the defaults, as in _rule
        _, table, broken = base_table(repo, base_commit, start)
        base = (table or {}) if broken is None else None
    configured = configured_values(given, _table(head_path), base)
    return dataclasses.replace(ruled, configured=configured)


def _rule(
    repo: git.Repo,
    base_commit: str | None,
    head: Settings,
    head_path: Path | None,
    start: Path,
    given: Mapping[str, object],
    extra: Mapping[str, object],
) -> Ruled:
    where = _relative(repo, head_path)
    if base_commit is None:
        return Ruled(head, path=where)
    head_table = {**_table(head_path), **extra}
    name, table, broken = base_table(repo, base_commit, start)
    if broken is not None:
        why = f"the base's {name} cannot be read ({broken}): the change's configuration applies"
        return Ruled(head, path=where, limitations=[why])
    if (table or {}) == head_table:
        return Ruled(head, path=where)  # the base's own configuration, or none on either side
    try:
        # a first configuration is held to the defaults, as the base's rules
        base = validated({**(table or {}), **given})
    except ValueError as exc:  # pydantic's ValidationError is one
        first = str(exc).strip().splitlines()
        detail = first[1].strip() if len(first) > 1 else (first[0] if first else "invalid")
        why = (
            f"the base's [{TABLE}] in {name} does not validate under this version ({detail}): "
            "the change's configuration applies"
        )
        return Ruled(head, path=where, limitations=[why])
    governed = govern(base, head)
    text = head_path.read_text(encoding="utf-8", errors="replace") if head_path else ""
    return Ruled(governed.settings, governed.proposals, where, text)


def _relative(repo: git.Repo, path: Path | None) -> str:
    if path is None:
        return "pyproject.toml"
    try:
        return path.resolve().relative_to(repo.root.resolve()).as_posix()
    except ValueError:
        return path.name


def _table(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    table = read_toml(path).get("tool", {}).get("bounded-review")
    return table if isinstance(table, dict) else {}


def _line(text: str, key: str) -> int:
    """The line of ``key`` in the change's configuration, or 1: a named check or lane by its
    ``name``, a table's key by its own name."""
    head, _, tail = key.partition(".")
    if head in ("checks", "lanes") and tail:
        pattern = rf"^\s*name\s*=\s*[\"']{re.escape(tail)}[\"']"
    else:
        pattern = rf"^\s*{re.escape(tail or head)}\s*="
    for number, line in enumerate(text.splitlines(), 1):
        if re.match(pattern, line):
            return number
    return 1


def _finding(proposal: Proposal, path: str, line: int) -> ReportFinding:
    from ..core.fingerprint import finding_fingerprint
    from ..models.finding import ReportFinding

    key = proposal.key
    return ReportFinding(
        path=path,
        line=line,
        severity="advisory",
        category="requirement",
        failure_mode=(
            f"the change {proposal.why} (`{key}`): this review keeps the base's rule; the "
            "change's applies after merge"
        ),
        evidence=f"`{key}` is {proposal.base} at the base and {proposal.head} in the change",
        remediation=(
            "a change cannot relax the rules of its own review: merge the configuration "
            "change on its own, reviewed by the base's rules"
        ),
        fingerprint=finding_fingerprint(path, "requirement", f"config:{key}={proposal.head}"),
        verification="deterministic",
        note=NOTE,
    )
