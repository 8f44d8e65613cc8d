"""The only place that runs git.

Every call gets an environment with all ``GIT_*`` variables removed: inside a git hook
``GIT_DIR``/``GIT_INDEX_FILE``/``GIT_WORK_TREE`` are set, and a child git would otherwise read
and write the user's index. Optional locks are off so read-only commands never refresh the
user's index either.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..core.errors import GitError, NotARepositoryError
from ..models.record import record

# Config that would change the shape of output we parse, pinned for every call.
_PINNED_CONFIG = (
    "core.quotePath=false",
    "color.ui=never",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.relative=false",
    "diff.external=",
    "core.hooksPath=/dev/null",
)


def without_git_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` without the ``GIT_*`` variables that point git at a repository, index or
    object store. ``GIT_CONFIG*`` stay: they are the user's configuration (``core.autocrlf``,
    LFS filters), which must apply as it would to ``git add -A && git commit``."""
    return {
        k: v for k, v in environ.items() if not k.startswith("GIT_") or k.startswith("GIT_CONFIG")
    }


def scrubbed_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process environment without repository-pointing ``GIT_*`` variables, plus our own
    settings."""
    env = without_git_variables(os.environ)
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C", LANGUAGE="C")
    if extra:
        env.update(extra)
    return env


def command(args: Sequence[str]) -> list[str]:
    """The argv of ``git args`` with our pinned configuration (hooks off, no colour, ...)."""
    argv = ["git"]
    for item in _PINNED_CONFIG:
        argv += ["-c", item]
    return argv + list(args)


def run(
    args: Sequence[str],
    cwd: Path,
    *,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    timeout: float = 300,
    input: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git args`` in ``cwd`` (``input`` on stdin); raise :class:`GitError` on failure
    when ``check``."""
    argv = command(args)
    try:
        proc = subprocess.run(
            argv,
            cwd=cwd,
            env=scrubbed_env(env),
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        raise GitError(_NO_GIT) from exc
    except subprocess.TimeoutExpired as exc:
        raise GitError(_timed_out(args, cwd, timeout)) from exc
    return _checked(proc, args, cwd, check)


_NO_GIT = "git is not installed or not on PATH"
_PIPE_BUF = 4096  # what a pipe holds on every POSIX system, unread


def _timed_out(args: Sequence[str], cwd: Path, timeout: float) -> str:
    return f"git {' '.join(args)} timed out after {timeout:g}s in {cwd}"


def _checked(
    proc: subprocess.CompletedProcess[bytes], args: Sequence[str], cwd: Path, check: bool
) -> subprocess.CompletedProcess[bytes]:
    if check and proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip()
        raise GitError(f"git {' '.join(args)} failed in {cwd}: {detail}")
    return proc


class Started:
    """A read-only git process started to run beside the caller's own work: :meth:`result`
    waits for its answer (as :func:`run` gives it), :meth:`cancel` stops it when its answer
    is no longer wanted."""

    def __init__(self, args: Sequence[str], cwd: Path, input: bytes | None = None) -> None:
        self.args, self.cwd, self._reaped = list(args), cwd, False
        self._input = input  # written as the answer is waited for: git starts meanwhile
        try:
            self._proc = subprocess.Popen(
                command(args),
                cwd=cwd,
                env=scrubbed_env(),
                stdin=subprocess.DEVNULL if input is None else subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except FileNotFoundError as exc:
            raise GitError(_NO_GIT) from exc
        if input is not None and len(input) <= _PIPE_BUF and self._proc.stdin is not None:
            # Small enough for the pipe to hold whatever git does: handed over now, so git
            # answers while the caller works (a larger one waits for communicate, which
            # reads while it writes).
            with contextlib.suppress(BrokenPipeError):  # git ended early: its status tells
                self._proc.stdin.write(input)
            with contextlib.suppress(BrokenPipeError):
                self._proc.stdin.close()
            self._proc.stdin, self._input = None, None

    def result(
        self, *, check: bool = True, timeout: float = 300
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            out, err = self._proc.communicate(self._input, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            self.cancel()
            raise GitError(_timed_out(self.args, self.cwd, timeout)) from exc
        except BaseException:  # interrupted while waiting: nothing left running
            self.cancel()
            raise
        self._reaped = True
        proc = subprocess.CompletedProcess(self._proc.args, self._proc.returncode, out, err)
        return _checked(proc, self.args, self.cwd, check)

    def running(self) -> bool:
        return not self._reaped and self._proc.poll() is None

    def cancel(self) -> None:
        """Stop the process if it still runs, and reap it (once answered, nothing to do)."""
        if self._reaped:
            return
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.communicate()
        self._reaped = True


def text(args: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None) -> str:
    """Run git and return stdout decoded and stripped of the trailing newline."""
    return decode(run(args, cwd, env=env).stdout).rstrip("\n")


def decode(raw: bytes) -> str:
    """git output as text; undecodable bytes survive as surrogate escapes."""
    return raw.decode("utf-8", "surrogateescape")


# Blobs this process read by a name that always means the same content (an object id and a
# path): several stages read the same file at the same commit (the base's pyproject.toml for
# its rules, then for its base_setup). Small blobs only, and not too many.
_KNOWN: dict[tuple[Path, str], bytes | None] = {}
_KNOWN_BYTES, _KNOWN_COUNT = 64 * 1024, 512


def _immutable(name: str) -> bool:
    rev, colon, _ = name.partition(":")
    return bool(colon) and len(rev) in (40, 64) and all(c in "0123456789abcdef" for c in rev)


def _remember(root: Path, name: str, blob: bytes | None) -> None:
    if _immutable(name) and (blob is None or len(blob) <= _KNOWN_BYTES):
        if len(_KNOWN) >= _KNOWN_COUNT:
            _KNOWN.clear()
        _KNOWN[(root, name)] = blob


def read_objects(root: Path, names: Sequence[str]) -> dict[str, bytes | None]:
    """The contents of the blobs ``names`` (ids, or ``rev:path``) read in one batch; ``None``
    for a name that names no blob. A name with a line break, which the batch cannot carry,
    is read on its own."""
    batch = Batch(root, names)
    try:
        return batch.result()
    finally:
        batch.cancel()  # when a read alone failed: the batch does not outlive it


class Batch:
    """:func:`read_objects` with its ``cat-file --batch`` started now and its answer read
    later (:meth:`result`), beside the caller's own work; :meth:`cancel` stops it."""

    def __init__(self, root: Path, names: Sequence[str]) -> None:
        self.root = root
        self.found = {name: _KNOWN[(root, name)] for name in names if (root, name) in _KNOWN}
        names = [name for name in names if name not in self.found]
        self.alone = sorted({name for name in names if not _batchable(name)})
        self.asked = sorted({name for name in names if _batchable(name)})
        self._process = None
        if self.asked:
            request = "".join(f"{n}\n" for n in self.asked).encode("utf-8", "surrogateescape")
            self._process = Started(["cat-file", "--batch"], root, input=request)

    def result(self) -> dict[str, bytes | None]:
        found, root = self.found, self.root
        for name in self.alone:
            alone = run(["cat-file", "blob", name], root, check=False)
            found[name] = alone.stdout if alone.returncode == 0 else None
            _remember(root, name, found[name])
        if self._process is None:
            return found
        out = self._process.result().stdout
        at = 0
        for name in self.asked:
            header_end = out.index(b"\n", at)
            header = out[at:header_end].split(b" ")
            at = header_end + 1
            found[name] = None
            # "<id> <type> <size>" and the content; else "<name> missing" (or "ambiguous"),
            # where the name may hold spaces
            if _found(header):
                size = int(header[2])
                found[name] = out[at : at + size] if header[1] == b"blob" else None
                at += size + 1
            _remember(root, name, found[name])
        return found

    def cancel(self) -> None:
        if self._process is not None:
            self._process.cancel()


def _batchable(name: str) -> bool:
    """Whether ``name`` reaches ``cat-file --batch`` as it is: a line of its own, which git
    reads without a line break or a trailing carriage return."""
    return "\n" not in name and not name.endswith("\r")


def _found(header: list[bytes]) -> bool:
    return (
        len(header) == 3
        and len(header[0]) in (40, 64)
        and header[1] in (b"blob", b"tree", b"commit", b"tag")
        and header[2].isdigit()
    )


@record(frozen=True)
class Repo:
    """A git work tree: its top-level folder and what git knows about it."""

    root: Path
    git_dir: Path
    shallow: bool
    common_dir: Path  # shared by every checkout of the repository (linked ones too)
    index: Path  # the user's index file

    def git(self, *args: str, env: Mapping[str, str] | None = None) -> str:
        return text(args, self.root, env=env)

    def resolve(self, ref: str) -> str | None:
        """The commit id ``ref`` names, or ``None`` when it names nothing."""
        proc = run(
            ["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], self.root, check=False
        )
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def head(self) -> str | None:
        """The HEAD commit, or ``None`` on an unborn branch."""
        return self.resolve("HEAD")

    def head_and_tree(self) -> tuple[str, str] | tuple[None, None]:
        """The HEAD commit and its tree in one call, or ``(None, None)`` on an unborn branch."""
        proc = run(["rev-parse", "HEAD^{commit}", "HEAD^{tree}", "--"], self.root, check=False)
        if proc.returncode != 0:
            return None, None
        commit, tree = proc.stdout.decode().split()[:2]
        return commit, tree

    def branch(self) -> str | None:
        """The checked-out branch name, or ``None`` when HEAD is detached."""
        proc = run(["symbolic-ref", "--quiet", "--short", "HEAD"], self.root, check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def tree_of(self, commit: str) -> str:
        return self.git("rev-parse", f"{commit}^{{tree}}")

    def empty_tree(self) -> str:
        return text(["hash-object", "-t", "tree", "--stdin"], self.root)

    def gitlinks(self, rev: str, paths: Sequence[str]) -> set[str]:
        """Those of ``paths`` (folders, from the top) that ``rev`` records as a submodule's
        commit (an entry of mode 160000)."""
        if not paths:
            return set()
        listed = run(["ls-tree", "-z", rev, "--", *paths], self.root, check=False)
        if listed.returncode != 0:
            return set()
        entries = listed.stdout.decode("utf-8", "surrogateescape").split("\0")
        return {e.split("\t", 1)[1] for e in entries if e.startswith("160000 ") and "\t" in e}

    def show(self, rev: str, path: str) -> str | None:
        """The text of ``path`` at ``rev`` (a commit or tree id), or ``None`` if absent."""
        name = f"{rev}:{path}"
        if (self.root, name) in _KNOWN:
            blob = _KNOWN[(self.root, name)]
        else:
            proc = run(["cat-file", "blob", name], self.root, check=False)
            blob = proc.stdout if proc.returncode == 0 else None
            _remember(self.root, name, blob)
        return None if blob is None else decode(blob)


_OPENED = (
    "--show-toplevel",
    "--git-dir",
    "--git-common-dir",
    "--git-path",
    "index",
    "--is-shallow-repository",
)


def _opened(path: Path, revisions: Sequence[str] = ()) -> list[str] | None:
    """What rev-parse says of the repository containing ``path`` (a line per question, then
    one per revision); ``None`` when it fails."""
    proc = run(["rev-parse", "--path-format=absolute", *_OPENED, *revisions], path, check=False)
    return decode(proc.stdout).splitlines() if proc.returncode == 0 else None


def _repo(lines: Sequence[str]) -> Repo:
    root, git_dir, common_dir, index, shallow = lines[:5]
    return Repo(
        root=Path(root),
        git_dir=Path(git_dir),
        shallow=shallow == "true",
        common_dir=Path(common_dir),
        index=Path(index),
    )


def open_repo(path: Path) -> Repo:
    """The repository containing ``path``; :class:`NotARepositoryError` when there is none."""
    lines = _opened(path)
    if lines is None:
        raise NotARepositoryError(
            f"{path} is not inside a git work tree; bounded review compares a change with its "
            "base, so run it inside a git repository (git init, or cd into one)"
        )
    return _repo(lines)


def open_at_head(path: Path) -> tuple[Repo, tuple[str, str] | None]:
    """The repository containing ``path`` and its HEAD commit and tree, asked in one git
    process; ``None`` for HEAD when it names no commit (an unborn branch, asked again
    without it)."""
    lines = _opened(path, ["HEAD^{commit}", "HEAD^{tree}", "--"])
    if lines is None:
        return open_repo(path), None
    return _repo(lines), (lines[5], lines[6])
