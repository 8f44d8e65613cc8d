"""Whether a change narrowed its own collection.

A change that touches test files, conftest files or the pytest configuration can make tests
disappear from the session without deselecting them: ``collect_ignore``, a
``pytest_ignore_collect`` hook, ``__test__ = False``, a narrower ``python_files`` or
``testpaths``, a hook that drops items. So the base lists the tests it collects from the paths
such a change reaches (:func:`listing`, asked as :class:`classify.Questions`), and every one of
them the session did not collect, deselect or report is named (:func:`compare`): one the change
removed (its function or class gone, or its parametrization edited) is a deleted test; one the
change keeps was narrowed out, and the run is partial.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import field
from pathlib import Path, PurePosixPath

from ...change import git
from ...change.scope import FileChange
from ...core.pytestconfig.pytestini import matches, options_of, words
from ...models.record import record
from . import testdefs

CONFIG_NAMES = frozenset(
    {"pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "pyproject.toml", "tox.ini"}
    | {"setup.cfg"}
)
DEFAULT_PATTERNS = ("test_*.py", "*_test.py")


def pytest_options_differ(name: str, before: str | None, after: str | None) -> bool:
    """Whether the pytest options of a configuration file called ``name`` differ between its
    text ``before`` and ``after`` the change (``None``: the file is absent); a file neither
    side can read counts as changed."""
    try:
        old = options_of(name, before) if before is not None else None
        new = options_of(name, after) if after is not None else None
    except ValueError:
        return True
    return old != new


def test_patterns(*options: Mapping[str, object]) -> tuple[str, ...]:
    """The ``python_files`` patterns of every options given (pytest's default when none)."""
    found = [p for o in options for p in words(o.get("python_files", ()))]
    return tuple(found) or DEFAULT_PATTERNS


def _inside(path: str, folder: str) -> bool:
    return folder == "." or path == folder or path.startswith(folder.rstrip("/") + "/")


def _test_code(path: str, roots: Sequence[str], testpaths: bool) -> bool:
    """Whether the Python file ``path`` is test code a change could hide tests with (a shared
    base class, a decorator): inside the suite's ``testpaths``, or in a folder named for
    tests."""
    if not path.endswith(".py"):
        return False
    if testpaths:
        return any(_inside(path, root) for root in roots)
    folders = PurePosixPath(path).parts[:-1]
    return any(folder.startswith("test") for folder in folders)


def listing(
    changed: Collection[str],
    scope: Sequence[str],
    patterns: Sequence[str],
    config_changed: bool,
    testpaths: bool = False,
) -> tuple[str, ...]:
    """The paths (relative to the rootdir, ``.`` the rootdir) whose base collection is
    compared with the session's: the whole ``scope`` (the paths the session was given, or
    the suite's ``testpaths``; ``.`` when empty) when the pytest configuration changed, else
    the test files (named as ``patterns`` say) the change touches and the folders of the
    conftest files and the other test code it touches (see :func:`_test_code`; ``testpaths``:
    the scope is the suite's ``testpaths``), within the scope. ``changed`` is relative to the
    rootdir."""
    roots = list(scope) or ["."]
    if config_changed:
        return tuple(sorted(set(roots)))
    wanted: set[str] = set()
    for path in changed:
        name = PurePosixPath(path).name
        if any(matches(p, Path(path)) for p in patterns) and name != "conftest.py":
            wanted.add(path)
        elif name == "conftest.py" or _test_code(path, roots, testpaths):
            wanted.add(str(PurePosixPath(path).parent))
    found: set[str] = set()
    for path in wanted:
        for root in roots:
            if _inside(path, root):
                found.add(path)
            elif _inside(root, path):
                found.add(root)
    return tuple(sorted(found))


@record
class Narrowing:
    """The base's tests the session did not have: ``gone`` (still defined at head: narrowed
    out) and ``removed`` (the change deleted them)."""

    gone: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


_DEF = "(?m)^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+{}\\b"


def _kept(nodeid: str, head: str, base: str | None, siblings: bool) -> bool:
    """Whether the change keeps the test ``nodeid`` names, given the source of its file at
    head (and at the base): its function or class is still there and, for a parametrized
    id, parametrized as before, or not collected at all at head (``siblings``: another id of
    the same function was): a decorator edited cannot hide a whole function."""
    names = testdefs.names(nodeid)
    if names and "." in names[0]:  # a doctest: module.qualname
        return re.search(_DEF.format(re.escape(names[0].rpartition(".")[2])), head) is not None
    answer = testdefs.defined(head, nodeid)
    if isinstance(answer, testdefs.Absent):
        return False
    if isinstance(answer, testdefs.Defined) and testdefs.parametrized(nodeid) and base and siblings:
        before = testdefs.defined(base, nodeid)
        if isinstance(before, testdefs.Defined) and before.decorators != answer.decorators:
            return False  # the change edited the cases: this one it removed
    return True  # unread counts as kept: the run must then answer for it


def _function(nodeid: str) -> str:
    """The node id of the function (or class member) ``nodeid`` is a case of."""
    file, sep, rest = nodeid.partition("::")
    return file + sep + rest.split("[", 1)[0]


def compare(
    listed: Collection[str],
    present: Collection[str],
    broken: Collection[str],
    head_source: Callable[[str], str | None],
    base_source: Callable[[str], str | None],
    renamed: Mapping[str, str] | None = None,
) -> Narrowing:
    """The tests the base ``listed`` that are not ``present`` in the session (collected,
    deselected or reported), leaving out files that did not collect or were skipped whole
    at head (``broken``: their failure or skip answers for them). ``head_source`` and
    ``base_source`` read a file (relative to the rootdir) on each side, ``None`` when it is
    not there; ``renamed`` maps a file's path at base to its path at head."""
    moves = renamed or {}
    here = set(present)
    functions = {_function(nodeid) for nodeid in here}
    result = Narrowing()
    sources: dict[str, tuple[str | None, str | None]] = {}
    for nodeid in sorted(set(listed)):
        file, sep, rest = nodeid.partition("::")
        at_head = moves.get(file, file)
        if at_head + sep + rest in here or at_head in broken or file in broken:
            continue
        if at_head not in sources:
            sources[at_head] = (head_source(at_head), base_source(file))
        head, base = sources[at_head]
        siblings = _function(at_head + sep + rest) in functions
        kept = head is not None and (not rest or _kept(nodeid, head, base, siblings))
        (result.gone if kept else result.removed).append(nodeid)
    return result


@record(frozen=True)
class Change:
    """The change as the comparison sees it: its files relative to the rootdir, and the
    repository and base they are read from."""

    repo: git.Repo
    base_commit: str
    rootdir: Path  # the session's, inside the repository
    files: tuple[FileChange, ...]

    @property
    def _prefix(self) -> str:
        inside = self.rootdir.resolve().relative_to(self.repo.root.resolve()).as_posix()
        return "" if inside == "." else inside + "/"

    def relative(self, path: str) -> str | None:
        """``path`` (from the repository root) relative to the rootdir; ``None`` outside."""
        prefix = self._prefix
        return path[len(prefix) :] if path.startswith(prefix) else None

    def path_of(self, path: str) -> str:
        """``path`` (from the rootdir) from the repository root."""
        return self._prefix + path

    def paths(self) -> list[str]:
        """Every path the change touches (both names of a rename), from the rootdir."""
        named = [n for c in self.files for n in (c.path, c.old_path) if n]
        return [r for n in named if (r := self.relative(n)) is not None]

    def config_changed(self) -> bool:
        """Whether the change alters the pytest options of a configuration file."""
        for change in self.files:
            name = PurePosixPath(change.path).name
            if name not in CONFIG_NAMES:
                continue
            before = self.repo.show(self.base_commit, change.old_path or change.path)
            after = self.head(change.path) if change.status != "deleted" else None
            if pytest_options_differ(name, before, after):
                return True
        return False

    def head(self, path: str) -> str | None:
        """The text of ``path`` (from the repository root) as the session ran it."""
        try:
            return (self.repo.root / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def at_base(self, nodeids: Sequence[str]) -> list[str]:
        """Those of ``nodeids`` whose function (or class) the base's file defines (a file
        the base lacks defines none; a file that is not Python, or that cannot be read,
        keeps them)."""
        prefix = self._prefix
        files = sorted({n.split("::", 1)[0] for n in nodeids})
        sources = git.read_objects(
            self.repo.root, [f"{self.base_commit}:{prefix}{f}" for f in files]
        )
        kept = []
        for nodeid in nodeids:
            file = nodeid.split("::", 1)[0]
            blob = sources.get(f"{self.base_commit}:{prefix}{file}")
            if blob is None:
                continue
            if file.endswith(".py"):
                answer = testdefs.defined(git.decode(blob), nodeid)
                if isinstance(answer, testdefs.Absent):
                    continue
            kept.append(nodeid)
        return kept

    def renamed(self) -> dict[str, str]:
        """Test files the change renames, old path to new, from the rootdir."""
        moves = {}
        for change in self.files:
            old = self.relative(change.old_path) if change.old_path else None
            new = self.relative(change.path)
            if old is not None and new is not None and change.status == "renamed":
                moves[old] = new
        return moves

    def compare(
        self, listed: Collection[str], present: Collection[str], broken: Collection[str]
    ) -> Narrowing:
        """:func:`compare`, reading each side's files."""
        prefix = self._prefix
        return compare(
            listed,
            present,
            broken,
            lambda path: self.head(prefix + path),
            lambda path: self.repo.show(self.base_commit, prefix + path),
            self.renamed(),
        )


def shown(nodeids: Sequence[str], limit: int = 10) -> str:
    more = f" and {len(nodeids) - limit} more" if len(nodeids) > limit else ""
    return ", ".join(nodeids[:limit]) + more


def verdict(narrowing: Narrowing) -> tuple[str | None, list[str]]:
    """Why the run is partial (the tests narrowed out), and what to note (those removed)."""
    gone, removed = narrowing.gone, narrowing.removed
    partial = None
    if gone:
        partial = (
            f"{len(gone)} test(s) the base collects were not collected by this run, though the "
            f"change keeps them: {shown(gone)}"
        )
    notes = []
    if removed:
        notes.append(
            f"{len(removed)} test(s) the base collects are removed by the change: {shown(removed)}"
        )
    return partial, notes
