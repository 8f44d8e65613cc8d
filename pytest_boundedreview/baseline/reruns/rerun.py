"""Re-run chosen node ids in a pytest subprocess and read back their outcomes.

Used at head (is a failure flaky?) and in a base checkout (did it fail before the change?).
The child runs with the recorder plugin, which keeps only the chosen ids and writes outcomes to
a temporary folder of ours; its cache goes there too, so the checkout is not written to.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Literal

from ...core import subproc, tempdirs
from ...core.redaction import Redactor
from ...models.record import record
from ..checkout import artefacts, basefirst, compilemo
from ..checkout.artefacts import Preparation
from . import recorder, waits
from .childenv import configured_in, has_terminal, loads_xdist


@record(frozen=True)
class Ask:
    """What a re-run is asked: run ``nodeids`` and every test of the files ``whole``, and
    list every test collected from the paths ``listing`` (files or folders; ``.`` is the
    rootdir). Paths are relative to the rootdir the re-run runs in."""

    nodeids: frozenset[str] = frozenset()
    whole: tuple[str, ...] = ()
    listing: tuple[str, ...] = ()

    @classmethod
    def of(cls, nodeids: Iterable[str]) -> Ask:
        return cls(frozenset(nodeids))

    def described(self, kind: str = "re-run", place: str = "") -> str:
        """What a re-run of this is, for a progress line: "the base re-run of 3 test(s) at
        abc1234" (``kind`` "base re-run", ``place`` " at abc1234")."""
        tests = self.nodeids or not (self.whole or self.listing)
        what = [f"{len(self.nodeids)} test(s)"] if tests else []
        what += [f"{len(self.whole)} file(s) run whole"] if self.whole else []
        what += [f"the collection of {len(self.listing)} path(s)"] if self.listing else []
        return f"the {kind} of {' and '.join(what)}{place}"

    def files(self, rootdir: Path) -> list[str]:
        """What the re-run collects to run: the files of its node ids and the files it runs
        whole, those that exist in ``rootdir`` (and do not lead out of it). The paths it
        lists are collected apart (see recorder.py)."""
        wanted = {n.split("::", 1)[0] for n in self.nodeids} | {*self.whole}
        inside = rootdir.resolve()
        return sorted(f for f in wanted if (rootdir / f).exists() and _within(rootdir / f, inside))


@record(frozen=True)
class RerunResult:
    """Outcomes of one re-run. ``status`` is ``ok`` unless the run itself broke (``setup``:
    the set-up command run before it failed)."""

    status: Literal["ok", "timeout", "error", "setup", "vanished"]
    detail: str = ""
    found: frozenset[str] = frozenset()
    failed: Mapping[str, str] = field(default_factory=dict)
    passed: frozenset[str] = frozenset()
    # "module (file)" of each module a re-run in a copy of the repository ran from the live
    # repository instead: its outcomes then say nothing about the copy (see basefirst.py).
    live: tuple[str, ...] = ()
    # Compiled modules of the working tree the copy was not given that the re-run tried to
    # import (see artefacts.py): its outcomes may be theirs alone.
    withheld: tuple[str, ...] = ()
    listed: frozenset[str] = frozenset()  # every test collected from the paths listed
    # Why its answers other than a pass say nothing: what the copy could not be given as the
    # base has it (a base catalogue that does not compile, see compilemo.py).
    uncertain: tuple[str, ...] = ()


def _within(path: Path, folder: Path) -> bool:
    """Whether ``path`` (symlinks followed) lies in ``folder``: a node id never runs a file
    outside the tree it is run in."""
    return path.resolve().is_relative_to(folder)


