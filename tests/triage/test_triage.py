"""Triage rule by rule, on a real snapshot: validation, location, quotes, demotion,
reproduction outcomes, reconciliation, merging and fingerprints."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.change import git
from pytest_boundedreview.change.trees.treefiles import TreeFiles
from pytest_boundedreview.models.finding import Reproduce
from pytest_boundedreview.models.lane import Reconciliation
from pytest_boundedreview.triage.reproduce import Reproduced, key
from pytest_boundedreview.triage.steps import Answer, Raised, triage
from pytest_boundedreview.triage.triaged import Triaged

APP = "".join(f"line_{n} = {n}\n" for n in range(1, 21))
SCOPE = {"app.py", "inside"}


@pytest.fixture
def files(repo: GitRepo) -> TreeFiles:
    repo.write("lib.py", "def helper():\n    return 1\n")
    repo.write("app.py", APP)
    repo.write("data.bin", b"\x00\x01\x02\n")
    repo.write("pkg/mod.py", "x = 1\n")
    os.symlink("../outside.py", repo.path / "escape")
    os.symlink("app.py", repo.path / "inside")
    os.symlink("pkg", repo.path / "pkglink")
    os.symlink("../outside", repo.path / "outdir")
    repo.write("paged.py", "a = 1\n\x0c\ntarget = 3\nsep = '\u2028'\nlast = 5\n")
    os.symlink("loop_b", repo.path / "loop_a")
    os.symlink("loop_a", repo.path / "loop_b")
    repo.commit(message="snapshot")
    return TreeFiles(git.open_repo(repo.path), repo.tree())


def finding(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "path": "app.py",
        "line": 3,
        "severity": "blocking",
        "category": "correctness",
        "failure_mode": "wrong value",
        "evidence": "line 3 assigns 3",
        "remediation": "assign 4",
    }
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not ...}


def run(
    files: TreeFiles, *raws: Any, lane: str = "a", scope: set[str] = SCOPE, **kwargs: Any
) -> Triaged:
    return triage([Raised(lane, "verdict", raw) for raw in raws], files, scope, **kwargs)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/etc/passwd", "absolute"),
        ("../outside.py", "leaves the repository"),
        ("pkg/../../x.py", "leaves the repository"),
        ("C:\\Windows\\x.py", "Windows drive"),
        ("c:x.py", "Windows drive"),
        ("\\\\server\\share\\x.py", "absolute"),
        ("//server/share/x.py", "absolute"),
        ("app\x00.py", "NUL byte"),
        (".git/config", "inside `.git/`"),
        ("pkg/.GIT/hooks/pre-commit", "inside `.git/`"),
        ("a" * 4097, "longer than 4096"),
        ("", "path is empty"),
        (5, "must be a string"),
        (None, "must be a string"),
        (["app.py"], "must be a string"),
        ("escape", "symlink leading outside"),
        ("loop_a", "symlink leading outside"),
        ("outdir/x.py", "symlink leading outside"),
        ("nope.py", "no such file"),
        ("pkg", "no such file"),
        ("data.bin", "not a text file"),
    ],
)
def test_bad_paths_are_rejected(files: TreeFiles, path: object, reason: str) -> None:
    out = run(files, finding(path=path))
    (rejected,) = out.rejected
    assert reason in rejected.reason
    assert not out.blocking
    assert not out.advisory


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"line": 0}, "line must be a positive integer (got 0)"),
        ({"line": -4}, "line must be a positive integer (got -4)"),
        ({"line": 1.5}, "line must be a positive integer, not float"),
        ({"line": "3"}, "line must be a positive integer, not str"),
        ({"line": True}, "line must be a positive integer, not bool"),
        ({"line": 10**30}, "line is out of range"),
        ({"line": 21}, "line 21 is outside the file (20 lines)"),
        ({"end_line": 99}, "line 99 is outside the file"),
        ({"end_line": 2}, "end_line 2 is before line 3"),
        ({"end_line": 0}, "end_line must be a positive integer"),
        ({"path": ...}, "missing location"),
        ({"line": ...}, "missing location"),
        ({"failure_mode": ...}, "missing failure_mode"),
        ({"evidence": ""}, "missing evidence"),
        ({"remediation": ...}, "missing remediation"),
        ({"severity": "fatal"}, "severity: invalid value"),
        ({"confidence": 2}, "confidence"),
        ({"surprise": 1}, "surprise: unknown key"),
        ({"reproduce": {"pytest": "t.py::t", "command": ["x"]}}, "exactly one"),
        ({"reproduce": {"pytest": "/tmp/evil/test_x.py::t"}}, "test path is absolute"),
        ({"reproduce": {"pytest": "../evil/test_x.py::t"}}, "test path leaves the repository"),
        ({"failure_mode": "  "}, "missing failure_mode"),
        ({"evidence": "\n"}, "missing evidence"),
        ({"remediation": "\t"}, "missing remediation"),
        ({"confidence": 10**5000}, "too large to show"),
    ],
)
def test_bad_fields_are_rejected_with_the_reason(
    files: TreeFiles, fields: dict[str, Any], reason: str
) -> None:
    out = run(files, finding(**fields))
    (rejected,) = out.rejected
    assert reason in rejected.reason, rejected.reason
    assert rejected.lanes == ["a"]


def test_a_finding_that_is_not_an_object_is_rejected(files: TreeFiles) -> None:
    out = run(files, ["app.py", 3], "text")
    assert [r.reason for r in out.rejected] == [
        "a finding must be a JSON object, not list",
        "a finding must be a JSON object, not str",
    ]


def test_a_symlink_inside_the_snapshot_is_followed(files: TreeFiles) -> None:
    out = run(files, finding(path="inside", quote="line_3 = 3"))
    (kept,) = out.blocking
    assert (kept.path, kept.verification) == ("inside", "quoted")


def test_a_symlinked_folder_inside_the_snapshot_is_followed(files: TreeFiles) -> None:
    (kept,) = run(files, finding(path="pkglink/mod.py", line=1), scope={"pkglink/mod.py"}).blocking
    assert kept.path == "pkglink/mod.py"


def test_lines_are_counted_as_git_counts_them(files: TreeFiles) -> None:
    out = run(files, finding(path="paged.py", line=3, quote="target = 3"), scope={"paged.py"})
    (kept,) = out.blocking
    assert (kept.line, kept.note) == (3, None)
    last = run(files, finding(path="paged.py", line=5, quote="last = 5"), scope={"paged.py"})
    assert last.blocking[0].line == 5


def test_paths_are_normalised(files: TreeFiles) -> None:
    (kept,) = run(files, finding(path="./app.py")).blocking
    assert kept.path == "app.py"


@pytest.mark.parametrize(
    ("fields", "severity", "note"),
    [
        ({"category": "style"}, "advisory", "category 'style' is advisory-only: demoted"),
        ({"category": "editorial"}, "advisory", "category 'editorial' is advisory-only: demoted"),
        ({"path": "lib.py", "line": 1}, "advisory", "out-of-scope"),
        ({"category": "security"}, "blocking", None),
        ({"severity": "advisory"}, "advisory", None),
    ],
)
def test_demotion(files: TreeFiles, fields: dict[str, Any], severity: str, note: str) -> None:
    out = run(files, finding(**fields))
    (kept,) = out.blocking + out.advisory
    assert (kept.severity, kept.note) == (severity, note)
    assert (len(out.blocking), len(out.advisory)) == (
        severity == "blocking",
        severity != "blocking",
    )


def test_quotes(files: TreeFiles) -> None:
    exact = finding(quote="line_3  =   3")  # whitespace folded
    off_by_two = finding(line=5, quote="line_3 = 3", category="security", failure_mode="a")
    invented = finding(line=9, quote="password = 'hunter2'", failure_mode="b")
    far = finding(line=12, quote="line_3 = 3", failure_mode="c")
    out = run(files, exact, off_by_two, invented, far)
    assert [r.reason for r in out.rejected] == ["quote not found at location"] * 2
    by_mode = {f.failure_mode: f for f in out.blocking}
    assert by_mode["wrong value"].verification == "quoted"
    assert by_mode["wrong value"].note is None
    moved = by_mode["a"]
    assert (moved.line, moved.verification) == (3, "quoted")
    assert moved.note == "quote found at line 3, not at line 5 as cited"


def test_a_multi_line_quote_and_range(files: TreeFiles) -> None:
    out = run(files, finding(line=4, end_line=5, quote="line_4 = 4\nline_5 = 5"))
    (kept,) = out.blocking
    assert (kept.line, kept.end_line, kept.verification) == (4, 5, "quoted")


def test_two_lanes_with_different_wording_at_overlapping_lines_merge(files: TreeFiles) -> None:
    one = Raised("a", "verdict", finding(line=3, end_line=5, failure_mode="Off-by-one in loop"))
    two = Raised("b", "verdict", finding(line=5, evidence="longer evidence for the same thing"))
    three = Raised(
        "c", "verdict", finding(line=4, category="regression", failure_mode="off by one in loop.")
    )
    elsewhere = Raised("d", "verdict", finding(line=12))
    out = triage([one, two, three, elsewhere], files, SCOPE)
    merged, separate = out.blocking
    assert merged.lanes == ["a", "b", "c"]
    assert merged.evidence == "longer evidence for the same thing"  # the strongest evidence
    assert (separate.line, separate.lanes) == (12, ["d"])
    assert out.kept_raw == 4


def test_the_strongest_verification_is_kept_and_a_failed_quote_never_merges(
    files: TreeFiles,
) -> None:
    plain = Raised("a", "verdict", finding())
    quoted = Raised("b", "verdict", finding(quote="line_3 = 3"))
    lying = Raised("c", "verdict", finding(quote="not in the file"))
    out = triage([plain, lying, quoted], files, SCOPE)
    (kept,) = out.blocking
    assert (kept.verification, kept.lanes) == ("quoted", ["a", "b"])
    (rejected,) = out.rejected
    assert (rejected.lanes, rejected.reason) == (["c"], "quote not found at location")


def test_merging_never_hides_a_blocker(files: TreeFiles) -> None:
    quoted_style = Raised("a", "verdict", finding(category="style", quote="line_3 = 3"))
    blocker = Raised("b", "verdict", finding(evidence="e"))
    out = triage([quoted_style, blocker], files, SCOPE)
    (kept,) = out.blocking
    assert (kept.category, kept.lanes, kept.verification) == ("correctness", ["a", "b"], "quoted")
    assert out.advisory == []


def test_fingerprints_follow_text_not_line_numbers_or_wording(repo: GitRepo) -> None:
    repo.commit({"app.py": APP}, "first")
    handle = git.open_repo(repo.path)
    before = run(TreeFiles(handle, repo.tree()), finding(line=3)).blocking[0]
    repo.commit({"app.py": "# header\n# more\n" + APP}, "lines moved")
    moved = finding(line=5, failure_mode="other words", evidence="other evidence")
    after = run(TreeFiles(handle, repo.tree()), moved).blocking[0]
    assert before.fingerprint == after.fingerprint
    other = run(TreeFiles(handle, repo.tree()), finding(line=6)).blocking[0]
    assert other.fingerprint != before.fingerprint


class Reproductions:
    """Stands in for the runner (tested end to end elsewhere) to pin the mapping of outcomes."""

    def __init__(self, outcomes: Mapping[str, Reproduced]) -> None:
        self.outcomes = outcomes
        self.asked: list[list[str]] = []

    def __call__(self, specs: Sequence[Reproduce]) -> dict[str, Reproduced]:
        self.asked.append([key(s) for s in specs])
        return {key(s): self.outcomes[s.pytest or ""] for s in specs}


def test_reproduction_outcomes(files: TreeFiles) -> None:
    runner = Reproductions(
        {
            "t::head_only": Reproduced("reproduced", "fails at head, passes at base"),
            "t::passes": Reproduced("did-not-reproduce", "the test passes at head"),
            "t::both": Reproduced("pre-existing", "the test fails at base too"),
            "t::broken": Reproduced("not-run", "timed out"),
        }
    )
    raws = [
        finding(line=1, reproduce={"pytest": "t::head_only"}, failure_mode="a"),
        finding(line=5, reproduce={"pytest": "t::passes"}, failure_mode="b"),
        finding(line=9, reproduce={"pytest": "t::both"}, failure_mode="c"),
        finding(line=13, reproduce={"pytest": "t::broken"}, failure_mode="d"),
        finding(line=17, reproduce={"pytest": "t::head_only"}, failure_mode="e"),
    ]
    out = run(files, *raws, reproduce=runner)
    assert len(runner.asked) == 1
    by_mode = {f.failure_mode: f for f in out.blocking + out.advisory}
    assert (by_mode["a"].severity, by_mode["a"].verification) == ("blocking", "reproduced")
    assert (by_mode["c"].severity, by_mode["c"].verification) == ("advisory", "reproduced")
    assert "pre-existing" in (by_mode["c"].note or "")
    assert (by_mode["d"].severity, by_mode["d"].verification) == ("blocking", "evidence")
    assert by_mode["d"].note == "reproduction timed out"
    (rejected,) = out.rejected
    assert rejected.reason == "did not reproduce: the test passes at head"
    assert rejected.failure_mode == "b"


@pytest.mark.parametrize(
    ("require", "severity", "note"),
    [(False, "blocking", None), (True, "advisory", "require_reproduction")],
)
def test_require_reproduction(files: TreeFiles, require: bool, severity: str, note: str) -> None:
    out = run(files, finding(quote="line_3 = 3"), require_reproduction=require)
    (kept,) = out.blocking + out.advisory
    assert kept.severity == severity
    assert (note or "") in (kept.note or "")
    runner = Reproductions({"t::x": Reproduced("reproduced", "fails at head only")})
    proven = run(
        files, finding(reproduce={"pytest": "t::x"}), reproduce=runner, require_reproduction=require
    )
    assert proven.blocking[0].verification == "reproduced"


def test_scout_reconciliation(files: TreeFiles) -> None:
    scouted = [
        Raised("scout", "scout", finding(line=1, failure_mode="a")),
        Raised("scout", "scout", finding(line=7, failure_mode="b")),
        Raised("scout", "scout", finding(line=13, failure_mode="c")),
    ]
    fps = [f.fingerprint for f in triage(scouted, files, SCOPE).blocking]
    handed = {fp: f"app.py:{line} (correctness)" for fp, line in zip(fps, (1, 7, 13), strict=True)}
    answer = Answer(
        "judge",
        handed,
        [
            Reconciliation(fingerprint=fps[0], decision="accepted"),
            Reconciliation(fingerprint=fps[1], decision="dismissed", reason="guarded above"),
        ],
    )
    out = triage(scouted, files, SCOPE, answers=[answer])
    by_mode = {f.failure_mode: f for f in out.blocking + out.advisory}
    assert (by_mode["a"].severity, by_mode["a"].note) == ("blocking", "accepted by judge")
    assert (by_mode["b"].severity, by_mode["b"].note) == (
        "advisory",
        "dismissed by judge: guarded above",
    )
    assert out.problems == [
        "lane 'judge' did not reconcile 1 scout finding(s): app.py:13 (correctness)"
    ]
    assert triage(scouted, files, SCOPE).problems == []  # no verdict lane: nothing ignored
