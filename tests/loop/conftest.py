"""The orchestrator fixture of the loop command tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from orchestrator import Orchestrator


@pytest.fixture
def run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Orchestrator:
    return Orchestrator(tmp_path, capsys)