class PendingRerun:
    """A re-run started by :func:`start_rerun`: :meth:`result` waits for its outcomes,
    :meth:`cancel` ends it. Either removes its folder; both are safe to call twice. The wait
    ends as soon as a folder the child works in is gone (``vanished``; see waits.py)."""

    def __init__(
        self,
        folder: Path | None = None,
        child: subproc.Started | subproc.Outcome | None = None,
        timeout: float = 0,
        in_copy: bool = False,
        watch: waits.Watch | None = None,
    ) -> None:
        self._folder, self._child, self._timeout = folder, child, timeout
        self._in_copy = in_copy  # the child ran in a copy and reports what it took from live
        self._watch = watch
        self._result: RerunResult | None = None

    @classmethod
    def vanished(cls, name: str, folder: Path) -> PendingRerun:
        """A re-run that cannot start: ``folder`` (``name``: what it was) is gone."""
        pending = cls()
        detail = f"{name} {folder} vanished during the run"
        pending._result = RerunResult(status="vanished", detail=detail)
        return pending

    def result(self) -> RerunResult:
        if self._result is None:
            try:
                self._result = self._read()
            finally:
                self.cancel()
        return self._result

    def cancel(self) -> None:
        if isinstance(self._child, subproc.Started):
            self._child.stop()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)

    def _read(self) -> RerunResult:
        if self._folder is None or self._child is None:
            return RerunResult(status="ok")  # nothing to run
        ready = (self._folder / recorder.READY).exists
        child, watch = self._child, self._watch
        # Once the child says its result is written, its terminal summary and exit (another
        # plugin's summary may take long) are not waited for; nor is a child whose folders
        # are gone (it waits for a file that never comes, or runs in no tree).
        done = ready if watch is None else (lambda: ready() or watch.look())
        outcome = child if isinstance(child, subproc.Outcome) else child.finish(done)
        if watch is not None and not ready() and watch.gone():  # its end may be theirs
            return RerunResult(status="vanished", detail=watch.vanished or "")
        setup = artefacts.setup_command(self._folder)
        if outcome.timed_out:
            detail = f"re-run timed out after {self._timeout:g}s"
            if setup is not None and not (self._folder / MADE).exists():
                detail = f"base_setup {shlex.join(setup)} did not finish within {self._timeout:g}s"
            return RerunResult(status="timeout", detail=detail)
        failed_setup = artefacts.setup_failure(self._folder)
        if failed_setup is not None:  # the set-up command's output, scrubbed as the child's
            return RerunResult(status="setup", detail=Redactor(os.environ)(failed_setup))
        result_file = self._folder / recorder.RESULT
        ended = outcome.done_early or outcome.returncode in (0, 1, 5)
        if not ended or not result_file.exists():
            tail = (outcome.stderr or outcome.stdout).decode("utf-8", "replace").strip()
            tail = outcome.start_error or "\n".join(tail.splitlines()[-5:])
            # What the tests printed last: scrubbed like their failures, wherever it is shown.
            detail = Redactor(os.environ)(f"exit {outcome.returncode}: {tail}")
            return RerunResult(status="error", detail=detail)
        data = json.loads(result_file.read_text(encoding="utf-8"))
        live = basefirst.read(self._folder) if self._in_copy else ()
        if live is None:
            detail = "the re-run did not report where its modules came from (basefirst)"
            return RerunResult(status="error", detail=detail)
        return RerunResult(
            status="ok",
            found=frozenset(data["found"]),
            failed={k: " | ".join(v) for k, v in data["failed"].items()},
            passed=frozenset(data["passed"]),
            live=live,
            withheld=basefirst.tried(self._folder) if self._in_copy else (),
            listed=frozenset(data.get("listed", ())),
            uncertain=compilemo.failures(str(self._folder)) if self._in_copy else (),
        )


def _select(folder: Path, ask: Ask, files: list[str]) -> None:
    """Write what the child runs, whole or not at all (a waiting child watches for it)."""
    partial = folder / (recorder.SELECT + ".part")
    data = {
        "nodeids": sorted(ask.nodeids),
        "files": files,
        "whole": list(ask.whole),
        "listing": list(ask.listing),
    }
    partial.write_text(json.dumps(data), encoding="utf-8")
    os.replace(partial, folder / recorder.SELECT)


