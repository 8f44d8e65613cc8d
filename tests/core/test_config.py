from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_boundedreview.core.ceilings import effective_budget
from pytest_boundedreview.core.configfile import MAX_CONFIG_BYTES, find_config
from pytest_boundedreview.core.errors import ConfigError
from pytest_boundedreview.core.settings.config import Settings, load_settings


def write(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pyproject.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_a_config(tmp_path: Path) -> None:
    settings, path = load_settings(tmp_path, tmp_path)
    assert path is None
    assert settings == Settings()
    assert (settings.target, settings.mode, settings.risk) == ("auto", "review-only", "auto")
    assert (settings.reruns, settings.max_base_reruns, settings.max_retries) == (1, 50, 3)


def test_found_from_the_rootdir_upward_and_not_above_the_stop(tmp_path: Path) -> None:
    top = write(tmp_path / "repo", '[tool.bounded-review]\nbase = "main"\n')
    write(tmp_path / "repo" / "sub", "[project]\nname = 'x'\n")  # no table: keep looking
    settings, path = load_settings(tmp_path / "repo" / "sub", tmp_path / "repo")
    assert path == top
    assert settings.base == "main"
    assert find_config(tmp_path / "repo" / "sub", tmp_path / "repo" / "sub") == (None, {})


def test_the_base_setup_command_is_an_argv_list(tmp_path: Path) -> None:
    assert Settings().base_setup is None
    write(tmp_path, '[tool.bounded-review]\nbase_setup = ["python", "setup.py", "build_ext"]\n')
    settings, _ = load_settings(tmp_path, tmp_path)
    assert settings.base_setup == ["python", "setup.py", "build_ext"]


def test_options_override_the_config(tmp_path: Path) -> None:
    write(tmp_path, '[tool.bounded-review]\nbase = "main"\ntarget = "pr"\n')
    settings, _ = load_settings(tmp_path, tmp_path, {"base": "dev", "target": None})
    assert (settings.base, settings.target) == ("dev", "pr")


def test_checks_and_lanes_are_parsed(tmp_path: Path) -> None:
    write(
        tmp_path,
        """
[tool.bounded-review]
max_repair_loops = 1
[[tool.bounded-review.checks]]
name = "ruff"
command = ["ruff", "check", "--output-format=sarif", "."]
format = "sarif"
required = false
[[tool.bounded-review.lanes]]
name = "claude"
lens = "correctness"
command = ["review-bot", "--json"]
env = ["ANTHROPIC_API_KEY"]
timeout = 120
""",
    )
    settings, _ = load_settings(tmp_path, tmp_path)
    assert settings.checks[0].format == "sarif"
    assert settings.checks[0].required is False
    assert settings.checks[0].timeout == 600
    assert settings.lanes[0].env == ["ANTHROPIC_API_KEY"]
    assert settings.lanes[0].timeout == 120.0
    budget = effective_budget("strict", "review-and-fix", settings.lowered_ceilings)
    assert budget.max_repair_loops == 1
    assert (
        effective_budget("strict", "review-only", settings.lowered_ceilings).max_repair_loops == 0
    )


BAD = [
    ("unknown key", "colour = 1", ["colour: unknown key", "known keys: allow_partial, base,"]),
    ("misspelt key", "max_lane = 1", ["did you mean 'max_lanes'?"]),
    ("wrong type", 'reruns = "two"', ["reruns:", "valid integer", "got 'two'"]),
    ("bool for int", "max_base_reruns = true", ["max_base_reruns:", "got True"]),
    ("list item type", "instructions = [1]", ["instructions[0]:", "got 1"]),
    (
        "invalid enum",
        'target = "branch"',
        [
            "target: invalid value; allowed values: 'auto', 'pr', 'local-diff' or 'staged'",
            "got 'branch'",
        ],
    ),
    (
        "ceiling raised",
        "max_lanes = 5",
        ["max_lanes:", "5 would raise the ceiling of 3", "may be lowered, never raised"],
    ),
    ("retries raised", "max_retries = 4", ["max_retries:", "never raised"]),
    ("below range", "reruns = -1", ["reruns:", "greater than or equal to 0", "got -1"]),
    (
        "nested unknown key",
        '[[tool.bounded-review.checks]]\nname = "a"\ncommand = ["x"]\nfromat = "gnu"',
        ["checks[0].fromat: unknown key", "did you mean 'format'?"],
    ),
    (
        "nested enum",
        '[[tool.bounded-review.checks]]\nname = "a"\ncommand = ["x"]\nformat = "json"',
        ["checks[0].format: invalid value; allowed values: 'exit-code', 'sarif' or 'gnu'"],
    ),
    (
        "missing required key",
        '[[tool.bounded-review.checks]]\nname = "a"',
        ["checks[0].command: required key is missing"],
    ),
    (
        "empty argv",
        '[[tool.bounded-review.checks]]\nname = "a"\ncommand = []',
        ["checks[0].command:", "at least 1 item"],
    ),
    (
        "duplicate names",
        '[[tool.bounded-review.checks]]\nname = "a"\ncommand = ["x"]\n'
        '[[tool.bounded-review.checks]]\nname = "a"\ncommand = ["y"]',
        ["checks:", "repeated: a"],
    ),
    (
        "command lane without command",
        '[[tool.bounded-review.lanes]]\nname = "l"\nlens = "security"',
        ["lanes[0]:", "has kind 'command' but no `command`"],
    ),
    (
        "bad env name",
        '[[tool.bounded-review.lanes]]\nname = "l"\nlens = "security"\ncommand = ["x"]\n'
        'env = ["NOT OK"]',
        ["lanes[0].env[0]:", "got 'NOT OK'"],
    ),
    (
        "set-up command as one string",
        'base_setup = "python setup.py build_ext --inplace"',
        [
            "base_setup:",
            "valid list",
            "got 'python setup.py build_ext --inplace'",
            'write it as a list (an argv list runs without a shell): ["python", "setup.py", '
            '"build_ext", "--inplace"]',
        ],
    ),
    (
        "empty set-up command",
        "base_setup = []",
        ["base_setup:", "at least 1 item", "leave the key out to run no set-up command"],
    ),
    ("empty set-up argument", 'base_setup = ["make", ""]', ["base_setup[1]:", "got ''"]),
    (
        "timeout zero",
        '[[tool.bounded-review.checks]]\nname = "a"\ncommand = ["x"]\ntimeout = 0',
        ["checks[0].timeout:", "greater than 0"],
    ),
]


@pytest.mark.parametrize(("label", "body", "expected"), BAD, ids=[b[0] for b in BAD])
def test_bad_values_name_file_key_value_and_allowed_values(
    tmp_path: Path, label: str, body: str, expected: list[str]
) -> None:
    path = write(tmp_path, "[tool.bounded-review]\n" + body + "\n")
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, tmp_path)
    message = str(info.value)
    assert message.startswith(f"{path}: [tool.bounded-review] is invalid")
    for part in expected:
        assert part in message


