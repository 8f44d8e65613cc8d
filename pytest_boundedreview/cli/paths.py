"""Where the commands look for what a session wrote."""

from __future__ import annotations

from pathlib import Path

from ..change import git
from ..change.statedir import checked_state_dir
from ..core.configfile import TABLE, find_config
from ..core.errors import ConfigError, GitError
from ..core.pytestconfig.pytestini import from_files
from ..core.settings.statepath import DEFAULT_STATE_DIR


def default_state_folder() -> Path:
    """The state folder (``state_dir``, checked to be a folder of the tool's own) of the
    repository around the working directory; ``.bounded-review`` in the working directory
    outside one. Only the one key is read: the commands that read the folder need no other
    setting."""
    cwd = Path.cwd()
    try:
        repo = git.open_repo(cwd)
    except GitError:
        return cwd / DEFAULT_STATE_DIR
    path, table = find_config(cwd, repo.root)
    configured = table.get("state_dir", DEFAULT_STATE_DIR)
    try:
        if not isinstance(configured, str):
            raise ConfigError(f"state_dir must be a string (got {configured!r})")
        return checked_state_dir(repo, configured, from_files(cwd, repo.root))
    except ConfigError as exc:
        raise ConfigError(f"{path}: [{TABLE}] is invalid:\n  {exc}") from None
