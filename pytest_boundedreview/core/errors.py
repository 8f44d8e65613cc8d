"""The one family of user-facing errors and the exit status each one maps to."""

from __future__ import annotations

# Exit statuses of the console face (CONTRACT §10).
EXIT_CLEAN = 0
EXIT_NOT_CLEAN = 1
EXIT_INDETERMINATE = 2
EXIT_INTERNAL = 3
EXIT_USAGE = 4
EXIT_INTERRUPTED = 130


class FatalError(Exception):
    """An error a user can act on; the faces print its message without a traceback."""

    exit_code = EXIT_INTERNAL


class UsageError(FatalError):
    """Bad command-line usage or a bad option value."""

    exit_code = EXIT_USAGE


class ConfigError(UsageError):
    """``[tool.bounded-review]`` is malformed; the message names file, key and fix."""


class GitError(FatalError):
    """git failed or the repository is not in a state the tool can review."""

    exit_code = EXIT_USAGE


class NotARepositoryError(GitError):
    """The directory is not inside a git work tree."""


class BaseRefError(GitError):
    """The review base cannot be resolved (unknown ref, missing history)."""


class DiffParseError(FatalError):
    """git printed a diff the tool could not read: a bug in the tool, not the user's doing."""


class ValidationFailed(FatalError):
    """A file does not match its schema (``bounded-review validate``)."""

    exit_code = EXIT_NOT_CLEAN


class NoReportError(FatalError):
    """No report exists for what was asked."""

    exit_code = EXIT_INDETERMINATE


class LedgerError(FatalError):
    """A refused or failed loop-state operation: its ``BR_<CODE>``, detail and exit status."""

    def __init__(self, code: str, detail: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(f"BR_{code}: {detail}")
        self.code = code
        self.detail = detail
        self.exit_code = exit_code