def _start_child(
    folder: Path,
    rootdir: Path,
    args: Sequence[str],
    env: Mapping[str, str],
    timeout: float,
    files: Sequence[str] | None,
    paths: Sequence[str] = (),
    first: Sequence[str] = (),
    copy_of: tuple[Path, Path] | None = None,
    prepare: Preparation | None = None,
) -> subproc.Started | subproc.Outcome:
    """A pytest child recording into ``folder``: running ``files``, or, when ``files`` is
    ``None``, starting with ``paths`` (for their conftest files) and waiting for its
    selection; after the command ``first`` succeeds, if one is given (it makes ``rootdir``).
    With ``copy_of`` (the live repository, and the copy of it the child runs in), the child
    imports the copy's code wherever the environment points into the live one, once the copy
    is made ready by ``prepare`` (see artefacts.py)."""
    steps = [shlex.join(first)] if first else []
    if copy_of is not None:
        withheld = prepare.withheld if prepare is not None else ()
        env = basefirst.prepare(folder, *copy_of, env, withheld)
        if prepare is not None and prepare.needed:
            steps.append(prepare.script(*copy_of, rootdir, folder))
    argv = [sys.executable, "-m", "pytest", "-p", "pytest_boundedreview.baseline.reruns.recorder"]
    configured = configured_in(rootdir, copy_of)
    # -q and --tb are the terminal plugin's: unknown options where a session turned it off
    terminal = has_terminal(args, env, configured)
    argv += [f"--bounded-review-record={folder}", f"--rootdir={rootdir}"]
    argv += ["-q"] if terminal else []
    argv += ["-o", f"cache_dir={folder / 'cache'}", "--continue-on-collection-errors"]
    if loads_xdist(args, env, configured):
        argv += ["-n", "0"]
    # The signature comes from the exception itself: no traceback is rendered (--tb=no,
    # after the session's own options, wins), so a re-run costs about the test's own time.
    argv += [*args, *(["--tb=no"] if terminal else [])]
    argv += ["--bounded-review-wait", "--", *paths] if files is None else ["--", *files]
    if steps:  # then say so (MADE), and become the pytest child
        made, there = shlex.quote(str(folder / MADE)), shlex.quote(str(rootdir))
        steps += [f": > {made}", f"cd {there}", f"exec {shlex.join(argv)}"]
        return subproc.start(["sh", "-c", " && ".join(steps)], cwd=folder, env=env, timeout=timeout)
    return subproc.start(argv, cwd=rootdir, env=env, timeout=timeout)


def start_rerun(
    ask: Ask,
    *,
    rootdir: Path,
    args: Sequence[str],
    env: Mapping[str, str],
    timeout: float,
    copy_of: tuple[Path, Path] | None = None,
    prepare: Preparation | None = None,
    what: str = "",
) -> PendingRerun:
    """Start what ``ask`` asks (relative to ``rootdir``), once, in a pytest child; files
    missing there are skipped. ``copy_of``, ``prepare``: see :func:`_start_child`; ``what``:
    what its progress lines call it (see :meth:`Ask.described`)."""
    files = ask.files(rootdir)
    if not files and not ask.listing:
        return PendingRerun()
    folder = tempdirs.make("rerun")
    try:
        _select(folder, ask, files)
        child = _start_child(
            folder, rootdir, args, env, timeout, files, copy_of=copy_of, prepare=prepare
        )
        watch = waits.Watch(what or ask.described(), _folders(folder, copy_of))
        return PendingRerun(folder, child, timeout, copy_of is not None, watch)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _folders(folder: Path, copy_of: tuple[Path, Path] | None) -> list[tuple[str, Path]]:
    """The folders a re-run child works in, by what a reason calls them: its record folder,
    and the copy of the repository it runs in, if any."""
    found = [("the re-run's folder", folder)]
    return found + ([("the checkout", copy_of[1])] if copy_of is not None else [])


MADE = "made"  # the command a waiting child runs first has succeeded


