"""The crash-safe store of one review loop: ``<state>/loops/<loop-id>/state.json``.

Every mutation: take the loop's kernel lock, sweep temp files of dead writers, load and
validate the state, replay or refuse a known operation id, apply, write a temp file in the same
folder, fsync it, ``os.replace`` it over the state, fsync the folder, read it back and validate
it — and only then answer. A state that does not validate is never overwritten. Nothing here
follows a symlink or writes outside the loop's folder.

File-system calls go through :data:`fs`, one small object, so fault tests can make any one of
them fail.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import re
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..core.errors import EXIT_INDETERMINATE, EXIT_INTERNAL, LedgerError
from ..core.validation import describe_all
from ..models.loop import LOOP_ID_PATTERN, LOOP_STATE_SCHEMA, LoopState, OperationReceipt
from .lock import DEFAULT_WAIT, exclusive
from .structure import violations

STATE = "state.json"
LOCK = "lock"
ARCHIVE = "archive"  # loops replaced by a new one (reset, or a new review of the target)
_ARCHIVED = re.compile(r"^(\d{4,})\.json$")
MAX_STATE_BYTES = 256 * 1024 * 1024
_TEMP = re.compile(r"^\.state\.json\.(\d+)\.[0-9a-f]+\.tmp$")
_SCHEMA_VERSION = re.compile(r"^bounded-review/loop-state/v(\d+)$")

Apply = Callable[[LoopState | None], tuple[LoopState, dict[str, Any]]]


class FileSystem:
    """The file-system calls the ledger makes (one object, so tests can inject faults)."""

    open = staticmethod(os.open)
    write = staticmethod(os.write)
    fsync = staticmethod(os.fsync)
    close = staticmethod(os.close)
    replace = staticmethod(os.replace)
    unlink = staticmethod(os.unlink)
    mkdir = staticmethod(os.mkdir)
    listdir = staticmethod(os.listdir)

    def read(self, path: Path) -> bytes:
        fd = self.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            chunks, size = [], 0
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
                size += len(chunk)
                if size > MAX_STATE_BYTES:
                    raise OSError(f"larger than {MAX_STATE_BYTES} bytes")
            return b"".join(chunks)
        finally:
            self.close(fd)


fs = FileSystem()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def digest(request: Mapping[str, Any]) -> str:
    """A stable digest of an operation's request."""
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        duplicated = sorted({key for key in keys if keys.count(key) > 1})
        raise ValueError(f"duplicate key {duplicated[0]!r}")
    return dict(pairs)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_state(data: bytes, where: Path) -> LoopState:
    """A state file's bytes as a validated :class:`LoopState`; refuses duplicate keys, newer
    schema versions and unknown fields rather than reading them wrongly."""
    try:
        json.loads(data, object_pairs_hook=_no_duplicates, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError too
        why = f"{where} is not valid JSON ({exc}); it is kept as it is"
        raise LedgerError("RECOVERY_REQUIRED", why, EXIT_INTERNAL) from None
    try:
        state = LoopState.model_validate_json(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        if any(e["type"] == "json_invalid" for e in errors):
            why = f"{where} is not valid JSON ({errors[0]['msg']}); it is kept as it is"
            raise LedgerError("RECOVERY_REQUIRED", why, EXIT_INTERNAL) from None
        with contextlib.suppress(ValueError, RecursionError):
            document = json.loads(data)
            schema = document.get("schema") if isinstance(document, dict) else None
            match = _SCHEMA_VERSION.match(schema) if isinstance(schema, str) else None
            if match and int(match[1]) > 1:
                why = f"{where} was written by a newer version ({schema}); upgrade the tool"
                raise LedgerError("RECOVERY_REQUIRED", why, EXIT_INTERNAL) from None
        problems = "; ".join(describe_all(exc)[:5])
        why = f"{where} does not validate ({problems}); it is kept as it is"
        raise LedgerError("RECOVERY_REQUIRED", why, EXIT_INTERNAL) from None
    broken = [f"{path}: {why}" for path, why in itertools.islice(violations(state), 5)]
    if broken:
        why = f"{where} breaks the loop's structure ({'; '.join(broken)}); it is kept as it is"
        raise LedgerError("RECOVERY_REQUIRED", why, EXIT_INTERNAL)
    return state


def _encode(state: LoopState) -> bytes:
    return (state.model_dump_json(indent=1) + "\n").encode()


class Ledger:
    """One loop's state file, its lock, and the mutation protocol."""

    def __init__(self, state_dir: Path, loop_id: str, wait: float = DEFAULT_WAIT) -> None:
        if not re.fullmatch(LOOP_ID_PATTERN, loop_id) or loop_id in (".", ".."):
            why = f"loop id {loop_id!r} must match {LOOP_ID_PATTERN} and not be `.` or `..`"
            raise LedgerError("INVALID", why)
        self.state_dir = state_dir
        self.loop_id = loop_id
        self.folder = state_dir / "loops" / loop_id
        self.path = self.folder / STATE
        self.wait = wait

    # -- containment ---------------------------------------------------------------------
    def _checked_folders(self, create: bool) -> bool:
        """Whether the loop folder exists; every level must be a real folder, not a link."""
        root = self.state_dir.resolve()
        for level in (self.state_dir, self.state_dir / "loops", self.folder):
            if level.is_symlink():
                raise LedgerError(
                    "PATH_ESCAPE", f"{level} is a symlink; refusing to use it", EXIT_INTERNAL
                )
            if not level.exists():
                if not create:
                    return False
                try:
                    fs.mkdir(level, 0o700)
                except FileExistsError:
                    pass
                except OSError as exc:
                    raise LedgerError(
                        "INVALID", f"cannot create {level}: {exc}", EXIT_INTERNAL
                    ) from None
            if not level.is_dir():
                raise LedgerError("PATH_ESCAPE", f"{level} is not a folder", EXIT_INTERNAL)
            if level != self.state_dir and not level.resolve().is_relative_to(root):
                raise LedgerError("PATH_ESCAPE", f"{level} leads outside {root}", EXIT_INTERNAL)
        for name in (STATE, LOCK):
            if (self.folder / name).is_symlink():
                why = f"{self.folder / name} is a symlink; refusing to use it"
                raise LedgerError("PATH_ESCAPE", why, EXIT_INTERNAL)
        return True

    # -- reading -------------------------------------------------------------------------
    def read(self) -> LoopState | None:
        """The current state (validated), or ``None`` when the loop does not exist yet."""
        if not self._checked_folders(create=False) or not self.path.exists():
            return None
        try:
            data = fs.read(self.path)
        except OSError as exc:
            raise LedgerError(
                "RECOVERY_REQUIRED", f"cannot read {self.path}: {exc}", EXIT_INTERNAL
            ) from None
        state = parse_state(data, self.path)
        if state.loop_id != self.loop_id:
            why = f"{self.path} holds loop {state.loop_id!r}, not {self.loop_id!r}; it is kept"
            raise LedgerError("RECOVERY_REQUIRED", why, EXIT_INTERNAL)
        return state

    # -- writing -------------------------------------------------------------------------
    def _sweep_temps(self) -> None:
        """Remove temp files whose writer is gone (a killed run's leftovers)."""
        with contextlib.suppress(OSError):
            for name in fs.listdir(self.folder):
                match = _TEMP.match(name)
                if match and not _pid_alive(int(match[1])):
                    with contextlib.suppress(OSError):
                        fs.unlink(self.folder / name)

    def _write(self, data: bytes) -> None:
        temp = self.folder / f".{STATE}.{os.getpid()}.{secrets.token_hex(6)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = fs.open(temp, flags, 0o600)
        except OSError as exc:
            raise LedgerError(
                "INVALID", f"cannot write in {self.folder}: {exc}", EXIT_INTERNAL
            ) from None
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[fs.write(fd, view) :]
                fs.fsync(fd)
            finally:
                fs.close(fd)
            fs.replace(temp, self.path)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                fs.unlink(temp)
            if isinstance(exc, OSError):
                why = f"could not write {self.path} ({exc}); the previous state is intact"
                raise LedgerError("INVALID", why, EXIT_INTERNAL) from None
            raise
        self._sync(self.folder, f"{self.path} was replaced")

    def _sync(self, folder: Path, what: str) -> None:
        try:
            fd = fs.open(folder, os.O_RDONLY | os.O_CLOEXEC)
            try:
                fs.fsync(fd)
            finally:
                fs.close(fd)
        except OSError as exc:
            why = f"{what} but {folder} could not be synced ({exc})"
            raise LedgerError("COMMIT_UNCERTAIN", why, EXIT_INDETERMINATE) from None

    def _archive(self) -> Path:
        """Move the state into ``archive/NNNN.json`` (the next number): kept, never deleted."""
        folder = self.folder / ARCHIVE
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise LedgerError("PATH_ESCAPE", f"{folder} is not a folder of its own", EXIT_INTERNAL)
        try:
            if not folder.exists():
                fs.mkdir(folder, 0o700)
            taken = [int(m[1]) for name in fs.listdir(folder) if (m := _ARCHIVED.match(name))]
            target = folder / f"{max(taken, default=0) + 1:04d}.json"
            fs.replace(self.path, target)  # a fresh number: the lock is held
        except OSError as exc:
            why = f"could not archive {self.path} ({exc}); it is kept where it was"
            raise LedgerError("INVALID", why, EXIT_INTERNAL) from None
        self._sync(folder, f"{self.path} was archived as {target}")
        self._sync(self.folder, f"{self.path} was archived as {target}")
        return target

    def archive(self) -> tuple[str, Path] | None:
        """Archive the loop (``bounded-review reset``) so its id starts anew: what its status
        was and where it went, or ``None`` when there is no loop. A state that needs recovery
        is archived as it is: moved, never rewritten."""
        if not self._checked_folders(create=False):
            return None
        with exclusive(self.folder / LOCK, self.wait):
            self._sweep_temps()
            try:
                current = self.read()
            except LedgerError as exc:
                if exc.code != "RECOVERY_REQUIRED":
                    raise
                return "in need of recovery", self._archive()
            return None if current is None else (current.status, self._archive())

    def mutate(
        self,
        operation_id: str,
        request: Mapping[str, Any],
        apply: Apply,
        replace: bool = False,
    ) -> dict[str, Any]:
        """Apply one operation exactly once and return its receipt (replayed when the same
        operation id comes again with the same request). ``apply`` returning the current state
        object itself means "no change": nothing is written or recorded. A closed loop never
        changes; ``replace`` (a new loop for the same id) archives the current one first."""
        if not operation_id or len(operation_id) > 256:
            raise LedgerError("INVALID", "an operation id of 1 to 256 characters is required")
        self._checked_folders(create=True)
        request_digest = digest(request)
        with exclusive(self.folder / LOCK, self.wait):
            self._sweep_temps()
            current = self.read()
            for known in current.operations if current else []:
                if known.operation_id == operation_id:
                    if known.request_digest != request_digest:
                        why = f"operation {operation_id!r} was already applied with another request"
                        raise LedgerError("OPERATION_CONFLICT", why)
                    return {**known.receipt, "replayed": True}
            state, receipt = apply(current)
            if state is current:  # nothing to change (a closed loop replaying its close)
                return receipt
            if current is not None and current.status != "open" and not replace:
                why = (
                    f"loop {self.loop_id!r} is {current.status}: a closed loop never changes; "
                    "review anew under another loop id, or archive it with `bounded-review "
                    f"reset --loop-id {self.loop_id}`"
                )
                raise LedgerError("LOOP_CLOSED", why)
            entry = OperationReceipt(
                operation_id=operation_id, request_digest=request_digest, receipt=receipt
            )
            state = state.model_copy(update={"operations": [*state.operations, entry]})
            data = _encode(state)
            try:  # what would be written must validate: never write a state that does not
                state = parse_state(data, self.path)
            except LedgerError as exc:
                why = f"the operation would leave an invalid state, nothing written: {exc.detail}"
                raise LedgerError("INVALID", why, EXIT_INTERNAL) from None
            if replace and current is not None:
                self._archive()
            self._write(data)
            try:
                stored = fs.read(self.path)
            except OSError as exc:
                why = f"{self.path} could not be read back ({exc})"
                raise LedgerError("COMMIT_UNCERTAIN", why, EXIT_INDETERMINATE) from None
            if stored != data or parse_state(stored, self.path) != state:
                why = f"{self.path} did not read back as written"
                raise LedgerError("COMMIT_UNCERTAIN", why, EXIT_INDETERMINATE)
            return receipt


def new_state(loop_id: str, **fields: Any) -> LoopState:
    """A fresh loop state (``fields`` as :class:`LoopState` takes them)."""
    return LoopState.model_validate({"schema": LOOP_STATE_SCHEMA, "loop_id": loop_id, **fields})
