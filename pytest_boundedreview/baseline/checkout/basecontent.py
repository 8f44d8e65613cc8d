"""What a base checkout holds besides the base commit's files: what the working tree's run
relies on and git does not track, each with the reason (one list, :data:`HELD`).

``git worktree add`` gives the base's tracked files only. The working tree's run also had:

- submodules checked out at their recorded commits: each is checked out in the base checkout
  at the commit the base records (its gitlink), from the objects the repository already has
  (``.git/modules/<name>``, or the submodule's own git folder); nothing is fetched. Where that
  commit is not there and the working tree's submodule is checked out, a base answer other
  than a pass is unknown, naming the commit and the fetch that brings it.
- the Hypothesis example database: copied in whole, where the base re-run's Hypothesis looks
  for it; its file names (Hypothesis names each example by its content's hash) and sizes are
  part of the base cache's key, so an example added since re-asks the base.
- ignored build artefacts (:data:`ARTEFACTS`): compiled modules, copied in when the working
  tree's files they are built from are the base's; compiled translations, compiled in the
  checkout from the base's own catalogues (see ``artefacts.py`` and ``compilemo.py``).

A Hypothesis database set in code (a settings profile in a ``conftest.py``) is not followed:
the folder is ``HYPOTHESIS_STORAGE_DIRECTORY`` from the session's environment, else
``.hypothesis``, below the folder pytest was started from, with ``examples`` in it. A setting
outside the repository (an absolute path, or one climbing out with ``..``) is copied to
:data:`OWN_STORAGE` in the checkout and the base re-run is pointed there (:func:`storage_env`):
the base's Hypothesis writes what it finds into the checkout's copy, never into the user's
database.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath

from ...change import git
from ...models.record import record

SOURCE_SUFFIXES = frozenset(
    {".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".pyx", ".pxd", ".pxi"}
    | {".rs", ".f", ".f90", ".f95", ".cu", ".cuh", ".cmake"}
)
BUILD_FILES = frozenset(
    {"setup.py", "meson.build", "meson.options", "meson_options.txt", "CMakeLists.txt"}
    | {"Cargo.toml", "Cargo.lock"}
)


def builds_modules(path: str) -> bool:
    """Whether ``path`` is a file compiled modules are built from: C, C++, Cython, Rust,
    Fortran or CUDA sources and headers, and the build files that say how. ``pyproject.toml``
    and ``setup.cfg`` are not counted: they change for many other reasons, and a build setting
    changed there alone is the set-up command's to rebuild."""
    name = PurePosixPath(path)
    return name.suffix.lower() in SOURCE_SUFFIXES or name.name in BUILD_FILES


def builds_translations(path: str) -> bool:
    """Whether ``path`` is a file compiled translations are built from (a ``.po`` catalogue)."""
    return PurePosixPath(path).suffix.lower() == ".po"


@record(frozen=True)
class Artefact:
    """A kind of file git ignores that a build leaves in the working tree before the tests."""

    kind: str
    suffixes: tuple[str, ...]
    built_from: Callable[[str], bool]  # a changed file of this kind withholds them all
    # Whether the base re-run notices a test reaching for a withheld one (an import); when
    # not, every base answer but a pass is unknown while any is withheld.
    noticed: bool
    reason: str
    # The suffix of the source each one is made from when it sits beside it with the same
    # name: the base's is then made in the checkout from the base's source, never copied.
    compiled_from: str = ""


ARTEFACTS = (
    Artefact(
        "compiled module",
        (".so", ".pyd", ".dylib"),
        builds_modules,
        True,
        "an in-place build (build_ext --inplace, maturin develop) leaves it next to the "
        "sources; without it a test fails, skips or takes a fallback at the base alone",
    ),
    Artefact(
        "compiled translation",
        (".mo",),
        builds_translations,
        False,
        "`pybabel compile` or `msgfmt` makes it from its `.po`; without it gettext finds "
        "nothing, so an i18n test skips or sees untranslated text at the base alone. One "
        "beside a `.po` of the same name is compiled from the base's `.po` in the checkout "
        "(none where the base has no such `.po`); one with no such `.po` is copied while no "
        "`.po` changed",
        ".po",
    ),
)
SUFFIXES = tuple(s for artefact in ARTEFACTS for s in artefact.suffixes)

