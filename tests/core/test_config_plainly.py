"""Settings built without pydantic (``checked_plainly``) are exactly what pydantic's
validation makes of the same data, and nothing pydantic refuses is built: every field, valid
and invalid values, alone and together."""

from __future__ import annotations

import dataclasses
import datetime
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from pytest_boundedreview.core.errors import ConfigError
from pytest_boundedreview.core.settings.config import Settings, load_settings, validated
from pytest_boundedreview.models.plain import checked_plainly, jsonable, validate_data

FIELDS = [f.name for f in dataclasses.fields(Settings)]

# Values of every kind a TOML table or an option gives, and the near misses of each kind.
VALUES: list[object] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    11,
    10**6,
    1.0,
    0.5,
    1.5,
    float("nan"),
    "",
    "x",
    "main",
    "auto",
    "pr",
    "staged",
    "plan",
    "strict",
    "economy",
    "review-and-fix",
    "base",
    "head",
    "AUTO",
    "auto ",
    "1",
    "true",
    "../x",
    "/abs",
    ".bounded-review",
    ".bounded-review/w.toml",
    "docs/w.toml",
    ".",
    [],
    ["x"],
    [""],
    ["-m", "slow"],
    ["--maxfail=1"],
    [1],
    {},
    {"x": 1},
    [{"name": "a", "command": ["x"]}],
    [{"name": "a", "lens": "security", "command": ["x"]}],
    {"model_review_lane": "a"},
    datetime.date(2024, 1, 1),
    ("x",),
]


class Text(str):
    """Text of a subclass: not what a TOML reader gives, never taken plainly."""


def outcome(data: dict[str, Any]) -> object:
    """What pydantic makes of ``data``: the settings, or its error."""
    try:
        return validate_data(Settings, data)
    except ValidationError as exc:
        return ("invalid", str(exc))


def held_to_pydantic(data: dict[str, Any]) -> Settings | None:
    plainly = checked_plainly(Settings, data)
    full = outcome(data)
    if plainly is not None:
        assert isinstance(full, Settings), (data, full)
        assert plainly == full
        assert json.dumps(jsonable(plainly)) == json.dumps(jsonable(full))
        assert [type(getattr(plainly, k)) for k in FIELDS] == [
            type(getattr(full, k)) for k in FIELDS
        ]
    return plainly


def test_the_defaults_are_valid() -> None:
    assert validate_data(Settings, {}) == Settings()
    assert validate_data(Settings, jsonable(Settings())) == Settings()
    assert checked_plainly(Settings, {}) == Settings()


@pytest.mark.parametrize("key", FIELDS)
def test_each_field_alone_as_pydantic_validates_it(key: str) -> None:
    default = getattr(Settings(), key)
    taken = [v for v in [*VALUES, default, jsonable(default)] if held_to_pydantic({key: v})]
    assert held_to_pydantic({key: Text("main")}) is None
    assert held_to_pydantic({f"{key}_": "x"}) is None  # an unknown key: pydantic says why
    if key in ("base", "report", "markdown", "sarif", "review_command", "waivers_file"):
        assert "main" in taken or "x" in taken  # text is taken plainly
    if key in ("no_lanes", "full", "shard", "allow_partial", "reuse_base_checkout"):
        assert [v for v in taken if type(v) is not bool] == []  # never 1, nor "true"
        assert True in taken


def test_cross_field_checks_are_pydantic_s() -> None:
    for data in (
        {"waivers_file": ".bounded-review/w.toml"},  # inside the state folder
        {"waivers_file": "../w.toml"},
        {"waivers_file": "/w.toml"},
        {"waivers_file": ""},
        {"waivers_file": "review/w.toml", "state_dir": "review"},
    ):
        assert held_to_pydantic(data) is None
        assert outcome(data)[0] == "invalid"  # type: ignore[index]
    assert held_to_pydantic({"waivers_file": "docs/w.toml", "base": "main"}) is not None


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([*FIELDS, "bogus", "lane"]),
        st.sampled_from(VALUES) | st.text(max_size=12) | st.booleans() | st.none(),
        max_size=6,
    )
)
def test_any_combination_as_pydantic_validates_it(data: dict[str, Any]) -> None:
    held_to_pydantic(data)


def test_an_invalid_plain_key_keeps_its_message(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.bounded-review]\ntarget = "everything"\n')
    with pytest.raises(ConfigError, match=r"target.*'auto', 'pr', 'local-diff' or 'staged'"):
        load_settings(tmp_path, tmp_path)
    with pytest.raises(ConfigError, match="--bounded-review-full"):
        load_settings(tmp_path, tmp_path, {"target": "pr", "full": "yes"})
    with pytest.raises(ValidationError):
        validated({"mode": "review-and-fix", "risk": "high"})
    assert validated({"mode": "review-and-fix"}).mode == "review-and-fix"


def test_a_plain_configuration_imports_no_pydantic(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.bounded-review]\nbase = "main"\ntarget = "pr"\nno_lanes = true\n'
    )
    code = (
        "import sys; from pathlib import Path\n"
        "from pytest_boundedreview.core.settings.config import load_settings\n"
        f"root = Path({str(tmp_path)!r})\n"
        "s, _ = load_settings(root, root, {'full': True})\n"
        "print(s.base, s.target, s.no_lanes, s.full, 'pydantic' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["main", "pr", "True", "True", "False"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("table", "said"),
    [
        ('target = "everything"', "target"),
        ("no_lanes = 1", "no_lanes"),
        ('waivers_file = ".bounded-review/w.toml"', "inside the state folder"),
        ('waivers_file = "../w.toml"', "inside the repository"),
        ('mode = "review-and-fix"\nrisk = "high"', "risk"),
    ],
)
def test_a_session_refuses_an_invalid_plain_configuration(
    pytester: pytest.Pytester, project: GitRepo, table: str, said: str
) -> None:
    """A first review (no state folder) with a plain value pydantic refuses: the session
    stops with pydantic's message, as before; the user's tree is left as it was."""
    project.commit({"test_a.py": "def test_a():\n    assert 1\n"}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"pyproject.toml": f"[tool.bounded-review]\n{table}\n"}, "configured")
    with project.untouched():
        result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert said in result.stderr.str()
    assert "[tool.bounded-review] is invalid" in result.stderr.str()


@pytest.mark.slow
def test_a_session_with_a_plain_configuration_is_reviewed(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    """The harmless control: plain values, valid, in a fresh clone: reviewed and clean."""
    project.commit({"test_a.py": "def test_a():\n    assert 1\n"}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    config = '[tool.bounded-review]\ntarget = "pr"\nno_lanes = true\nwaivers_file = "w.toml"\n'
    project.commit({"pyproject.toml": config}, "configured")
    with project.untouched():
        result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
    assert result.ret == 0
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    assert report["gate"]["review_clean"] == "yes"
