from __future__ import annotations

from pathlib import Path

import pytest
import realclis


@pytest.fixture(scope="session")
def cli_bin() -> Path:
    """The pinned agent CLIs' ``bin`` folder, installed once per lock (``realclis.install``).
    Without npm the group is skipped; with npm, a failed install fails it with npm's words."""
    try:
        return realclis.install()
    except FileNotFoundError as exc:
        pytest.skip(f"the real agent CLIs are installed with npm, and {exc}")
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
