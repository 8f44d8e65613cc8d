"""The scanner reads every spelling of an option as pytest's own parser does: a table of
spellings, each read by pytest (its argparse parser, and its plugin manager for ``-p``) and by
the scanner, which must agree."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
from _pytest.config import get_config

from pytest_boundedreview.core.pytestconfig.argv import BUILTIN, Table, table_of
from pytest_boundedreview.core.pytestconfig.outcomes import OUTCOME_OPTIONS
from pytest_boundedreview.core.pytestconfig.selecting import RECONFIGURING, SELECTING, scan

WANTED = tuple(dict.fromkeys((*SELECTING, *RECONFIGURING, *OUTCOME_OPTIONS)))

SPELLINGS = [
    "-W ignore",
    "-Wignore",
    "-W=ignore",
    "--pythonwarnings ignore",
    "--pythonwarnings=ignore",
    "-qW ignore::DeprecationWarning",
    "-vWignore",
    "-vvW ignore",
    "-qsW=ignore",
    "-rA -W ignore",
    "-rAW error",
    "-rW",
    "-o filterwarnings=ignore",
    "-ofilterwarnings=ignore",
    "-o=filterwarnings=ignore",
    "-qo filterwarnings=ignore",
    "-vo=python_files=test_other.py",
    "--override-ini=xfail_strict=false",
    "--override-ini xfail_strict=false",
    "-k foo",
    "-kfoo",
    "-k=foo",
    "-qk foo",
    "-vvm slow",
    "-m=slow",
    "-xm slow -k bar",
    "--deselect=a.py::t",
    "--deselect a.py::t",
    "--ignore=x --ignore y",
    "--ignore-glob=*.py",
    "-c other.ini",
    "-qc=other.ini",
    "--config-file=x.ini",
    "--rootdir=tests",
    "--confcutdir tests",
    "--max-warnings=3",
    "-x -- -W ignore",
    "--tb short -W ignore",
    "-p no:warnings",
    "-pno:warnings",
    "-qpno:warnings",
    "-vp no:skipping",
    "-x -p no:cacheprovider -pno:randomly",
]
REFUSED = ["--pythonw=ignore", "--override=filterwarnings=ignore", "--deselec=a.py", "-k -W"]


@pytest.fixture(scope="module")
def parser() -> Any:
    return get_config()._parser


def _pytest_reads(parser: Any, tokens: list[str]) -> dict[str, list[str]]:
    """What pytest takes from ``tokens``, by option dest (``-p``: its plugin manager's)."""
    namespace = parser.parse_known_args(tokens, namespace=argparse.Namespace())
    defaults = parser.parse_known_args([], namespace=argparse.Namespace())
    found: dict[str, list[str]] = {}
    for option in WANTED:
        if option == "-p":
            continue
        dest = parser._opt2dest[option]
        value, default = getattr(namespace, dest, None), getattr(defaults, dest, None)
        if value != default:
            found[dest] = [str(v) for v in value] if isinstance(value, list) else [str(value)]
    plugins: list[str] = []
    manager = get_config().pluginmanager
    manager.consider_pluginarg = plugins.append  # type: ignore[method-assign]
    manager.consider_preparse(tokens)
    if plugins:
        found["-p"] = plugins
    return found


def _scanner_reads(parser: Any, tokens: list[str], table: Table) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for given in scan(tokens, "command line", WANTED, table):
        dest = "-p" if given.option == "-p" else parser._opt2dest[given.option]
        found.setdefault(dest, []).append(given.value)
    # a last-one-wins option: pytest keeps the last value
    for dest in ("keyword", "markexpr", "inifilename", "rootdir", "confcutdir", "maxwarnings"):
        if dest in found:
            found[dest] = found[dest][-1:]
    return found


@pytest.mark.slow
@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("tables", ["session", "builtin"])
def test_the_scanner_reads_as_pytest_does(parser: Any, spelling: str, tables: str) -> None:
    tokens = spelling.split()
    table = table_of(get_config()) if tables == "session" else BUILTIN
    expected = _pytest_reads(parser, tokens)
    assert _scanner_reads(parser, tokens, table) == expected


def test_builtin_short_options_are_pytests(parser: Any) -> None:
    """The table used without a session holds pytest's own short options, as it has them."""
    table = table_of(get_config())
    short = {o: (n == 0) for o, n in table.items() if len(o) == 2}
    assert short == {o: (n == 0) for o, n in BUILTIN.items()}


@pytest.mark.parametrize("spelling", REFUSED)
def test_pytest_refuses_what_the_scanner_need_not_read(parser: Any, spelling: str) -> None:
    """pytest takes no abbreviation of a long option, and no option as a value: such a
    session does not run."""
    with pytest.raises(pytest.UsageError):
        parser.parse(spelling.split())


def test_an_argument_file_is_read(
    parser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "args.txt").write_text("-qW\nignore\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert _pytest_reads(parser, ["@args.txt"]) == {"pythonwarnings": ["ignore"]}
    assert _scanner_reads(parser, ["@args.txt"], BUILTIN) == {"pythonwarnings": ["ignore"]}