class WaitingRerun:
    """A pytest child started before its node ids are known (see :func:`start_waiting`):
    its start overlaps whatever the starter does meanwhile."""

    def __init__(
        self,
        folder: Path,
        child: subproc.Started,
        rootdir: Path,
        timeout: float,
        made: bool,
        copy_of: tuple[Path, Path] | None = None,
        listing: tuple[str, ...] = (),
        kind: tuple[str, str] = ("re-run", ""),
    ) -> None:
        self._folder, self._child, self._timeout = folder, child, timeout
        self.rootdir = rootdir
        self.made = made  # ``rootdir`` is there (else the command run first is making it)
        self._copy_of = copy_of
        self._in_copy = copy_of is not None
        self._listing = listing  # the paths the child lists before it waits
        self._kind = kind  # what its progress lines call it, and where (see Ask.described)

    def hand(self, ask: Ask) -> PendingRerun | None:
        """Give the child what it is asked (see :class:`Ask`), its time counted from now;
        ``None`` when it has already ended, or a folder it works in is gone (then the caller
        starts a re-run of its own)."""
        deadline = time.monotonic() + self._timeout
        what = ask.described(*self._kind)
        making = waits.Watch(f"{what} to start", _folders(self._folder, None))
        while not self.made:  # rootdir is being made (and made ready)
            self.made = (self._folder / MADE).exists()
            if self.made:
                break
            if not self._child.running() and artefacts.setup_failure(self._folder):
                return PendingRerun(self._folder, self._child, self._timeout, self._in_copy)
            if not self._child.running() or making.look() or time.monotonic() > deadline:
                self.cancel()
                return None
            time.sleep(recorder.POLL_SECONDS)
        watch = waits.Watch(what, _folders(self._folder, self._copy_of))
        if not self._child.running() or watch.gone():
            self.cancel()
            return None
        listed = set(self._listing)  # already listed: not collected again for that
        ask = dataclasses.replace(ask, listing=tuple(p for p in ask.listing if p not in listed))
        files = ask.files(self.rootdir)
        if not (files or ask.listing or self._listing):
            self.cancel()
            return PendingRerun()
        try:
            _select(self._folder, ask, files)
        except OSError:  # its folder went just now
            self.cancel()
            return None
        self._child.restart_clock()
        return PendingRerun(self._folder, self._child, self._timeout, self._in_copy, watch)

    def cancel(self) -> None:
        self._child.stop()
        shutil.rmtree(self._folder, ignore_errors=True)


def start_waiting(
    *,
    rootdir: Path,
    args: Sequence[str],
    env: Mapping[str, str],
    timeout: float,
    paths: Sequence[str] = (),
    first: Sequence[str] = (),
    copy_of: tuple[Path, Path] | None = None,
    prepare: Preparation | None = None,
    listing: Sequence[str] = (),
    kind: tuple[str, str] = ("re-run", ""),
) -> WaitingRerun | None:
    """Start a pytest child in ``rootdir`` that loads the conftest files of ``paths`` (as a
    session given them does), lists the tests it collects from ``listing`` (relative to
    ``rootdir``) at once, and waits for the node ids it is to run (see
    :meth:`WaitingRerun.hand`), once the command ``first`` (if any) made ``rootdir``; ``None``
    when it cannot start. ``copy_of``, ``prepare``: see :func:`_start_child`; ``kind``: what
    its progress lines call it (see :meth:`Ask.described`)."""
    folder = tempdirs.make("rerun")
    try:
        if listing:
            (folder / recorder.LIST).write_text(json.dumps(list(listing)), encoding="utf-8")
        child = _start_child(
            folder, rootdir, args, env, timeout, None, paths, first, copy_of, prepare
        )
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    if isinstance(child, subproc.Outcome):
        shutil.rmtree(folder, ignore_errors=True)
        return None
    readied = copy_of is not None and prepare is not None and prepare.needed
    made = not first and not readied
    return WaitingRerun(folder, child, rootdir, timeout, made, copy_of, tuple(listing), kind)


def rerun(
    nodeids: Iterable[str],
    *,
    rootdir: Path,
    args: Sequence[str],
    env: Mapping[str, str],
    timeout: float,
    copy_of: tuple[Path, Path] | None = None,
) -> RerunResult:
    """Run ``nodeids`` (relative to ``rootdir``) once; files missing there are skipped.
    ``copy_of``: see :func:`_start_child`."""
    ask = Ask.of(nodeids)
    what = ask.described(place="" if copy_of is not None else " at head")
    pending = start_rerun(
        ask, rootdir=rootdir, args=args, env=env, timeout=timeout, copy_of=copy_of, what=what
    )
    return pending.result()


def merged(first: RerunResult, second: RerunResult) -> RerunResult:
    """Two partial re-runs of disjoint node ids as one."""
    if first.status != "ok":
        return first
    if second.status != "ok":
        return second
    return RerunResult(
        status="ok",
        found=first.found | second.found,
        failed={**first.failed, **second.failed},
        passed=first.passed | second.passed,
        live=tuple(sorted({*first.live, *second.live})),
        listed=first.listed | second.listed,
    )
