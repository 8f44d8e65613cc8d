"""End to end: compiled translations (``*.mo``, made from the tracked ``.po`` before the tests
and ignored by git). One beside a ``.po`` of the same name is compiled at the base from the
base's ``.po``, whatever the change did to the catalogue or left in the working tree's
``.mo``; one with no such ``.po`` is given to the base while no ``.po`` changed, else withheld
and the base's answers other than a pass are unknown, never a false ``pre-existing``."""

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


@pytest.mark.slow
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


@pytest.mark.slow
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


BUG = "def test_known_bug():\n    assert 1 + 1 == 3\n"


@pytest.mark.slow
@pytest.mark.parametrize("extra", XDIST)
@pytest.mark.parametrize("bytecode", ["written", "not written"])
def test_a_translators_change_keeps_an_unrelated_failure_pre_existing(
    pytester: pytest.Pytester,
    translated: GitRepo,
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
    bytecode: str,
) -> None:
    """The change edits the ``.po`` alone (and recompiles): the base compiles its own, so
    its answers hold, and failures the change has nothing to do with stay pre-existing."""
    if bytecode == "written":
        monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    else:
        monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    translated.commit({"test_bug.py": BUG}, "a known bug")
    translated.git("branch", "--force", "main")  # the bug is the base's too
    added = {**CATALOGUE, "Thanks": "Danke"}
    translated.commit({PO: po(added)}, "translate Thanks")
    translated.write(MO, mo(added))
    with translated.untouched():
        result, report = review(pytester, *extra)
    assert sorted(ids(report, "pre_existing")) == [
        "test_bug.py::test_known_bug",
        "test_i18n.py::test_farewell",
    ], report["tests"]
    assert ids(report, "unknown") == []
    assert report["gate"]["review_clean"] == "yes"
    assert result.ret == 0


@pytest.mark.slow
def test_a_dropped_translation_is_target_related(
    pytester: pytest.Pytester, translated: GitRepo
) -> None:
    """The change drops the translation of "Hello" and recompiles: copying its ``.mo`` would
    make the base fail as the change does, and so would the base without any (gettext falls
    back to the untranslated text). The base compiles its own ``.po``, which has it."""
    dropped = {"Goodbye": CATALOGUE["Goodbye"]}
    translated.commit({PO: po(dropped)}, "drop a translation")
    translated.write(MO, mo(dropped))
    with translated.untouched():
        result, report = review(pytester)
    assert sorted(ids(report, "target_related")) == [
        "test_fallback.py::test_greet_anyway",
        "test_i18n.py::test_greet",
    ], report["tests"]
    assert ids(report, "pre_existing") == ["test_i18n.py::test_farewell"]
    assert ids(report, "unknown") == []
    assert result.ret == 1


@pytest.mark.slow
def test_a_stale_compiled_translation_does_not_reach_the_base(
    pytester: pytest.Pytester, translated: GitRepo
) -> None:
    """The working tree's ``.mo`` is not what its unchanged ``.po`` compiles to (stale, or
    made so): copied, it would make the base fail as head does."""
    translated.commit({"README.md": "docs\n"}, "docs only")
    translated.write(MO, mo({"Goodbye": CATALOGUE["Goodbye"]}))
    with translated.untouched():
        result, report = review(pytester)
    assert sorted(ids(report, "target_related")) == [
        "test_fallback.py::test_greet_anyway",
        "test_i18n.py::test_greet",
    ], report["tests"]
    assert report["gate"]["review_clean"] != "yes"
    assert result.ret == 1


@pytest.mark.slow
def test_a_new_language_has_no_translation_at_the_base(
    pytester: pytest.Pytester, translated: GitRepo
) -> None:
    """The change adds a catalogue the base lacks: the base gets no ``.mo`` for it."""
    translated.commit({"test_bug.py": BUG}, "a known bug")
    translated.git("branch", "--force", "main")
    french = PO.replace("/de/", "/fr/")
    translated.commit({french: po({"Hello": "Bonjour"})}, "French")
    translated.write(MO.replace("/de/", "/fr/"), mo({"Hello": "Bonjour"}))
    with translated.untouched():
        result, report = review(pytester)
    assert sorted(ids(report, "pre_existing")) == [
        "test_bug.py::test_known_bug",
        "test_i18n.py::test_farewell",
    ], report["tests"]
    assert report["gate"]["review_clean"] == "yes"
    assert result.ret == 0


@pytest.mark.slow
def test_a_base_catalogue_that_does_not_compile_makes_base_answers_unknown(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    """The base's ``.po`` is broken (the change mends it): the base runs without its
    ``.mo``, and its answers say why instead of passing for evidence."""
    ignores = (project.path / ".gitignore").read_text() + "*.mo\n"
    files = {".gitignore": ignores, "app.py": APP, "test_i18n.py": TESTS, "test_bug.py": BUG}
    project.commit({**files, PO: po(CATALOGUE) + 'msgid "Hi\n'}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({PO: po(CATALOGUE)}, "mend the catalogue")
    project.write(MO, mo(CATALOGUE))
    with project.untouched():
        result, report = review(pytester)
    unknown = {t["nodeid"]: t["reason"] for t in report["tests"]["unknown"]}
    assert sorted(unknown) == ["test_bug.py::test_known_bug", "test_i18n.py::test_farewell"]
    for reason in unknown.values():
        assert f"the base's {PO} does not compile (line 7: a string with no closing" in reason
    assert report["gate"]["review_clean"] == "indeterminate"
    assert result.ret == 1


SPLIT_PO = "locale/de/LC_MESSAGES/de.po"  # made into messages.mo: no .po of its name


@pytest.fixture
def split(project: GitRepo) -> GitRepo:
    """As ``translated``, with the catalogue under another name than its ``.mo``'s."""
    ignores = (project.path / ".gitignore").read_text() + "*.mo\n"
    files = {".gitignore": ignores, "app.py": APP, "test_i18n.py": TESTS, "test_bug.py": BUG}
    project.commit({**files, SPLIT_PO: po(CATALOGUE)}, "base")
    project.write(MO, mo(CATALOGUE))
    project.git("checkout", "--quiet", "-b", "feature")
    return project


@pytest.mark.slow
def test_a_compiled_translation_apart_from_its_catalogue_is_copied_on_a_docs_change(
    pytester: pytest.Pytester, split: GitRepo
) -> None:
    split.commit({"README.md": "docs\n"}, "docs only")
    result, report = review(pytester)
    assert sorted(ids(report, "pre_existing")) == [
        "test_bug.py::test_known_bug",
        "test_i18n.py::test_farewell",
    ], report["tests"]
    assert result.ret == 0


@pytest.mark.slow
def test_a_compiled_translation_apart_from_its_catalogue_is_withheld_by_a_po_change(
    pytester: pytest.Pytester, split: GitRepo
) -> None:
    """Nothing says which ``.po`` it is made from: withheld, and the reason names it."""
    dropped = {"Goodbye": CATALOGUE["Goodbye"]}
    split.commit({SPLIT_PO: po(dropped)}, "drop a translation")
    split.write(MO, mo(dropped))
    with split.untouched():
        result, report = review(pytester)
    unknown = {t["nodeid"]: t["reason"] for t in report["tests"]["unknown"]}
    assert "test_i18n.py::test_greet" in unknown, report["tests"]
    for reason in unknown.values():
        assert f"compiled translation(s) of the working tree ({MO}, with no .po" in reason
        assert "were withheld from the base" in reason
        assert SPLIT_PO in reason
    assert ids(report, "pre_existing") == []
    assert report["gate"]["review_clean"] != "yes"
    assert result.ret == 1
