"""The base checkout made ready to run as the working tree runs: compiled modules built in place
copied in, then the configured set-up command (``base_setup``), before the base re-run starts.

Ignored build artefacts (``basecontent.ARTEFACTS``: compiled modules ``*.so``, ``*.pyd``,
``*.dylib``; compiled translations ``*.mo``) are what a build left next to the sources. A
checkout of the base has none, so a test needing one fails, skips or takes a fallback there
for that reason alone. A compiled translation beside a ``.po`` of the same name (where the
base has that ``.po``, or the change adds it) is made in the checkout from the base's ``.po``
(see ``compilemo.py``): the base has its own translations whatever the change did to the
catalogue, and a stale ``.mo`` of the working tree never reaches it. The others are copied
into the checkout (see ``copyin.py``) when the working tree's files each kind is built from
are the base's (for compiled modules: C, C++, Cython, Rust, Fortran or CUDA sources and
headers, and the build files; for translations: ``.po`` catalogues). Otherwise that kind is
withheld: a base run that tried to import a withheld compiled module answers nothing
(``redirect.py`` notes such imports); while translations are withheld, or a base ``.po``
does not compile, a base answer other than a pass says nothing (no import reveals a missing
file). What else the checkout holds (submodules, the Hypothesis example database) is
``basecontent.py``'s, written by ``fillin.py``.

``base_setup`` then runs in the checkout, in pytest's rootdir there, with the session's
environment, as the first step of the base re-run's child: after ``git worktree add`` (the
early child) or the kept checkout's refresh, before pytest starts. A change that alters the
setting is reviewed with the base's value, as it could otherwise make the base fail as the
change does. Its failure makes every base answer unknown, naming the command, its exit status
and the end of its output.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from ...change import git, imported
from ...core.configfile import table_in
from ...core.errors import GitError
from ...models.record import record
from . import basecontent, compilemo, copyin, fillin

SETUP_ARGV, SETUP_STATUS, SETUP_LOG = "setup.json", "setup.status", "setup.log"
HELD_SPEC = "held.json"
_TAIL_BYTES, _TAIL_LINES = 64 * 1024, 5


@record(frozen=True)
class Preparation:
    """What is done in a base checkout before its re-run."""

    copies: tuple[str, ...] = ()  # compiled modules copied in (relative to the repository)
    withheld: tuple[str, ...] = ()  # those left out, as the change touches their sources
    because: tuple[str, ...] = ()  # the changed files they are built from
    setup: tuple[str, ...] = ()  # the set-up command run after the copies
    notes: tuple[str, ...] = ()  # what the report says about it
    stamp: str = ""  # what base answers made after it rest on (for the base cache)
    held: basecontent.Held = basecontent.Held()  # submodules, Hypothesis examples
    # Why a base answer other than a pass says nothing (see basecontent.uncertain_verdicts).
    uncertain: tuple[str, ...] = ()
    compiled: tuple[str, ...] = ()  # compiled translations made from the base's sources

    @property
    def needed(self) -> bool:
        return bool(self.copies or self.compiled or self.setup or self.held.needed)

    def withheld_because(self) -> str:
        shown = ", ".join(self.because[:3]) + (" ..." if len(self.because) > 3 else "")
        return (
            f"the change touches what they are built from ({shown}); "
            "`base_setup` can build them there"
        )

    def script(self, live: Path, checkout: Path, rootdir: Path, folder: Path) -> str:
        """Shell commands doing it, for a child that runs them once ``checkout`` is made;
        the set-up command's argv is written to ``folder`` now, its output and a failing
        exit status there later (see :func:`setup_failure`)."""
        steps = []
        if self.held.needed:  # submodules first: compiled modules may be copied into them
            (folder / HELD_SPEC).write_text(self.held.spec(), encoding="utf-8")
            filler = [sys.executable, "-I", "-S", str(Path(fillin.__file__).resolve())]
            steps.append(shlex.join([*filler, str(checkout), str(folder / HELD_SPEC)]))
        if self.copies:
            copier = [sys.executable, "-I", "-S", str(Path(copyin.__file__).resolve())]
            steps.append(shlex.join([*copier, str(live), str(checkout), *self.copies]))
        if self.compiled:
            compiler = [sys.executable, "-I", "-S", str(Path(compilemo.__file__).resolve())]
            report = str(folder / compilemo.REPORT)
            steps.append(shlex.join([*compiler, str(checkout), report, *self.compiled]))
        if self.setup:
            (folder / SETUP_ARGV).write_text(json.dumps(list(self.setup)), encoding="utf-8")
            run = f"(cd {shlex.quote(str(rootdir))} && exec {shlex.join(self.setup)})"
            log, status = (
                shlex.quote(str(folder / SETUP_LOG)),
                shlex.quote(str(folder / SETUP_STATUS)),
            )
            steps.append(
                f"{{ {run} < /dev/null > {log} 2>&1 || {{ echo $? > {status}; exit 1; }}; }}"
            )
        return " && ".join(steps)


def plan(
    repo: git.Repo,
    base_commit: str,
    rootdir: Path,
    configured: Sequence[str] | None,
    environ: Mapping[str, str] | None = None,
    whose: str = "the base",
) -> Preparation:
    """How to prepare a checkout of ``base_commit`` for a session run in ``rootdir`` of
    ``repo`` (with ``environ``), with ``base_setup`` set to ``configured``. An ignored
    artefact beside the source it is compiled from is compiled from the base's; each other
    one is copied when the working tree's files its kind is built from are the base's.
    ``whose`` names the checkout in what is said: a checkout of the snapshot under review (a
    tree, see ``cli/runplace.py``) is planned here too, and runs no set-up command."""
    try:
        built = imported.built_in_place(repo, basecontent.SUFFIXES)
    except GitError:  # none known: none copied
        built = []
    changed: list[str] = []
    broken = ""
    try:
        changed = imported.changed_since(repo, base_commit) if built else []
    except GitError as exc:  # then nothing says they are the base's
        broken = f"the working tree could not be compared with the base: {exc}"
    copies: list[str] = []
    withheld: list[str] = []
    because: list[str] = []
    uncertain: list[str] = []
    compiled: list[str] = []
    for artefact in basecontent.ARTEFACTS:
        mine = [name for name in built if name.endswith(artefact.suffixes)]
        if mine and artefact.compiled_from:
            theirs = _beside_source(repo, base_commit, mine, artefact.compiled_from, changed)
            compiled += theirs
            mine = [name for name in mine if name not in theirs]
        sources = [broken] if broken else [p for p in changed if artefact.built_from(p)]
        if not mine or not sources:
            copies += mine
        elif artefact.noticed:
            withheld += mine
            because += sources
        else:
            uncertain.append(_withheld(artefact, mine, sources, whose))
    held = basecontent.plan(repo, base_commit, rootdir, environ, whose=whose)
    setup, notes = _setup_of_base(repo, base_commit, rootdir, configured)
    stamps: list[object] = [["compiled", *compiled]] if compiled else []
    for name in copies:
        with contextlib.suppress(OSError):
            info = (repo.root / name).stat()
            stamps.append([name, info.st_size, info.st_mtime_ns])
    parts: list[object] = [list(setup), stamps]
    stamp = json.dumps([*parts, held.stamp] if held.stamp else parts)
    stamp = stamp if setup or stamps or held.stamp else ""
    return Preparation(
        tuple(copies),
        tuple(withheld),
        tuple(because),
        setup,
        notes,
        stamp,
        held,
        (*uncertain, *held.uncertain),
        tuple(compiled),
    )


def _beside_source(
    repo: git.Repo, commit: str, names: Sequence[str], suffix: str, changed: Sequence[str]
) -> list[str]:
    """Those of ``names`` made from the file of the same name with ``suffix`` beside them,
    as the base has that file or the change adds it (the base then has none of them)."""
    sources = {name.rsplit(".", 1)[0] + suffix: name for name in names}
    args = ["--literal-pathspecs", "ls-tree", "-z", "--name-only", commit, "--", *sources]
    proc = git.run(args, repo.root, check=False)
    at_base = git.decode(proc.stdout).split("\0") if proc.returncode == 0 else []
    known = {*at_base, *changed}
    return [name for source, name in sources.items() if source in known]


def _withheld(
    artefact: basecontent.Artefact, names: Sequence[str], sources: Sequence[str], whose: str
) -> str:
    """Why ``whose`` answers say nothing while ``names`` (of a kind the re-run does not
    notice missing) are withheld, as the change touches ``sources``."""
    mine = ", ".join(names[:3]) + (" ..." if len(names) > 3 else "")
    shown = ", ".join(sources[:3]) + (" ..." if len(sources) > 3 else "")
    beside = ""
    if artefact.compiled_from:
        beside = f", with no {artefact.compiled_from} of the same name beside them"
    return (
        f"{len(names)} {artefact.kind}(s) of the working tree ({mine}{beside}) were withheld "
        f"from {whose}, as the change touches what they are built from ({shown}), so "
        f"{whose} ran without them; `base_setup` can build them there"
    )


def _setup_of_base(
    repo: git.Repo, base_commit: str, rootdir: Path, configured: Sequence[str] | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The set-up command to run, and a note when it is not the configured one: the base's
    value, read from the configuration the base has where this one was looked up."""
    value: object = None
    try:
        folders = [rootdir, *rootdir.parents[: len(rootdir.relative_to(repo.root).parts)]]
    except ValueError:
        folders = [repo.root]
    for folder in folders:
        relative = (folder / "pyproject.toml").relative_to(repo.root).as_posix()
        try:
            text = repo.show(base_commit, relative)
        except GitError as exc:
            return (), (
                f"base_setup: the base's configuration could not be read ({exc}): none is run",
            )
        table = table_in(text) if text is not None else None
        if table is not None:
            value = table.get("base_setup")
            break
    ours = tuple(configured or ())
    valid = isinstance(value, list) and value and all(isinstance(a, str) and a for a in value)
    theirs = tuple(value) if valid and isinstance(value, list) else ()
    if value is not None and not valid:
        return (), (f"base_setup: the base's value {value!r} is not an argv list; none is run",)
    if ours == theirs:
        return ours, ()
    note = (
        f"base_setup is changed by the change: the base's ({shlex.join(theirs) or 'none'}) is "
        "used for this review; the change's applies once it is merged"
    )
    return theirs, (note,)


def setup_command(folder: Path) -> list[str] | None:
    """The set-up command a child recording into ``folder`` runs, if any."""
    try:
        argv = json.loads((folder / SETUP_ARGV).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return [str(a) for a in argv] if isinstance(argv, list) else None


def setup_failure(folder: Path) -> str | None:
    """Why the set-up command of the child recording into ``folder`` failed: the command, its
    exit status and the last lines of its output; ``None`` when it did not fail."""
    try:
        status = (folder / SETUP_STATUS).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    argv = setup_command(folder) or ["?"]
    tail = ""
    with contextlib.suppress(OSError), open(folder / SETUP_LOG, "rb") as log:
        log.seek(max(0, os.fstat(log.fileno()).st_size - _TAIL_BYTES))
        lines = log.read().decode("utf-8", "replace").strip().splitlines()
        tail = "\n".join(lines[-_TAIL_LINES:])
    return f"base_setup {shlex.join(argv)} exited {status}" + (f": {tail}" if tail else "")
