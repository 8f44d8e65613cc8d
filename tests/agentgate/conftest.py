from __future__ import annotations

import pytest


@pytest.fixture(params=["bytecode", "no bytecode"])
def bytecode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Each test that asks for it runs twice: with bytecode written, as agents' and users'
    shells do, and without (``PYTHONDONTWRITEBYTECODE`` set)."""
    if request.param == "bytecode":
        monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    else:
        monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    return request.param == "bytecode"
