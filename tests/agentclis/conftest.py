from __future__ import annotations

from pathlib import Path

import pytest
import realclis


@pytest.fixture(scope="session")
def cli_bin() -> Path:
    """The pinned agent CLIs' ``bin`` folder, installed once per lock (``realclis.install``).
    Without npm the group is skipped; with npm, a failed install fails it with npm's words."""
    return realclis.installed()
