"""End to end: the same failure at head and at the base has the same signature, whatever the
run-to-run differences pytest and Python put in its message (where a long repr is cut, the
order of a set, the hash seed, pytest-randomly's seed); a real change of the failure still
shows."""

from __future__ import annotations

import importlib.metadata
import importlib.util

import pytest
from gitrepo import GitRepo
from test_baseline_e2e import XDIST, ids, review

# pytest shortens the repr of the object in its comparison message in the middle, and what is
# left of its address at the cut differs from run to run: "[<things.AThi...7f99fd110d90>]".
THINGS = """\
class AThingWithALongName:
    pass


def made():
    return [AThingWithALongName()]


def wanted():
    return []
"""
THINGS_TEST = (
    "from things import made, wanted\n\n\ndef test_made():\n    assert made() == wanted()\n"
)

# A set lists its elements in the order of their hashes (all one here, so as they came): the
# dispatch message's order is not part of the failure. Real classes hash by address.
KINDS = """\
from collections.abc import Mapping, MutableMapping


class Kind:
    def __init__(self, name):
        self.name = name

    def __hash__(self):
        return 0

    def __repr__(self):
        return f"<class {self.name!r}>"


def candidates():
    return {Kind("Mapping"), Kind("MutableMapping")}


def dispatch(cls):
    raise LookupError(f"Ambiguous dispatch for {cls}: {candidates()}")


def dispatch_abc(cls):
    raise LookupError(f"Ambiguous dispatch for {cls}: {set([Mapping, MutableMapping])}")
"""
KINDS_TEST = (
    "from kinds import dispatch, dispatch_abc\n\n\n"
    "def test_dispatch():\n    dispatch(dict)\n\n\n"
    "def test_dispatch_abc():\n    dispatch_abc(dict)\n"
)


def committed(project: GitRepo, files: dict[str, str]) -> GitRepo:
    project.commit(files, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    return project


def test_a_shortened_repr_is_the_same_failure_wherever_its_address_is(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    committed(project, {"things.py": THINGS, "test_things.py": THINGS_TEST})
    project.commit({"README.md": "docs\n"}, "docs only")
    result, report = review(pytester)
    [failure] = report["tests"]["pre_existing"]
    assert failure["nodeid"] == "test_things.py::test_made"
    assert failure["signature"].startswith("AssertionError: assert [<things.AThi...>] == []")
    assert result.ret == 0


def test_a_shortened_repr_compared_with_something_else_is_another_failure(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    committed(project, {"things.py": THINGS, "test_things.py": THINGS_TEST})
    project.commit({"things.py": THINGS.replace("return []", "return [0]")}, "want another")
    result, report = review(pytester)
    [failure] = report["tests"]["target_related"]
    assert failure["reason"] == f"failure changed: was {failure['base_signature']}"
    assert "== [N]" in failure["signature"]
    assert result.ret == 1


def test_the_order_of_a_sets_elements_is_not_the_failure(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    committed(project, {"kinds.py": KINDS, "test_kinds.py": KINDS_TEST})
    swapped = KINDS.replace(
        '{Kind("Mapping"), Kind("MutableMapping")}', '{Kind("MutableMapping"), Kind("Mapping")}'
    )
    project.commit({"kinds.py": swapped}, "list the candidates the other way round")
    result, report = review(pytester)
    assert sorted(ids(report, "pre_existing")) == [
        "test_kinds.py::test_dispatch",
        "test_kinds.py::test_dispatch_abc",
    ]
    assert result.ret == 0


@pytest.mark.slow
def test_another_element_in_the_set_is_another_failure(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    committed(project, {"kinds.py": KINDS, "test_kinds.py": KINDS_TEST})
    more = KINDS.replace('Kind("MutableMapping")}', 'Kind("MutableMapping"), Kind("Set")}')
    project.commit({"kinds.py": more}, "one more candidate")
    result, report = review(pytester)
    assert ids(report, "target_related") == ["test_kinds.py::test_dispatch"]
    assert ids(report, "pre_existing") == ["test_kinds.py::test_dispatch_abc"]
    assert result.ret == 1


# A word spelt from hash("key"): the same only under the same hash seed.
HASHED = """\
def test_hashed():
    word = "".join("abcdefghijklmnop"[int(c, 16)] for c in f"{{hash({key!r}) & 0xFFFFFFFF:08x}}")
    assert not word, word
"""


@pytest.mark.slow
@pytest.mark.parametrize("extra", XDIST)
def test_the_base_runs_with_the_sessions_hash_seed(
    pytester: pytest.Pytester,
    project: GitRepo,
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
) -> None:
    monkeypatch.setenv("PYTHONHASHSEED", "1234")
    committed(project, {"test_hashed.py": HASHED.format(key="key")})
    project.commit({"README.md": "docs\n"}, "docs only")
    result, report = review(pytester, *extra)
    assert ids(report, "pre_existing") == ["test_hashed.py::test_hashed"]
    assert result.ret == 0

    # Hashing another key spells another word: the change's own failure.
    project.commit({"test_hashed.py": HASHED.format(key="another key")}, "hash another key")
    result, report = review(pytester, *extra)
    assert ids(report, "target_related") == ["test_hashed.py::test_hashed"]
    assert result.ret == 1


DRAWN = """\
import random

WORDS = {words!r}


def test_drawn():
    assert random.choice(WORDS) == "none"
"""
FRUIT = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "kiwi"]
TREES = ["ash", "beech", "cedar", "deodar", "elm", "fir", "gum", "holly"]


def randomly() -> list[str]:
    """The options that load pytest-randomly: none when it is installed (it loads itself),
    its module when it is only importable; skip without it."""
    if importlib.metadata.entry_points(group="pytest11", name="randomly"):
        return []
    if importlib.util.find_spec("pytest_randomly") is None:
        pytest.skip("pytest-randomly is not installed")
    return ["-p", "pytest_randomly"]


@pytest.mark.slow
def test_under_pytest_randomly_the_base_draws_what_the_session_drew(
    pytester: pytest.Pytester, project: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)  # the suite's sessions run without it
    loaded = randomly()
    committed(project, {"test_drawn.py": DRAWN.format(words=FRUIT)})
    project.commit({"README.md": "docs\n"}, "docs only")
    result, report = review(pytester, *loaded)
    result.stdout.fnmatch_lines(["Using --randomly-seed=*"])
    assert ids(report, "pre_existing") == ["test_drawn.py::test_drawn"]
    assert result.ret == 0

    # Other words to draw from: another failure, whatever the seed.
    project.commit({"test_drawn.py": DRAWN.format(words=TREES)}, "draw trees")
    result, report = review(pytester, *loaded)
    assert ids(report, "target_related") == ["test_drawn.py::test_drawn"]
    assert result.ret == 1
