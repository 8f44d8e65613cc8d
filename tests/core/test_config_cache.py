"""A configuration is validated with pydantic once; later runs with the same one build their
settings without it, and a session that has nothing untrusted to validate never imports it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.core.errors import ConfigError
from pytest_boundedreview.core.settings.config import Settings, load_settings
from pytest_boundedreview.core.statefile import state_folder

CONFIG = """\
[tool.bounded-review]
base = "main"
reruns = 2
lanes = [{ name = "a", lens = "security", command = ["rev"], timeout = 30 }]

[tool.bounded-review.risk_rules.triggers.billing]
paths = ["billing/**"]
"""
LOAD = """\
import json, sys
from pathlib import Path
from pytest_boundedreview.core.settings.config import load_settings
root = Path(sys.argv[1])
settings, _ = load_settings(root, root)
print(json.dumps({"pydantic": "pydantic" in sys.modules, "timeout": settings.lanes[0].timeout}))
"""


def load_in_a_new_process(root: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", LOAD, str(root)], capture_output=True, text=True, check=True
    )
    found: dict[str, object] = json.loads(done.stdout)
    return found


@pytest.mark.slow
def test_a_configuration_validated_once_is_built_without_pydantic(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    assert load_in_a_new_process(tmp_path)["pydantic"] is True  # no state folder: not noted
    assert not (tmp_path / ".bounded-review").exists()
    state_folder(tmp_path, ".bounded-review")
    assert load_in_a_new_process(tmp_path)["pydantic"] is True  # validated, and noted
    [marker] = (tmp_path / ".bounded-review" / "cache").iterdir()
    assert marker.name.startswith("config-valid-")
    again = load_in_a_new_process(tmp_path)
    assert again == {"pydantic": False, "timeout": 30.0}  # a float, as validation makes it

    validated, _ = load_settings(tmp_path, tmp_path, {"reruns": 3})  # new overrides: validated
    built, _ = load_settings(tmp_path, tmp_path, {"reruns": 3})  # the same: built
    assert built == validated
    assert built.risk_rules.triggers["billing"].paths == ["billing/**"]
    assert isinstance(built, Settings)


@pytest.mark.parametrize("ignore", [None, "build/\n"])
def test_nothing_is_noted_in_a_folder_the_tool_did_not_make(
    tmp_path: Path, ignore: str | None
) -> None:
    """A configured folder that exists but is not a state folder the tool made (no
    ``.gitignore`` of ``*``) is left as it is; the tool's own gets the note."""
    (tmp_path / "pyproject.toml").write_text(
        CONFIG.replace('base = "main"', 'base = "main"\nstate_dir = "review"')
    )
    (tmp_path / "review").mkdir()
    if ignore is not None:
        (tmp_path / "review" / ".gitignore").write_text(ignore)
    before = sorted(p.name for p in (tmp_path / "review").iterdir())
    load_settings(tmp_path, tmp_path)
    assert sorted(p.name for p in (tmp_path / "review").iterdir()) == before
    (tmp_path / "review" / ".gitignore").write_text("*\n")
    load_settings(tmp_path, tmp_path)
    [marker] = (tmp_path / "review" / "cache").iterdir()
    assert marker.name.startswith("config-valid-")


def test_a_changed_configuration_is_validated_again(tmp_path: Path) -> None:
    state_folder(tmp_path, ".bounded-review")
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    load_settings(tmp_path, tmp_path)
    load_settings(tmp_path, tmp_path)
    (tmp_path / "pyproject.toml").write_text(CONFIG.replace("reruns = 2", "reruns = 99"))
    with pytest.raises(ConfigError, match="reruns"):
        load_settings(tmp_path, tmp_path)
    assert len(list((tmp_path / ".bounded-review" / "cache").iterdir())) == 1  # the old one


