"""Fixtures of the target tests."""

from __future__ import annotations

import pytest

from pytest_boundedreview.change import git


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The git commands run or started from here on; the process's memory of blobs starts empty."""
    monkeypatch.setattr(git, "_KNOWN", {})
    seen: list[list[str]] = []
    real = git.run

    def counted(args: list[str], *rest: object, **kwargs: object) -> object:
        seen.append(list(args))
        return real(args, *rest, **kwargs)  # type: ignore[arg-type]

    started = git.Started.__init__

    def counted_start(self: git.Started, args: list[str], *rest: object, **kwargs: object) -> None:
        seen.append(list(args))
        started(self, args, *rest, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(git, "run", counted)
    monkeypatch.setattr(git.Started, "__init__", counted_start)
    return seen
