"""The generated reference pages (`docs/reference/`) cannot drift from the code: a settings key,
an option or a schema changed without running `docs/generate.py` fails here."""

from __future__ import annotations

import dataclasses
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pytest_boundedreview.core.settings import tables
from pytest_boundedreview.core.settings.config import Settings

ROOT = Path(__file__).resolve().parents[1]


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_generated_pages_are_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "generate.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_settings_key_added_without_regenerating_is_caught() -> None:
    docs = generator()
    added = dataclasses.make_dataclass(
        "Settings",
        [("brand_new_key", bool, dataclasses.field(default=False))],
        bases=(Settings,),
        frozen=True,
        kw_only=True,
    )
    page = docs.PAGES / "configuration.md"
    assert page not in docs.stale()
    assert docs.stale(added) == [page]
    assert "`brand_new_key`" in docs.configuration(added)


def test_every_key_has_its_description_in_the_code() -> None:
    docs = generator()
    for cls in (Settings, *(getattr(tables, n) for n in dir(tables) if n.endswith("Config"))):
        if dataclasses.is_dataclass(cls):
            missing = {f.name for f in dataclasses.fields(cls)} - set(docs.docstrings(cls))
            assert not missing, f"{cls.__name__}: no docstring for {sorted(missing)}"
    assert not {f.name for f in dataclasses.fields(tables.RiskRules)} - set(
        docs.docstrings(tables.RiskRules)
    )
