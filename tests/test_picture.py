"""The README's picture is the demo's real output: drawn from a transcript that a fresh run of
``bounded-review demo`` still produces."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _picture() -> ModuleType:
    spec = importlib.util.spec_from_file_location("picture", ROOT / "docs" / "picture.py")
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_shows_the_picture() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert re.search(r"!\[[^\]]+\]\(docs/images/demo\.svg\)", readme)


def test_the_picture_is_drawn_from_the_transcript() -> None:
    picture = _picture()
    transcript = picture.TRANSCRIPT.read_text()
    assert picture.PICTURE.read_text() == picture.draw(transcript)
    assert "review_clean" in picture.plain(transcript)


@pytest.mark.slow
def test_the_transcript_is_what_the_demo_prints_today() -> None:
    picture = _picture()
    fresh = picture.plain(picture.run_demo())
    kept = picture.plain(picture.TRANSCRIPT.read_text())
    assert fresh == kept, "the demo's output changed: run python docs/picture.py"
    # The comparison sees a changed verdict, not only a changed layout.
    assert picture.plain(kept.replace("review_clean: no", "review_clean: yes")) != fresh
