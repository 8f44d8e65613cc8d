"""Automatic risk tiers from real diffs: every trigger family, economy, and configuration."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.change import git
from pytest_boundedreview.change.freeze import freeze
from pytest_boundedreview.change.scope import Scope
from pytest_boundedreview.core.ceilings import TIER_CEILINGS, effective_budget
from pytest_boundedreview.core.errors import ConfigError
from pytest_boundedreview.core.settings.config import load_settings
from pytest_boundedreview.risk import (
    BUILTIN_TRIGGERS,
    DOCS_PATHS,
    _Glob,
    _literal_prefix,
    _Pattern,
    assess,
    glob_regex,
    rules_from,
)

GLOBS = sorted({g for t in BUILTIN_TRIGGERS.values() for g in t.paths} | set(DOCS_PATHS))

BASE = {"app/core.py": "def run():\n    return 1\n\n\ndef helper():\n    return 2\n"}


def scope_of(repo: GitRepo, files: dict[str, str]) -> Scope:
    for name, text in files.items():
        repo.write(name, text)
    return freeze(git.open_repo(repo.path), "local-diff").scope


@pytest.fixture
def base(repo: GitRepo) -> GitRepo:
    repo.commit(BASE, "base")
    return repo


@pytest.mark.slow
@pytest.mark.parametrize(
    ("files", "family"),
    [
        ({"app/auth/views.py": "x = 1\n"}, "authentication"),
        ({"app/core.py": BASE["app/core.py"] + "password = input()\n"}, "authentication"),
        ({"app/permissions.py": "x = 1\n"}, "authorization"),
        ({"app/core.py": BASE["app/core.py"] + "if user.is_admin:\n    pass\n"}, "authorization"),
        ({"app/core.py": BASE["app/core.py"] + "import hashlib\n"}, "cryptography"),
        ({"app/billing/api.py": "x = 1\n"}, "payments"),
        ({"app/core.py": BASE["app/core.py"] + "stripe.Charge.create()\n"}, "payments"),
        ({"db/migrations/0002_add.py": "x = 1\n"}, "migrations"),
        ({"app/core.py": BASE["app/core.py"] + "q = 'DELETE FROM users'\n"}, "data-deletion"),
        ({"app/core.py": BASE["app/core.py"] + "shutil.rmtree(path)\n"}, "data-deletion"),
        ({"app/core.py": BASE["app/core.py"] + "import threading\n"}, "concurrency"),
        ({".github/workflows/ci.yml": "on: push\n"}, "release"),
        ({"Dockerfile": "FROM python\n"}, "release"),
        ({"pkg/__init__.py": '__version__ = "2.0"\n'}, "release"),
        ({"app/core.py": "def run():\n    return 1\n"}, "public-api"),
        ({"app/core.py": BASE["app/core.py"] + "return hash_password(pw)\n"}, "authentication"),
        ({"app/core.py": BASE["app/core.py"] + "PASSWORD_HASHERS = []\n"}, "authentication"),
        ({"app/core.py": BASE["app/core.py"] + "q = 'delete from users'\n"}, "data-deletion"),
        ({"mylib/authz/roles.py": "x = 1\n"}, "authorization"),
        (
            {"app/core.py": BASE["app/core.py"].replace("def run():", "def run(strict=False):")},
            "public-api",
        ),
    ],
)
def test_each_trigger_family_makes_it_strict(
    base: GitRepo, files: dict[str, str], family: str
) -> None:
    tier, reasons = assess(scope_of(base, files))
    assert tier == "strict"
    assert any(r.rule.startswith(f"{family}:") for r in reasons), reasons
    assert all(r.path in files for r in reasons)


def test_renaming_a_public_function_is_public_api(base: GitRepo) -> None:
    renamed = BASE["app/core.py"].replace("def helper", "def assist")
    _, reasons = assess(scope_of(base, {"app/core.py": renamed}))
    assert [r.rule for r in reasons] == ["public-api: removes or renames `helper`"]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"README.md": "a\nb\nc\nd\ne\nf\n", "docs/guide.rst": "x\n"},
            "economy: documentation only",
        ),
        (
            {"app/core.py": BASE["app/core.py"].replace("return 2", "return 3")},
            "economy: a small change (2 changed line(s), at most 3)",
        ),
    ],
)
def test_docs_only_or_trivial_is_economy(
    base: GitRepo, files: dict[str, str], expected: str
) -> None:
    tier, reasons = assess(scope_of(base, files))
    assert tier == "economy"
    assert [r.rule for r in reasons] == [expected]


def test_an_ordinary_change_is_standard(base: GitRepo) -> None:
    body = "".join(f"value_{i} = {i}\n" for i in range(10))
    assert assess(scope_of(base, {"app/values.py": body})) == ("standard", [])


def test_triggers_are_extendable_replaceable_and_can_be_turned_off(base: GitRepo) -> None:
    triggers, public_api = rules_from(
        {
            "payments": (["shop/**"], [], False, True),
            "concurrency": ([], [r"\bspawn\("], True, True),
            "release": ([], [], False, False),
            "team-infra": (["infra/**"], [], False, True),
            "public-api": ([], [], False, False),
        }
    )
    assert "**/billing*" in triggers["payments"].paths  # extended, not replaced
    assert triggers["concurrency"].added == (r"\bspawn\(",)
    assert "release" not in triggers
    assert public_api is False
    scope = scope_of(
        base,
        {
            "shop/cart.py": "x = 1\n",
            "infra/main.tf": "y\n",
            "Dockerfile": "z\n",
            "app/core.py": "def run():\n    import threading\n",
        },
    )
    tier, reasons = assess(scope, triggers, public_api=public_api)
    rules = sorted(r.rule.split(":")[0] for r in reasons)
    assert tier == "strict"
    assert rules == ["payments", "team-infra"]  # no release, no threading, no public-api


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("**/auth/**", "auth/x.py", True),
        ("**/auth/**", "a/b/auth/c/d.py", True),
        ("**/auth/**", "author.py", False),
        ("Dockerfile", "deploy/Dockerfile", True),
        ("*.md", "docs/a.md", True),
        ("docs/**", "docs/a/b.rst", True),
        ("docs/**", "src/docs.py", False),
        (".github/workflows/**", ".github/workflows/ci.yml", True),
    ],
)
def test_glob_regex(glob: str, path: str, matches: bool) -> None:
    assert bool(glob_regex(glob).match(path)) is matches


_SEGMENTS = [
    "auth", "a", "docs", "login.py", "x_password_y", "crypto", "billing", "README.md", "k8s",
    ".github", "workflows", "ci.yml", "migrations", "0001.sql", "Dockerfile.dev", "key.pem",
    "CHANGELOG", "notes.rst",
]  # fmt: skip


def test_a_glob_skips_compiling_only_for_paths_it_cannot_match() -> None:
    """A glob is compiled only for a path holding each of its literal parts: never a path its
    regex would match goes unchecked."""
    paths = [*_SEGMENTS, *(f"{a}/{b}" for a in _SEGMENTS for b in _SEGMENTS)]
    matched = 0
    for glob in GLOBS:
        regex = re.compile(_Glob(glob).pattern)
        for path in paths:
            assert _Glob(glob).match(path) is bool(regex.match(path)), (glob, path)
            matched += bool(regex.match(path))
    assert matched > len(GLOBS)  # the corpus meets most globs


_LINES = [
    "x = 1  # a comment",
    "user.set_password(PASSWORD)",
    "if request.user.IS_ADMIN:",
    "import hashlib, hmac",
    "key = RSA.generate(2048)",
    "charges = stripe.Charge.list()",
    "op.add_column('t', c)",
    "cursor.execute('DELETE FROM users')",
    "shutil.rmtree(path)",
    "lock = threading.Lock()",
    "__version__ = '1.2'",
    "passwordless = True",
    "def authorised_user(): ...",
    "raise Forbidden()",
    "my_roles = []",
    "pa\u017f\u017fword = 'x'",  # long s: folds onto "s" case-insensitively
    "is_adm\u0131n = True",  # dotless i: folds onto "i"
    "\u212aEY = 1",  # Kelvin sign
    "drop table accounts",
    "migrations.RunPython(f)",
    "amount_cents = 100",
]


def test_a_pattern_skips_compiling_only_for_lines_it_cannot_match() -> None:
    """An added-line pattern is searched (and compiled) only for a line holding one of its
    words, or a line that is not ASCII: never a line its regex would match goes unchecked."""
    patterns = [p for t in BUILTIN_TRIGGERS.values() for p in t.added]
    matched = 0
    for pattern in patterns:
        regex = re.compile(pattern)
        for line in _LINES:
            assert _Pattern(pattern).search(line) is bool(regex.search(line)), (pattern, line)
            matched += bool(regex.search(line))
    assert matched >= 18  # the corpus meets every trigger family
    quiet = [_Pattern(p) for p in patterns]
    assert not any(p.search("x = 1  # a comment") for p in quiet)
    assert sum(p._compiled is not None for p in quiet) <= 3  # only the unhinted ones


@pytest.mark.parametrize(
    ("word", "prefix"),
    [
        ("passwords?", "password"),
        (r"oauth\w*", "oauth"),
        ("has_perm+", "has_perm"),
        ("ab{2}", "a"),
        ("{2}", ""),  # a quantifier on nothing
        ("a?", ""),
        (r"authori[sz]e\w*", "authori"),
        ("drop (?:table|column)", "drop "),
        ("ab|cd", ""),  # alternatives: no one prefix
        (r"a\|b", "a"),  # an escaped bar is a character
        ("[|]x", ""),
        ("JWT", "jwt"),
    ],
)
def test_a_word_s_literal_prefix_starts_every_match(word: str, prefix: str) -> None:
    assert _literal_prefix(word) == prefix


def test_tier_ceilings_are_the_contract_table() -> None:
    assert {t: tuple(c) for t, c in TIER_CEILINGS.items()} == {
        "economy": (1, 1, 1),
        "standard": (2, 2, 2),
        "strict": (3, 2, 3),
    }
    assert effective_budget("strict", "review-only").max_repair_loops == 0
    assert set(BUILTIN_TRIGGERS) >= {
        "authentication",
        "authorization",
        "cryptography",
        "payments",
        "migrations",
        "data-deletion",
        "concurrency",
        "release",
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '[tool.bounded-review.risk_rules.triggers.payments]\nadded = ["("]',
            "risk_rules.triggers.payments.added: '(' is not a regular expression",
        ),
        (
            '[tool.bounded-review.risk_rules.triggers.payments]\npath = ["x"]',
            "risk_rules.triggers.payments.path: unknown key; did you mean 'paths'?",
        ),
        ("[tool.bounded-review.risk_rules]\ntrivial_lines = -1", "risk_rules.trivial_lines:"),
        ("[tool.bounded-review]\nmax_repair_loops = 4", "would raise the ceiling of 3"),
    ],
)
def test_risk_config_errors(tmp_path: Path, body: str, message: str) -> None:
    (tmp_path / "pyproject.toml").write_text(body + "\n")
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, tmp_path)
    assert message in str(info.value)


def test_removed_lines_count_too(repo: GitRepo) -> None:
    guarded = (
        "def view(user):\n    if not user.is_admin:\n        raise Forbidden()\n    return 1\n"
    )
    repo.commit({"app/views.py": guarded}, "guarded view")
    tier, reasons = assess(scope_of(repo, {"app/views.py": "def view(user):\n    return 1\n"}))
    assert tier == "strict"
    assert any(r.rule.startswith("authorization: removed line 2") for r in reasons)


def test_a_removed_public_method_is_public_api(repo: GitRepo) -> None:
    cls = "class Conn:\n    def open(self):\n        pass\n\n    def close(self):\n        pass\n"
    repo.commit({"app/conn.py": cls}, "conn")
    shorter = cls.split("\n\n    def close")[0] + "\n"
    _, reasons = assess(scope_of(repo, {"app/conn.py": shorter}))
    assert [r.rule for r in reasons] == ["public-api: removes or renames `close`"]


def test_requirements_files_are_not_documentation(base: GitRepo) -> None:
    tier, _ = assess(scope_of(base, {"requirements.txt": "".join(f"pkg{i}\n" for i in range(9))}))
    assert tier == "standard"