def test_toml_syntax_error_shows_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, '[tool.bounded-review]\nbase = "main\n')
    with pytest.raises(ConfigError, match=re.escape(str(path)) + r": TOML syntax error: .*line 2"):
        load_settings(tmp_path, tmp_path)


def test_table_that_is_not_a_table(tmp_path: Path) -> None:
    write(tmp_path, '[tool]\nbounded-review = "on"\n')
    with pytest.raises(ConfigError, match=r"\[tool.bounded-review\] must be a table"):
        load_settings(tmp_path, tmp_path)


def test_huge_and_undecodable_files(tmp_path: Path) -> None:
    path = write(tmp_path, "# " + "x" * MAX_CONFIG_BYTES + "\n")
    with pytest.raises(ConfigError, match="over the limit"):
        load_settings(tmp_path, tmp_path)
    path.write_bytes(b"[tool.bounded-review]\nbase = '\xff'\n")
    with pytest.raises(ConfigError, match="not valid UTF-8 at byte"):
        load_settings(tmp_path, tmp_path)


def test_a_bad_option_value_names_the_option(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"--bounded-review-target: target: invalid value"):
        load_settings(tmp_path, tmp_path, {"target": "everything"})


def test_an_error_about_a_table_names_its_key_and_the_fix_not_the_table(tmp_path: Path) -> None:
    lane = '[[tool.bounded-review.lanes]]\nname = "l"\nlens = "security"\ncommand = ["x"]\n'
    for body, expected in (
        ('[tool.bounded-review.loop]\nmodel_review_lane = "arch"\n', 'role = "verdict"'),
        (
            lane + 'role = "verdict"\n[tool.bounded-review.loop]\nmodel_review_lane = "arch"\n',
            "name one of them",
        ),
        (
            '[[tool.bounded-review.lanes]]\nname = "l"\nlens = "security"\n',
            "lanes[0]: lane 'l' has kind",
        ),
    ):
        write(tmp_path, "[tool.bounded-review]\n" + body)
        with pytest.raises(ConfigError) as info:
            load_settings(tmp_path, tmp_path)
        message = str(info.value)
        assert expected in message
        assert "got {" not in message, message
        assert "(document)" not in message, message