@pytest.mark.slow
def test_a_reviewed_session_with_nothing_to_validate_imports_no_pydantic(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    """A failure at head that passes at base, re-run at both: classified, reported, and no
    pydantic in the session's process once its configuration is known to be valid."""
    pytester.makeconftest(
        "import sys\n\n\ndef pytest_unconfigure(config):\n"
        "    open('imported.txt', 'w').write(str('pydantic' in sys.modules))\n"
    )
    project.commit({"test_a.py": "def test_a():\n    assert 1\n"}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_a.py": "def test_a():\n    assert 0\n"}, "regression")
    seen = []
    for _ in range(3):
        result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
        assert result.ret == 1
        seen.append((pytester.path / "imported.txt").read_text())
        report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
        assert report["tests"]["target_related"][0]["reason"] == "passes at base"
    # an option of plain text is plainly valid: no pydantic even before the note is made
    assert seen == ["False", "False", "False"]


@pytest.mark.slow
def test_a_session_without_a_toml_file_loads_no_toml_parser(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    """pytest configured by its ``pytest.ini`` (or nothing), no waivers file, no
    ``pyproject.toml`` at head or at the base: the TOML parser is never imported; with one,
    it is read (its table applies)."""
    pytester.makeconftest(
        "import sys\n\n\ndef pytest_unconfigure(config):\n"
        "    loaded = 'tomllib' in sys.modules or 'tomli' in sys.modules\n"
        "    open('toml.txt', 'w').write(str(loaded))\n"
    )
    pytester.makeini("[pytest]\n")
    project.commit({"test_a.py": "def test_a():\n    assert 1\n"}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"test_a.py": "def test_a():\n    assert 1  # changed\n"}, "change")
    result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
    assert result.ret == 0
    assert (pytester.path / "toml.txt").read_text() == "False"
    project.commit({"pyproject.toml": '[tool.bounded-review]\nbase = "nowhere"\n'}, "base")
    result = pytester.runpytest_subprocess("--bounded-review")
    assert result.ret == 4  # its base (committed: nothing else names one) is read, and named
    result.stderr.fnmatch_lines(["*nowhere*"])


def test_a_cache_hit_keeps_the_tables_in_their_order(tmp_path: Path) -> None:
    """Risk reasons follow the triggers' order: a built run must not sort them."""
    state_folder(tmp_path, ".bounded-review")
    triggers = "".join(
        f'[tool.bounded-review.risk_rules.triggers.{name}]\npaths = ["src/**"]\n'
        for name in ("zeta", "alpha", "mid")
    )
    (tmp_path / "pyproject.toml").write_text(triggers)
    orders = [list(load_settings(tmp_path, tmp_path)[0].risk_rules.triggers) for _ in range(3)]
    assert orders == [["zeta", "alpha", "mid"]] * 3
    assert list((tmp_path / ".bounded-review" / "cache").iterdir())


def test_a_value_json_cannot_spell_is_always_validated(tmp_path: Path) -> None:
    """A TOML date and the string of the same text must not share a digest."""
    state_folder(tmp_path, ".bounded-review")
    (tmp_path / "pyproject.toml").write_text('[tool.bounded-review]\nbase = "1979-05-27"\n')
    for _ in range(2):
        assert load_settings(tmp_path, tmp_path)[0].base == "1979-05-27"
    (tmp_path / "pyproject.toml").write_text("[tool.bounded-review]\nbase = 1979-05-27\n")
    for _ in range(2):
        with pytest.raises(ConfigError, match="base: Input should be a valid string"):
            load_settings(tmp_path, tmp_path)


def test_the_digest_covers_every_module_validation_depends_on() -> None:
    from pytest_boundedreview.core.settings.config import _RULES
    from pytest_boundedreview.core.settings.validnote import stamp as rules_stamp

    stamp = rules_stamp(_RULES)
    for name in ("config.py", "tables.py", "ceilings.py", "plain.py", "version.py"):
        assert f" {name}:" in f" {stamp}", name


def test_the_run_that_makes_the_state_folder_notes_its_validation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    load_settings(tmp_path, tmp_path)  # validated before the folder is there
    assert not (tmp_path / ".bounded-review").exists()
    state_folder(tmp_path, "elsewhere")  # another folder: nothing noted there
    assert not (tmp_path / "elsewhere" / "cache").exists()
    state_folder(tmp_path, ".bounded-review")
    [marker] = (tmp_path / ".bounded-review" / "cache").iterdir()
    assert marker.name.startswith("config-valid-")
    assert load_in_a_new_process(tmp_path)["pydantic"] is False


@pytest.mark.parametrize(
    "table",
    [
        {"base": "main"},
        {"base": "main", "target": "pr", "mode": "review-only", "state_dir": ".bounded-review"},
        {"base": "main", "base_timeout": 5, "reruns": 2},  # an integer for a float: 5.0
        {"lanes": [{"name": "a", "lens": "security", "command": ["rev"], "timeout": 30}]},
    ],
)
def test_built_settings_equal_validated_ones(table: dict[str, object]) -> None:
    """Settings built from noted-valid data are the validated ones, field by field and in
    type, whether the data holds only text (taken as it is) or numbers and tables."""
    from pytest_boundedreview.models.plain import build, validate_data

    validated = validate_data(Settings, table)
    built = build(Settings, table)
    assert built == validated
    for name in table:
        assert type(getattr(built, name)) is type(getattr(validated, name)), name