HELD = {
    "submodules": "checked out at the commit the base records, from local objects: the "
    "tests import or read them",
    "Hypothesis example database": "copied in: the failing examples it holds are what the "
    "tests run first; without them the base searches at random",
    **{artefact.kind + "s": artefact.reason for artefact in ARTEFACTS},
}


def kind_of(path: str) -> Artefact | None:
    """The artefact kind of ``path``, by its suffix."""
    return next((a for a in ARTEFACTS if path.endswith(a.suffixes)), None)


@record(frozen=True)
class Submodule:
    """A submodule to check out in a base checkout: its path there, the commit the base
    records, and a git folder that holds that commit."""

    path: str
    commit: str
    git_dir: str


@record(frozen=True)
class Held:
    """What the base checkout is given besides the base commit's files (see :data:`HELD`)."""

    trees: tuple[tuple[str, str], ...] = ()  # (live folder, its place in the checkout)
    submodules: tuple[Submodule, ...] = ()
    uncertain: tuple[str, ...] = ()  # why base answers other than a pass say nothing
    stamp: str = ""  # for the base cache's key

    @property
    def needed(self) -> bool:
        return bool(self.trees or self.submodules)

    def spec(self) -> str:
        """What the child does (read by ``fillin.py``)."""
        subs = [[s.path, s.commit, s.git_dir] for s in self.submodules]
        return json.dumps({"trees": [list(t) for t in self.trees], "submodules": subs})


# Where a base re-run keeps a Hypothesis database set outside the repository (see storage_env).
OWN_STORAGE = ".bounded-review-hypothesis"
_STORAGE = "HYPOTHESIS_STORAGE_DIRECTORY"


def _outside(setting: str) -> bool:
    return os.path.isabs(setting) or ".." in PurePosixPath(Path(setting).as_posix()).parts


def storage_env(environ: Mapping[str, str] | None) -> dict[str, str]:
    """``environ`` (else the process's) for a re-run in a checkout: a Hypothesis database set
    outside the repository is the checkout's copy (:data:`OWN_STORAGE`, relative to where the
    re-run starts) instead, so the re-run writes into no folder of the user's."""
    env = dict(os.environ if environ is None else environ)
    if _outside(env.get(_STORAGE) or ".hypothesis"):
        env[_STORAGE] = OWN_STORAGE
    return env


def examples_folder(environ: Mapping[str, str], cwd: Path) -> tuple[Path, str] | None:
    """The Hypothesis example database the session used, and where the re-run's copy lies
    relative to the folder it starts in (see :func:`storage_env`); ``None`` when there is
    none."""
    setting = environ.get(_STORAGE) or ".hypothesis"
    relative = PurePosixPath(Path(setting).as_posix()) / "examples"
    folder = cwd / setting / "examples"  # an absolute setting stays itself
    if _outside(setting):
        relative = PurePosixPath(OWN_STORAGE, "examples")
    return (folder, relative.as_posix()) if folder.is_dir() else None


def _digest(folder: Path) -> str:
    """Each file's name (a content hash for Hypothesis) and size under ``folder``."""
    entries = []
    for top, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(top, name)
            try:
                entries.append((os.path.relpath(path, folder), os.path.getsize(path)))
            except OSError:
                continue
    return hashlib.sha256(json.dumps(sorted(entries)).encode()).hexdigest()


def _gitlinks(git_dir: Path | None, cwd: Path, commit: str) -> list[tuple[str, str, str]]:
    """(name, path, recorded commit) of each submodule ``commit`` records, read from its
    ``.gitmodules`` and tree in the repository at ``cwd`` (or ``git_dir``)."""
    where = [f"--git-dir={git_dir}"] if git_dir is not None else []
    config = [*where, "config", "-z", "--blob", f"{commit}:.gitmodules"]
    proc = git.run([*config, "--get-regexp", r"^submodule\..*\.path$"], cwd, check=False)
    if proc.returncode != 0:  # no .gitmodules there, or none listed
        return []
    names: dict[str, str] = {}
    for item in git.decode(proc.stdout).split("\0"):
        key, _, path = item.partition("\n")
        if key and path:
            names[path.strip("/")] = key[len("submodule.") : -len(".path")]
    if not names:
        return []
    tree = git.run([*where, "ls-tree", "-z", commit, "--", *names], cwd, check=False)
    found = []
    for entry in git.decode(tree.stdout).split("\0"):
        info, _, path = entry.partition("\t")
        fields = info.split()
        if len(fields) == 3 and fields[0] == "160000" and path in names:
            found.append((names[path], path, fields[2]))
    return found


