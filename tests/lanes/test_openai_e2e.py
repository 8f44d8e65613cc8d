"""`openai` lanes in a real `pytest --bounded-review` session against a scripted server that
answers as llama.cpp's server, vLLM and OpenAI do: a failure no retry can change is tried
once and shown with the server's words and the fix; the `json_object` fallback is taken only
for a refusal of the response format; answers are bounded; the attempt has one deadline."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gitrepo import GitRepo
from modelendpoint import (
    Reply,
    Script,
    answer,
    llama_context,
    openai_context,
    openai_schema_refused,
    refusal,
    serve,
    vllm_context,
)

pytestmark = pytest.mark.slow  # whole review sessions

LISTED = ["GET /v1/models"]
ASKED = ["GET /v1/models", "POST /v1/chat/completions"]


def configure(
    project: GitRepo, url: str, lane: str = "", top: str = "max_retries = 3\n", timeout: int = 30
) -> None:
    config = (
        f"[tool.bounded-review]\n{top}"
        "[[tool.bounded-review.lanes]]\n"
        f'name = "local"\nlens = "correctness"\nkind = "openai"\nbase_url = "{url}"\n'
        f'model = "reviewer"\ntimeout = {timeout}\n{lane}'
    )
    project.commit(
        {
            "pyproject.toml": config,
            "app.py": "x = 1\n",
            "test_app.py": "def test_app():\n    pass\n",
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": "x = 2\n"}, "change")


def tree_state(project: GitRepo) -> tuple[str, bytes, str]:
    index = (project.path / ".git" / "index").read_bytes()
    return project.git("status", "--porcelain"), index, project.git("stash", "list")


def review(
    pytester: pytest.Pytester, project: GitRepo, *options: str
) -> tuple[pytest.RunResult, dict[str, Any]]:
    before = tree_state(project)
    result = pytester.runpytest_subprocess(
        "--bounded-review", "--bounded-review-base=main", *options
    )
    assert tree_state(project) == before
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    return result, report


FINAL = [
    pytest.param(
        Script(models=[{"id": "other", "object": "model"}]),
        LISTED,
        ["model not available: reviewer (listed: other)"],
        id="model-not-listed",
    ),
    pytest.param(
        Script(listing=refusal(401, "Invalid API key provided")),
        LISTED,
        ["answered HTTP 401: Invalid API key provided", "`api_key_env`"],
        id="401",
    ),
    pytest.param(
        Script(completions=[refusal(403, "Project does not have access to model reviewer")]),
        ASKED,
        ["answered HTTP 403: Project does not have access", "`api_key_env`"],
        id="403",
    ),
    pytest.param(
        Script(completions=[llama_context()]),
        ASKED,
        [
            "answered HTTP 400: request (2116 tokens) exceeds the available context size "
            "(1024 tokens) (exceed_context_size_error)",
            "--ctx-size",
            "`max_output_tokens`",
        ],
        id="llama-context",
    ),
    pytest.param(
        Script(completions=[vllm_context()]),
        ASKED,
        ["This model's maximum context length is 1024 tokens", "--max-model-len"],
        id="vllm-context",
    ),
    pytest.param(
        Script(completions=[openai_context()]),
        ASKED,
        ["(context_length_exceeded)", "review a smaller change"],
        id="openai-context",
    ),
    pytest.param(
        Script(models=[{"id": "reviewer", "object": "model", "max_model_len": 64}], tokens=900),
        [*LISTED, "POST /tokenize"],
        [
            "not sent: the prompt is 900 tokens by the server's own count",
            "the model's context is 64 tokens (`max_model_len`",
        ],
        id="cannot-fit",
    ),
    pytest.param(
        Script(completions=[answer('{"schema": "bounded-review/lane-result/v1", "ver', "length")]),
        ASKED,
        ["the answer was cut after 60 tokens (finish_reason length)", "`max_output_tokens` is"],
        id="runaway",
    ),
]


@pytest.mark.parametrize(("script", "requests", "said"), FINAL)
def test_a_failure_no_retry_can_change_is_tried_once_with_the_servers_words(
    pytester: pytest.Pytester,
    project: GitRepo,
    script: Script,
    requests: list[str],
    said: list[str],
) -> None:
    with serve(script) as url:
        configure(project, url)
        result, report = review(pytester, project)
    assert script.paths() == requests  # one attempt, no fallback request
    (row,) = report["lanes"]
    assert (row["status"], row["attempts"]) == ("unverified", 1)
    for words in said:
        assert words in row["note"], row["note"]
    assert row["note"].endswith("not retried: no retry can change this failure")
    assert report["gate"]["review_clean"] == "indeterminate"
    assert result.ret == 1
    result.stdout.fnmatch_lines(["bounded-review: lane local finished: unverified (*"])


def test_a_servers_words_reach_the_terminal_escaped(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    script = Script(completions=[refusal(400, "bad \x1b[31mred\x1b[0m request\u202e")])
    with serve(script) as url:
        configure(project, url)
        result, report = review(pytester, project)
    assert len(script.posts()) == 1  # a 400 about anything but the format: the same each time
    assert "\x1b" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*answered HTTP 400: bad \\x1b[31mred\\x1b[0m request\\u202e*"])
    assert report["lanes"][0]["attempts"] == 1


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_bounded_answer_keeps_the_gate_clean(
    pytester: pytest.Pytester, project: GitRepo, workers: list[str]
) -> None:
    """The harmless control: a llama.cpp-style list with a context that fits, one request
    each, the answer capped and its sampling fixed."""
    script = Script(models=[{"id": "reviewer", "object": "model", "meta": {"n_ctx_train": 32768}}])
    with serve(script) as url:
        configure(project, url)
        result, report = review(pytester, project, *workers)
    assert script.paths() == ASKED
    (body,) = script.posts()
    assert (body["max_tokens"], body["temperature"]) == (4096, 0)
    assert "seed" not in body
    assert "max_completion_tokens" not in body
    assert report["lanes"][0]["status"] == "pass"
    assert report["gate"]["review_clean"] == "yes"
    assert result.ret == 0


@pytest.mark.parametrize("tokens", [40, None], ids=["counted-fits", "no-tokenizer"])
def test_a_prompt_longer_than_the_context_in_bytes_is_sent_unless_counted_over(
    pytester: pytest.Pytester, project: GitRepo, tokens: int | None
) -> None:
    """Bytes are no token count (a tokenizer packs a run of spaces into one token): a prompt
    is refused before it is sent only by the server's own count; without one, sent."""
    listed = [{"id": "reviewer", "object": "model", "max_model_len": 64}]
    script = Script(models=listed, tokens=tokens)
    with serve(script) as url:
        configure(project, url)
        _result, report = review(pytester, project)
    assert script.paths() == [*LISTED, "POST /tokenize", "POST /v1/chat/completions"]
    assert report["lanes"][0]["status"] == "pass"
    assert report["gate"]["review_clean"] == "yes"


