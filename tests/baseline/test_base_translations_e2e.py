"""End to end: compiled translations (``*.mo``, made from the tracked ``.po`` before the tests
and ignored by git). The base re-run is given them while their ``.po`` files are the base's;
when the change edits a ``.po``, they are withheld and the base's answers other than a pass
are unknown, never a false ``pre-existing``."""

from __future__ import annotations

import struct

import pytest
from gitrepo import GitRepo
from test_baseline_e2e import XDIST, ids, review

APP = """\
import gettext
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def tr(text):
    found = gettext.translation("messages", os.path.join(HERE, "locale"), ["de"], fallback=True)
    return found.gettext(text)


def greet():
    return tr("Hello")


def farewell():
    return tr("Goodbye")
"""
TESTS = """\
import os

import pytest

import app

MO = os.path.join(app.HERE, "locale", "de", "LC_MESSAGES", "messages.mo")
pytestmark = pytest.mark.skipif(not os.path.exists(MO), reason="run pybabel compile first")


def test_greet():
    assert app.greet() == "Hallo"


def test_farewell():
    assert app.farewell() == "Auf Wiedersehen"
"""
FALLBACK = "import app\n\n\ndef test_greet_anyway():\n    assert app.greet() == 'Hallo'\n"
CATALOGUE = {"Hello": "Hallo", "Goodbye": "Tschuess"}  # an old mistake in "Goodbye"
PO = "locale/de/LC_MESSAGES/messages.po"
MO = "locale/de/LC_MESSAGES/messages.mo"


def po(messages: dict[str, str]) -> str:
    return "".join(f'msgid "{k}"\nmsgstr "{v}"\n\n' for k, v in messages.items())


def mo(messages: dict[str, str]) -> bytes:
    """A GNU ``.mo`` file of ``messages`` (what ``pybabel compile`` writes)."""
    keys = sorted(messages)
    ids_, strs, offsets = b"", b"", []
    for key in keys:
        value = messages[key].encode()
        offsets.append((len(ids_), len(key), len(strs), len(value)))
        ids_ += key.encode() + b"\0"
        strs += value + b"\0"
    start_ids = 7 * 4 + 16 * len(keys)
    start_strs = start_ids + len(ids_)
    table = b"".join(struct.pack("ii", n, start_ids + o) for o, n, _, _ in offsets)
    table += b"".join(struct.pack("ii", n, start_strs + o) for _, _, o, n in offsets)
    header = struct.pack("Iiiiiii", 0x950412DE, 0, len(keys), 28, 28 + 8 * len(keys), 0, 0)
    return header + table + ids_ + strs


@pytest.fixture
def translated(project: GitRepo) -> GitRepo:
    """``main`` holds the app, its tests and the ``.po``; the ``.mo`` is compiled and
    ignored; ``feature`` branches off."""
    ignores = (project.path / ".gitignore").read_text() + "*.mo\n"
    files = {".gitignore": ignores, "app.py": APP, "test_i18n.py": TESTS}
    project.commit({**files, "test_fallback.py": FALLBACK, PO: po(CATALOGUE)}, "base")
    project.write(MO, mo(CATALOGUE))
    project.git("checkout", "--quiet", "-b", "feature")
    return project


@pytest.mark.parametrize("extra", XDIST)
def test_an_old_translation_failure_stays_pre_existing_on_a_docs_change(
    pytester: pytest.Pytester, translated: GitRepo, extra: list[str]
) -> None:
    translated.commit({"README.md": "docs\n"}, "docs only")
    with translated.untouched():
        result, report = review(pytester, *extra)
    # Without the .mo the base skipped test_farewell: "unknown".
    assert ids(report, "pre_existing") == ["test_i18n.py::test_farewell"], report["tests"]
    assert ids(report, "unknown") == []
    assert report["gate"]["review_clean"] == "yes"
    assert result.ret == 0


def test_a_regression_in_translated_code_is_target_related(
    pytester: pytest.Pytester, translated: GitRepo
) -> None:
    translated.commit({"app.py": APP.replace('tr("Hello")', 'tr("Hello").upper()')}, "shout")
    result, report = review(pytester)
    assert sorted(ids(report, "target_related")) == [
        "test_fallback.py::test_greet_anyway",
        "test_i18n.py::test_greet",
    ], report["tests"]
    assert ids(report, "unknown") == []
    assert result.ret == 1


def test_a_change_to_the_catalogue_withholds_the_compiled_translations(
    pytester: pytest.Pytester, translated: GitRepo
) -> None:
    """The change drops the translation of "Hello" and recompiles: copying its ``.mo`` would
    make the base fail as the change does, and so would the base without any (gettext falls
    back to the untranslated text): neither is evidence, so both failures are unknown."""
    dropped = {"Goodbye": CATALOGUE["Goodbye"]}
    translated.commit({PO: po(dropped)}, "drop a translation")
    translated.write(MO, mo(dropped))
    with translated.untouched():
        result, report = review(pytester)
    unknown = {t["nodeid"]: t["reason"] for t in report["tests"]["unknown"]}
    assert "test_fallback.py::test_greet_anyway" in unknown, report["tests"]
    for reason in unknown.values():
        assert "compiled translation(s) of the working tree were not given to the base" in reason
        assert PO in reason
    assert ids(report, "pre_existing") == []
    assert report["gate"]["review_clean"] != "yes"
    assert result.ret == 1
