"""Coverage-guided fuzzing of the parsers that read untrusted input, with atheris, by hand.

    pip install atheris            # needs a clang toolchain on some platforms
    python fuzz/atheris_harness.py lane-result -atheris_runs=1000000
    python fuzz/atheris_harness.py sarif fuzz/corpus/sarif        # keep a corpus folder

Targets: ``lane-result`` (the lane answer reader), ``config`` (the config loader, from a TOML
file), ``gnu`` and ``sarif`` (the check output parsers), ``scope`` (git's file list and patch).
Each may return or raise its documented error; anything else is a crash atheris reports with
the input that caused it. The bounded, CI-run counterpart is tests/adversarial/test_adv_fuzz.py.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import atheris

with atheris.instrument_imports():
    from pytest_boundedreview.change.scope import parse_scope
    from pytest_boundedreview.checks.parse import CheckOutputError, parse_gnu, parse_sarif
    from pytest_boundedreview.core.errors import ConfigError, DiffParseError
    from pytest_boundedreview.core.settings.config import load_settings
    from pytest_boundedreview.lanes.result import read_result

ROOT = Path("/repo")
FOLDER = Path(tempfile.mkdtemp(prefix="br-fuzz-"))


def lane_result(data: bytes) -> None:
    attempt = read_result(data)
    assert (attempt.result is None) == (attempt.failure is not None)


def config(data: bytes) -> None:
    (FOLDER / "pyproject.toml").write_bytes(b"[tool.bounded-review]\n" + data)
    with contextlib.suppress(ConfigError):
        load_settings(FOLDER, FOLDER)


def gnu(data: bytes) -> None:
    parse_gnu(data.decode("utf-8", "replace"), ROOT)


def sarif(data: bytes) -> None:
    with contextlib.suppress(CheckOutputError):
        parse_sarif(data, ROOT)


def scope(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    raw, _, patch = text.partition("\n--\n")
    with contextlib.suppress(DiffParseError):
        parse_scope(raw, patch)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "lane-result": lane_result,
    "config": config,
    "gnu": gnu,
    "sarif": sarif,
    "scope": scope,
}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(TARGETS)}}} [atheris/libFuzzer options]")
    target = TARGETS[sys.argv.pop(1)]
    atheris.Setup(sys.argv, target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
