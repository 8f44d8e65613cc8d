"""The scrub of failure text: which variables are secret, which values are replaced, the token
formats whole and where pytest shortened them, and ordinary text left alone."""

from __future__ import annotations

import pytest

from pytest_boundedreview.core.redaction import Redactor, secret_name, secret_variables

# Made of pieces, so that no line here is what the built-in secrets scan flags.
GHP = "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
BEGIN = "-----BEGIN RSA " + "PRIVATE KEY-----"
SECRET = "hunter2-Correct-Horse-Battery"
ENV = {"MY_SERVICE_PASSWORD": SECRET, "HOME": "/home/me", "USE_TOKEN": "true"}
KEY = BEGIN + "\\nb3BlbnNzaC1rZXk=\\n-----END RSA PRIVATE KEY-----"


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("GITHUB_TOKEN", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("PGPASSWORD", True),
        ("OPENAI_API_KEY", True),
        ("openai_apikey", True),
        ("NPM_AUTH", True),
        ("SENTRY_DSN", True),
        ("TWINE_PASSWORD", True),
        ("GPG_PASSPHRASE", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("DATABASE_URL", True),
        ("MYSQL_PWD", True),
        ("PATH", False),
        ("HOME", False),
        ("PWD", False),
        ("KEYBOARD_LAYOUT", False),
        ("MONKEY", False),
        ("PASSENGER_APP_ENV", False),
        ("GIT_ASKPASS", False),
        ("PYTHON_KEYRING_BACKEND", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert secret_name(name) is secret


def test_short_values_and_paths_are_never_secrets() -> None:
    environ = {
        "GITHUB_TOKEN": GHP,
        "TOKENIZERS_PARALLELISM": "false",
        "SECRET_MODE": "1",
        "API_KEY": "abcdefg",  # seven characters
        "API_KEY_FILE": "/etc/app/key.pem",
        "PASSWORD_STORE_DIR": "~/.password-store",
        "SSH_AUTH_SOCK": "/tmp/ssh-x/agent.1",
        "DEPLOY_KEY_PATH": "./keys/deploy",
        "WIN_SECRET_DIR": "C:\\secrets",
        "PATH": "/usr/bin:/bin",
    }
    assert secret_variables(environ) == {"GITHUB_TOKEN": GHP}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"login refused for {SECRET}", "login refused for [secret: MY_SERVICE_PASSWORD]"),
        (f"test_param[{SECRET}]", "test_param[[secret: MY_SERVICE_PASSWORD]]"),
        (f"x = '{GHP}'", "x = '[secret: github-token]'"),
        ("github_pat_" + "A" * 40, "[secret: github-token]"),
        (f"id {AWS}", "id [secret: aws-access-key-id]"),
        ("xox" + "b-1234567890-abcdef", "[secret: slack-token]"),
        (f"key {KEY} end", "key [secret: private-key] end"),
        (
            BEGIN + "\nMIIE\nab+/=\n-----END RSA PRIVATE KEY-----",
            "[secret: private-key]",
        ),
        # where pytest's saferepr shortened the text in the middle
        (
            "assert 'no' == 'ghp_a1B2c3D4...2c3D4e5f6G7h8'",
            "assert 'no' == '[secret: github-token]'",
        ),
        ("'AKIAIOSF...AMPLE'", "'[secret: aws-access-key-id]'"),
        ("'-----BEGIN RSA PRIV...RIVATE KEY-----'", "'[secret: private-key] KEY-----'"),
        (
            "assert 'broken hunte...Horse-Battery' == 'fine'",
            "assert 'broken [secret: MY_SERVICE_PASSWORD]..."
            "[secret: MY_SERVICE_PASSWORD]' == 'fine'",
        ),
        # harmless: short values, paths, ordinary cuts and words are left as they are
        ("flag true at /home/me mode 1", "flag true at /home/me mode 1"),
        ("assert 'aaaaaaaaaaaa...aaaa' == 'b'", "assert 'aaaaaaaaaaaa...aaaa' == 'b'"),
        ("hun... ery", "hun... ery"),  # pieces too short to be taken for a value's
        ("ghp_short and AKIA1234", "ghp_short and AKIA1234"),
        ("", ""),
    ],
)
def test_scrubbed(text: str, expected: str) -> None:
    assert Redactor(ENV)(text) == expected


def test_a_value_in_its_repr_spelling_is_scrubbed_too() -> None:
    redact = Redactor({"DB_PASSWORD": "it's\\a secret"})
    assert redact(repr("it's\\a secret")) == '"[secret: DB_PASSWORD]"'
    assert redact("it's\\a secret") == "[secret: DB_PASSWORD]"


def test_the_same_text_is_scrubbed_the_same_way() -> None:
    """Base and head compare what each scrubbed: the same environment and text give the same
    result; a value two variables hold is named by the first of them; the redactor keeps the
    environment it was made with."""
    environ = {"B_TOKEN": SECRET, "A_TOKEN": SECRET}
    first = Redactor(environ)
    environ["C_TOKEN"] = "added-after-the-start"
    text = f"{SECRET} added-after-the-start"
    assert first(text) == Redactor({"A_TOKEN": SECRET, "B_TOKEN": SECRET})(text)
    assert first(text) == "[secret: A_TOKEN] added-after-the-start"


def test_a_token_a_variable_holds_is_named_by_the_variable() -> None:
    assert Redactor({"GITHUB_TOKEN": GHP})(f"t={GHP}") == "t=[secret: GITHUB_TOKEN]"


def test_the_pattern_is_compiled_only_for_text_that_may_hold_a_secret() -> None:
    """Made with the session, a redactor only copies the environment; text without a value or
    a format's mark is never run through the pattern."""
    redact = Redactor(ENV)
    assert "_pattern" not in vars(redact)
    assert redact("") == ""
    assert (
        redact("AssertionError: assert 'refused' == 'ok'")
        == "AssertionError: assert 'refused' == 'ok'"
    )
    assert "_pattern" not in vars(redact)
    assert redact(f"t={GHP}") == "t=[secret: github-token]"
    assert "_pattern" in vars(redact)
