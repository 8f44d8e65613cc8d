"""Configured check commands, run at head and — when they fail or report — at the base."""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..baseline.reruns.childenv import child_env
from ..change import git
from ..change.checkouts import kept, worktree
from ..change.scope import Scope
from ..core import subproc
from ..core.errors import GitError
from ..core.redaction import Redactor
from ..core.settings.tables import CheckConfig
from ..models.finding import CheckFinding
from ..models.record import record
from ..models.report import CheckResult
from .parse import (
    SARIF_MAX_BYTES,
    CheckOutputError,
    RawFinding,
    fingerprinted,
    parse_gnu,
    parse_sarif,
)

OUTPUT_CAP = 16 * 1024 * 1024


@record(frozen=True)
class Ran:
    """One run of one check in one tree: its findings, or why it could not run."""

    findings: list[CheckFinding] | None
    failed: bool
    problem: str = ""


def _env(environ: Mapping[str, str] | None) -> dict[str, str]:
    env = child_env(environ=environ)
    # Tools installed next to this interpreter (a virtualenv's bin/) come first.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def run_once(
    check: CheckConfig,
    root: Path,
    scope: Scope | None = None,
    environ: Mapping[str, str] | None = None,
) -> Ran:
    """Run ``check`` with ``root`` as working directory and read its findings (``scope``: the
    change's added lines, at head, so a new duplicate is the one the change added;
    ``environ``: the session's environment as it started, else the process's).

    What the check says is scrubbed of the secrets of the environment it ran with before its
    findings are fingerprinted: the same text at base and head, so they still match, and a
    rotated secret does not make a finding new."""
    cap = SARIF_MAX_BYTES if check.format == "sarif" else OUTPUT_CAP  # big repos, big logs
    env = _env(environ)
    redact = Redactor(env)  # compiled only if there is something to scrub
    out = subproc.run(check.command, cwd=root, env=env, timeout=check.timeout, cap=cap)
    if out.start_error:
        return Ran(None, True, f"could not start: {out.start_error}")
    if out.timed_out:
        return Ran(None, True, f"timed out after {check.timeout:g}s")
    if out.truncated:
        return Ran(None, True, f"output over {cap} bytes")
    failed = out.returncode != 0
    raw: list[RawFinding] = []
    try:
        if check.format == "sarif":
            raw = parse_sarif(out.stdout, root) if out.stdout.strip() else []
        elif check.format == "gnu":
            raw = parse_gnu(out.stdout.decode("utf-8", "replace"), root)
    except CheckOutputError as exc:
        return Ran(None, True, redact(str(exc)))
    if failed and not raw:  # a failure without findings is one finding: the check failed
        tail = (out.stderr or out.stdout).decode("utf-8", "replace").strip().splitlines()
        message = f"exit {out.returncode}" + (f": {redact(tail[-1])[:200]}" if tail else "")
        raw = [RawFinding(rule=f"{check.name}:exit", path=None, line=None, message=message)]
    else:  # a passing check's empty answer is never looked at
        raw = [dataclasses.replace(f, message=redact(f.message)) for f in raw]
    added = (lambda path, line: scope.is_added(path, line)) if scope is not None else None
    return Ran(fingerprinted(raw, root, added), failed or bool(raw))


def _compare(check: CheckConfig, head: Ran, base: Ran | None) -> CheckResult:
    assert head.findings is not None
    if not head.failed:
        return CheckResult(name=check.name, required=check.required, status="pass")
    if base is None or base.findings is None:
        # The findings were never shown to be new: fail closed, as for tests at an unknown base.
        why = base.problem if base is not None else "no base to compare with"
        return CheckResult(
            name=check.name,
            required=check.required,
            status="not-run",
            target_related=head.findings,
            detail=f"{len(head.findings)} finding(s) at head, but the base run failed ({why}): "
            "new and pre-existing findings cannot be told apart",
        )
    known = {finding.fingerprint for finding in base.findings}
    new = [f for f in head.findings if f.fingerprint not in known]
    old = [f for f in head.findings if f.fingerprint in known]
    return CheckResult(
        name=check.name,
        required=check.required,
        status="fail",
        target_related=new,
        pre_existing=old,
        detail=f"{len(new)} new, {len(old)} also at base",
    )


def run_all(
    checks: Sequence[CheckConfig],
    repo: git.Repo,
    base_commit: str | None,
    progress: Callable[[str], None],
    scope: Scope | None = None,
    reuse: bool = False,
    environ: Mapping[str, str] | None = None,
) -> list[CheckResult]:
    """Every configured check, classified against the base (run in a kept base checkout
    with ``reuse``, as the base re-runs are: see change/checkouts/kept.py), at both in ``environ``
    (the session's environment as it started: not what the change's code set since)."""
    results: dict[str, CheckResult] = {}
    heads: dict[str, Ran] = {}
    for check in checks:
        progress(f"check {check.name}: running at head")
        ran = run_once(check, repo.root, scope, environ)
        if ran.findings is None:
            results[check.name] = CheckResult(
                name=check.name, required=check.required, status="not-run", detail=ran.problem
            )
        else:
            heads[check.name] = ran
    needing_base = [c for c in checks if c.name in heads and heads[c.name].failed]
    bases: dict[str, Ran] = {}
    if needing_base and base_commit is not None:
        try:
            place = kept.checkout if reuse else worktree.checkout
            with place(repo, base_commit) as checkout:
                for check in needing_base:
                    progress(f"check {check.name}: running at base {base_commit[:12]}")
                    bases[check.name] = run_once(check, checkout, environ=environ)
        except GitError as exc:
            for check in needing_base:
                bases[check.name] = Ran(None, True, f"base unreachable: {exc}")
    elif needing_base:  # no base commit: nothing existed, every finding is new
        bases = {c.name: Ran([], False) for c in needing_base}
    for check in checks:
        if check.name in heads:
            results[check.name] = _compare(check, heads[check.name], bases.get(check.name))
    return [results[check.name] for check in checks]