def test_the_lanes_own_bounds_are_sent(pytester: pytest.Pytester, project: GitRepo) -> None:
    script = Script()
    lane = (
        'max_output_tokens = 512\noutput_tokens_key = "max_completion_tokens"\n'
        "temperature = 0.2\nseed = 7\n"
    )
    with serve(script) as url:
        configure(project, url, lane)
        _result, report = review(pytester, project)
    (body,) = script.posts()
    assert (body["max_completion_tokens"], body["temperature"], body["seed"]) == (512, 0.2, 7)
    assert "max_tokens" not in body
    assert report["gate"]["review_clean"] == "yes"


def test_a_refused_response_format_falls_back_once(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    """The control of the fallback: a refusal that names the response format is asked once
    more with json_object, and the review is clean."""
    script = Script(completions=[openai_schema_refused(), answer()])
    with serve(script) as url:
        configure(project, url)
        _result, report = review(pytester, project)
    assert [b["response_format"]["type"] for b in script.posts()] == ["json_schema", "json_object"]
    (row,) = report["lanes"]
    assert (row["status"], row["attempts"]) == ("pass", 1)
    assert "refused json_schema" in row["note"]
    assert "'response_format' of type" in row["note"]
    assert report["gate"]["review_clean"] == "yes"


def test_a_passing_failure_is_still_retried(pytester: pytest.Pytester, project: GitRepo) -> None:
    """A server that is busy once (HTTP 503) is asked again, and the review is clean."""
    script = Script(completions=[refusal(503, "loading model"), answer()])
    with serve(script) as url:
        configure(project, url)
        _, report = review(pytester, project)
    (row,) = report["lanes"]
    assert (row["status"], row["attempts"]) == ("pass", 2)
    assert report["gate"]["review_clean"] == "yes"


def test_one_deadline_holds_over_the_list_the_request_and_the_fallback(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    """Each request alone is well within `timeout`; together they are not, so the attempt
    ends at its deadline instead of each request getting the whole `timeout` again."""
    refused = openai_schema_refused()
    script = Script(
        listing=Reply(200, {"data": [{"id": "reviewer"}]}, delay=1.5),
        completions=[
            Reply(refused.status, refused.body, delay=1.0),
            Reply(200, answer().body, delay=1.5),
        ],
    )
    with serve(script) as url:
        configure(project, url, timeout=3, top="max_retries = 0\n")
        _, report = review(pytester, project)
    assert len(script.posts()) == 2  # the fallback was sent, and cut by the deadline
    (row,) = report["lanes"]
    assert (row["status"], row["attempts"]) == ("unverified", 1)
    assert "the attempt's deadline (3s) passed" in row["note"]