def _git_dir_of(folder: Path) -> Path | None:
    """The git folder of a checkout at ``folder`` (its ``.git`` folder, or the one a ``.git``
    file names)."""
    dot = folder / ".git"
    if dot.is_dir():
        return dot
    try:
        text = dot.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir: "):
        return None
    target = Path(text.removeprefix("gitdir: "))
    return target if target.is_absolute() else folder / target


def _has(git_dir: Path, commit: str) -> bool:
    args = [f"--git-dir={git_dir}", "cat-file", "-e", f"{commit}^{{commit}}"]
    return git.run(args, git_dir, check=False).returncode == 0


MAX_DEPTH = 4


def submodules(
    repo: git.Repo, commit: str, whose: str = "the base"
) -> tuple[tuple[Submodule, ...], tuple[str, ...]]:
    """The submodules to check out in a checkout of ``commit`` (a commit or a tree, named
    ``whose`` in what is said; nested ones too), and why its answers are uncertain (a
    checked-out submodule whose recorded commit is not here). Two stats when the repository
    has none."""
    modules = repo.common_dir / "modules"
    if not (repo.root / ".gitmodules").exists() and not modules.is_dir():
        return (), ()
    found: list[Submodule] = []
    uncertain: list[str] = []

    def walk(
        git_dir: Path | None, at: str, prefix: str, live: Path, home: Path, depth: int
    ) -> None:
        cwd = git_dir if git_dir is not None else repo.root
        for name, path, sha in _gitlinks(git_dir, cwd, at):
            where = live / path
            here = _git_dir_of(where)
            candidates = [home / name, *([here] if here is not None else [])]
            source = next((c for c in candidates if c.is_dir() and _has(c, sha)), None)
            shown = prefix + path
            if source is None:
                if where.is_dir() and any(where.iterdir()):
                    uncertain.append(
                        f"submodule {shown}: {whose}'s commit {sha[:12]} is not in the local "
                        f"repository, so {whose} ran without it (fetch it: "
                        f"git -C {shown} fetch origin {sha})"
                    )
                continue
            found.append(Submodule(shown, sha, str(source)))
            if depth < MAX_DEPTH:
                walk(source, sha, shown + "/", where, source / "modules", depth + 1)

    walk(None, commit, "", repo.root, modules, 1)
    return tuple(found), tuple(uncertain)


def plan(
    repo: git.Repo,
    commit: str,
    rootdir: Path,
    environ: Mapping[str, str] | None,
    cwd: Path | None = None,
    whose: str = "the base",
) -> Held:
    """What a checkout of ``commit`` (``whose``) is given for a session run in ``rootdir`` of
    ``repo`` (started in ``cwd``, with ``environ``)."""
    trees: list[tuple[str, str]] = []
    stamps: list[object] = []
    examples = examples_folder(os.environ if environ is None else environ, cwd or Path.cwd())
    if examples is not None:
        try:  # the re-run starts in the checkout's rootdir (see rerun.py)
            place = (rootdir.relative_to(repo.root) / examples[1]).as_posix()
        except ValueError:
            place = ""
        if place:
            trees.append((str(examples[0]), place))
            stamps.append(["hypothesis", place, _digest(examples[0])])
    subs, uncertain = submodules(repo, commit, whose)
    stamps += [["submodule", s.path, s.commit] for s in subs]
    stamps += [["uncertain", *uncertain]] if uncertain else []
    return Held(tuple(trees), subs, uncertain, json.dumps(stamps) if stamps else "")


def uncertain_verdicts(
    verdicts: Mapping[str, dict[str, str]], reasons: Sequence[str]
) -> dict[str, dict[str, str]]:
    """``verdicts`` with each answer but a pass or a missing test made unknown when
    ``reasons`` say the base ran without something its tests may rely on."""
    if not reasons:
        return dict(verdicts)
    detail = "; ".join(reasons)
    kept = ("passed", "missing", "live", "withheld")
    return {
        nodeid: v if v.get("kind") in kept else {"kind": "withheld", "detail": detail}
        for nodeid, v in verdicts.items()
    }
