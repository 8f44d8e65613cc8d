"""``bounded-review init`` in real repositories, for each combination of agents on PATH."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import warmstart
from fakeagents import install
from gitrepo import GitRepo
from modelendpoint import Reply, Script, serve

from pytest_boundedreview.cli.localserver import LOOPBACK, find_server
from pytest_boundedreview.core.settings.config import load_settings

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

EXISTING = (
    b'# my project\n[project]\nname = "demo"   # keep this comment\n\n[tool.ruff]\nline-length = 99'
)


def init(repo: GitRepo, path: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    if "PYTHONPATH" in os.environ:  # the package under test, where it is not installed
        env = {"PYTHONPATH": os.environ["PYTHONPATH"], **env}
    return warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", "init", *args],
        cwd=repo.path,
        env={"PATH": path, "HOME": str(repo.path.parent), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def agents_on_path(tmp_path: Path, names: tuple[str, ...]) -> str:
    folder = tmp_path / "bin"
    for name in names:
        install(folder, name)
    return f"{folder}:{Path(sys.executable).parent}:/usr/bin:/bin"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("names", "lanes"),
    [
        (("claude",), [("surgical", "claude", "verdict"), ("deep", "claude", "verdict")]),
        (("codex",), [("surgical", "codex", "verdict"), ("deep", "codex", "verdict")]),
        (("gemini",), [("surgical", "gemini", "verdict"), ("deep", "gemini", "verdict")]),
        (
            ("claude", "codex"),
            [
                ("surgical", "claude", "verdict"),
                ("deep", "codex", "verdict"),
                ("scout", "codex", "scout"),
            ],
        ),
        (
            ("codex", "gemini"),
            [
                ("surgical", "codex", "verdict"),
                ("deep", "gemini", "verdict"),
                ("scout", "gemini", "scout"),
            ],
        ),
        (
            ("claude", "codex", "gemini"),
            [
                ("surgical", "claude", "verdict"),
                ("deep", "codex", "verdict"),
                ("scout", "gemini", "scout"),
            ],
        ),
    ],
)
def test_a_table_for_each_combination_of_agents(
    repo: GitRepo, tmp_path: Path, names: tuple[str, ...], lanes: list[tuple[str, str, str]]
) -> None:
    path = agents_on_path(tmp_path, names)
    shown = init(repo, path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("--- /dev/null\n+++ b/pyproject.toml\n")
    assert not (repo.path / "pyproject.toml").exists()  # a proposal writes nothing
    written = init(repo, path, "--write")
    assert written.returncode == 0, written.stderr
    settings, _ = load_settings(repo.path, repo.path)  # the table is valid configuration
    assert [(lane.name, lane.kind, lane.role) for lane in settings.lanes] == lanes
    assert [lane.lens for lane in settings.lanes][:2] == ["correctness", "security"]


def test_write_keeps_every_other_byte(repo: GitRepo, tmp_path: Path) -> None:
    (repo.path / "pyproject.toml").write_bytes(EXISTING)
    (repo.path / "pyproject.toml").chmod(0o640)
    path = agents_on_path(tmp_path, ("claude", "codex"))
    shown = init(repo, path)
    assert "--- a/pyproject.toml\n+++ b/pyproject.toml\n" in shown.stdout
    assert "+[tool.bounded-review]\n" in shown.stdout
    assert (repo.path / "pyproject.toml").read_bytes() == EXISTING
    assert init(repo, path, "--write").returncode == 0
    after = (repo.path / "pyproject.toml").read_bytes()
    assert after.startswith(EXISTING + b"\n")  # the missing final newline added, nothing else
    added = after[len(EXISTING) :]
    assert tomllib.loads(added.decode())["tool"]["bounded-review"]["lanes"][0]["kind"] == "claude"
    assert tomllib.loads(after.decode())["tool"]["ruff"] == {"line-length": 99}
    assert (repo.path / "pyproject.toml").stat().st_mode & 0o777 == 0o640


def test_an_existing_table_is_never_replaced(repo: GitRepo, tmp_path: Path) -> None:
    original = EXISTING + b'\n[tool.bounded-review]\nrisk = "strict"\n'
    (repo.path / "pyproject.toml").write_bytes(original)
    out = init(repo, agents_on_path(tmp_path, ("claude",)), "--write")
    assert out.returncode == 4
    assert "already has [tool.bounded-review]: init never replaces it" in out.stderr
    assert (repo.path / "pyproject.toml").read_bytes() == original


def test_no_agent_proposes_nothing_and_names_the_key_it_saw(repo: GitRepo, tmp_path: Path) -> None:
    path = agents_on_path(tmp_path, ())
    out = init(repo, path, "--write", OPENAI_API_KEY="sk-test")
    assert out.returncode == 1
    assert "no coding agent on PATH (looked for claude, codex, gemini)" in out.stdout
    assert "OPENAI_API_KEY is set: an `openai` lane can use it" in out.stdout
    assert not (repo.path / "pyproject.toml").exists()


def test_a_broken_pyproject_is_a_config_error(repo: GitRepo, tmp_path: Path) -> None:
    (repo.path / "pyproject.toml").write_text("[project\n")
    out = init(repo, agents_on_path(tmp_path, ("codex",)), "--write")
    assert out.returncode == 4
    assert "pyproject.toml" in out.stderr
    assert (repo.path / "pyproject.toml").read_text() == "[project\n"


def test_a_table_that_would_not_parse_is_refused(repo: GitRepo, tmp_path: Path) -> None:
    original = b'tool = { ruff = { line-length = 99 } }\n[project]\nname = "x"\n'
    (repo.path / "pyproject.toml").write_bytes(original)
    out = init(repo, agents_on_path(tmp_path, ("claude",)), "--write")
    assert out.returncode == 4
    assert "adding [tool.bounded-review] would not parse" in out.stderr
    assert (repo.path / "pyproject.toml").read_bytes() == original


def test_crlf_lines_and_a_linked_pyproject_are_kept(repo: GitRepo, tmp_path: Path) -> None:
    shared = tmp_path / "shared.toml"
    shared.write_bytes(b'[project]\r\nname = "x"\r\n')
    (repo.path / "pyproject.toml").symlink_to(shared)
    assert init(repo, agents_on_path(tmp_path, ("codex",)), "--write").returncode == 0
    assert (repo.path / "pyproject.toml").is_symlink()
    after = shared.read_bytes()
    assert after.startswith(b'[project]\r\nname = "x"\r\n\r\n[tool.bounded-review]\r\n')
    assert b"\n" not in after.replace(b"\r\n", b"")


def listing(*models: str) -> list[dict[str, str]]:
    return [{"id": model, "object": "model"} for model in models]


@pytest.fixture
def stand_in() -> Iterator[tuple[Script, str]]:
    """A stand-in model server on 127.0.0.1: what ``/v1/models`` answers, and who asked."""
    script = Script(models=listing("local-coder", "local-small"))
    with serve(script) as url:
        yield script, url


def test_a_model_server_named_by_openai_base_url_gets_the_lanes(
    repo: GitRepo, tmp_path: Path, stand_in: tuple[Script, str]
) -> None:
    """No agent, a server the user's variable names: both lanes on it, its first listed model,
    marked as a local endpoint, the key variable named (and sent only there)."""
    state, url = stand_in
    path = agents_on_path(tmp_path, ())
    with repo.untouched():
        shown = init(repo, path, OPENAI_BASE_URL=url + "/", OPENAI_API_KEY="sk-local")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert f"+# Proposed by `bounded-review init` from the model server at {url}." in shown.stdout
    assert '+# A model server found by init (OPENAI_BASE_URL), listing "local-coder", ' in (
        shown.stdout
    )
    assert "+# a local endpoint; check that its model can review code" in shown.stdout
    assert state.auth == ["Bearer sk-local"]
    written = init(repo, path, "--write", OPENAI_BASE_URL=url, OPENAI_API_KEY="sk-local")
    assert written.returncode == 0, written.stderr
    settings, _ = load_settings(repo.path, repo.path)
    lanes = [(x.name, x.lens, x.kind, x.base_url, x.model, x.api_key_env) for x in settings.lanes]
    assert lanes == [
        ("surgical", "correctness", "openai", url, "local-coder", "OPENAI_API_KEY"),
        ("deep", "security", "openai", url, "local-coder", "OPENAI_API_KEY"),
    ]


def test_a_model_server_beside_an_agent_adds_its_lane(
    repo: GitRepo, tmp_path: Path, stand_in: tuple[Script, str]
) -> None:
    _, url = stand_in
    path = agents_on_path(tmp_path, ("claude",))
    assert init(repo, path, "--write", OPENAI_BASE_URL=url).returncode == 0
    settings, _ = load_settings(repo.path, repo.path)
    assert [(x.name, x.kind, x.api_key_env) for x in settings.lanes] == [
        ("surgical", "claude", None),
        ("deep", "claude", None),
        ("local", "openai", None),
    ]


@pytest.mark.parametrize(
    ("models", "status", "why"),
    [
        ([], 200, "/models lists no model"),
        (["m"], 401, "/models answered HTTP 401"),
    ],
)
def test_a_server_that_lists_no_model_is_passed_over_with_the_reason(
    repo: GitRepo,
    tmp_path: Path,
    stand_in: tuple[Script, str],
    models: list[str],
    status: int,
    why: str,
) -> None:
    state, url = stand_in
    state.models = listing(*models)
    state.listing = Reply(status, {"object": "list", "data": state.models})
    with repo.untouched():
        out = init(repo, agents_on_path(tmp_path, ()), "--write", OPENAI_BASE_URL=url)
    assert out.returncode == 1
    assert "bounded-review init: OPENAI_BASE_URL passed over: " in out.stdout
    assert why in out.stdout
    assert "nothing proposed; nothing written" in out.stdout
    assert not (repo.path / "pyproject.toml").exists()


def test_a_loopback_server_on_a_default_port_is_found_without_the_variable(
    stand_in: tuple[Script, str],
) -> None:
    """The default ports are asked on 127.0.0.1 only, without a key; the first that lists a
    model is the one proposed, named by the server whose port it is."""
    state, url = stand_in
    closed = f"http://127.0.0.1:{free_port()}/v1"
    found, passed_over = find_server(
        {"OPENAI_API_KEY": "sk-never-sent"}, ((closed, "nobody"), (url, "llama.cpp's server"))
    )
    assert passed_over is None
    assert found is not None
    listed = [model["id"] for model in state.models]
    assert (found.base_url, found.models, found.key_env) == (url, listed, None)
    assert found.where == "llama.cpp's server's default port"
    assert state.auth == [None]
    assert all(urlsplit(base).hostname == "127.0.0.1" for base, _ in LOOPBACK)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
