"""The automatic risk tier of a change and the reasons for it (CONTRACT §6); the budget of
each tier is in ``core/ceilings.py``.

``auto`` is ``strict`` when a trigger fires — a changed path matches one of its globs or an
added line matches one of its patterns — ``economy`` for docs-only or small changes, else
``standard``. Every trigger is listed in the reasons with its path and rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from .change.scope import FileChange, Scope
from .core.ceilings import Tier
from .models.record import record


@record(frozen=True)
class Trigger:
    """Paths (globs; ``**`` crosses folders) and added-line patterns that make a change strict."""

    paths: tuple[str, ...] = ()
    added: tuple[str, ...] = ()


# Word boundaries that treat "_" as a separator, so hash_password and PASSWORD_HASHERS match.
_W0, _W1 = r"(?<![A-Za-z0-9])", r"(?![A-Za-z0-9])"


# A pattern's literal hints: one of them is in every ASCII line it matches, lowercased
# (see _Pattern). Only the built-in patterns have them; a configured one is always searched.
_HINTS: dict[str, tuple[str, ...]] = {}


def _words(*words: str) -> str:
    """Any of ``words`` (regexes) as a whole word, case-insensitively."""
    pattern = rf"(?i){_W0}(?:{'|'.join(words)}){_W1}"
    hints = tuple(_literal_prefix(word) for word in words)
    if all(hints):
        _HINTS[pattern] = hints
    return pattern


def _alternatives(word: str) -> bool:
    """Whether the regex ``word`` has a ``|`` outside its groups and character classes."""
    depth, escaped, in_class = 0, False, False
    for char in word:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            return True
    return False


def _literal_prefix(word: str) -> str:
    """The literal text every match of the regex ``word`` starts with ("" if none)."""
    if _alternatives(word):  # no one text starts them all
        return ""
    end = 0
    while end < len(word) and word[end] not in "\\()[]{}?*+|.^$":
        end += 1
    if end < len(word) and word[end] in "?*{":  # the last literal character is optional
        end = max(end - 1, 0)
    return word[:end].lower()


BUILTIN_TRIGGERS: dict[str, Trigger] = {
    "authentication": Trigger(
        (
            "**/auth/**",
            "**/*auth*.py",
            "**/login*",
            "**/login*/**",
            "**/*password*",
            "**/*password*/**",
        ),
        (
            _words(
                "passwords?",
                "passwd",
                "authenticate",
                "login_required",
                "jwt",
                r"oauth\w*",
                "set_cookie",
                "session_key",
                "credentials?",
            ),
        ),
    ),
    "authorization": Trigger(
        (
            "**/authz/**",
            "**/*authz*",
            "**/rbac/**",
            "**/rbac*",
            "**/permissions*",
            "**/permissions*/**",
            "**/*acl*",
            "**/polic*",
        ),
        (
            _words(
                "is_admin",
                "is_superuser",
                "is_staff",
                r"has_perm\w*",
                r"authori[sz]e\w*",
                "permissions?",
                "forbidden",
                "roles?",
            ),
        ),
    ),
    "cryptography": Trigger(
        ("**/crypto*", "**/crypto*/**", "**/*cipher*", "**/*.pem", "**/*.key"),
        (
            _words(
                "hashlib",
                "hmac",
                "cryptography",
                "crypto",
                "nacl",
                r"secrets\.token\w*",
                "aes",
                "rsa",
                "bcrypt",
                "scrypt",
                r"pbkdf2\w*",
                "hashers?",
            ),
        ),
    ),
    "payments": Trigger(
        (
            "**/payment*",
            "**/billing*",
            "**/checkout*",
            "**/invoice*",
            "**/payment*/**",
            "**/billing*/**",
            "**/checkout*/**",
            "**/invoice*/**",
        ),
        (
            _words(
                "stripe", "paypal", "braintree", "refunds?", "charges?", "currency", "amount_cents"
            ),
        ),
    ),
    "migrations": Trigger(
        ("**/migrations/**", "**/alembic/**", "**/*.sql"),
        (_words("alter table", "create table", r"op\.(?:add|drop|alter)_\w+", r"migrations\.\w+"),),
    ),
    "data-deletion": Trigger(
        (),
        (
            _words("delete from", "truncate", "drop (?:table|column|database)"),
            r"(?:shutil\.rmtree|os\.remove|os\.unlink|\.unlink\(|\.delete\(\)|drop_table)",
        ),
    ),
    "concurrency": Trigger(
        (),
        (
            r"\b(?:threading|multiprocessing|concurrent\.futures|asyncio\.(?:Lock|gather|"
            r"create_task|Semaphore)|fcntl\.flock|Lock\(\)|RLock\(\))",
        ),
    ),
    "release": Trigger(
        (
            ".github/workflows/**",
            ".gitlab-ci.yml",
            "Jenkinsfile",
            "**/Dockerfile*",
            "**/docker-compose*",
            "**/deploy/**",
            "**/k8s/**",
            "**/helm/**",
            "**/*.tf",
            ".pre-commit-hooks.yaml",
        ),
        (r"^\s*(?:__)?version(?:__)?\s*[:=]",),
    ),
}
DOCS_PATHS = (
    "**/*.md",
    "**/*.rst",
    "**/*.adoc",
    "docs/**",
    "LICENSE*",
    "AUTHORS*",
    "CHANGELOG*",
    "**/README*",
)
_PUBLIC_DEF = re.compile(r"^\s*(?:async\s+def|def|class)\s+([A-Za-z]\w*)")


@record(frozen=True)
class Reason:
    path: str | None
    rule: str


def glob_regex(glob: str) -> re.Pattern[str]:
    """A path glob as a regex: ``**`` matches across folders, ``*`` and ``?`` within one; a
    glob without ``/`` matches the file name in any folder."""
    return re.compile(_Glob(glob).pattern)


class _Glob:
    """A path glob, compiled only for a path that holds each of its literal parts: most of
    the rules' globs never meet such a path, and compiling them all took a few ms a run."""

    def __init__(self, glob: str) -> None:
        if "/" not in glob:
            glob = "**/" + glob
        out, literals, literal = [], [], ""
        i = 0
        while i < len(glob):
            wild = (
                "(?:.*/)?"
                if glob.startswith("**/", i)
                else ".*"
                if glob.startswith("**", i)
                else ""
            )
            if not wild and glob[i] not in "*?":
                literal += glob[i]
                out.append(re.escape(glob[i]))
                i += 1
                continue
            literals.append(literal)
            literal = ""
            if wild:
                out.append(wild)
                i += 3 if wild.startswith("(") else 2
            else:
                out.append("[^/]*" if glob[i] == "*" else "[^/]")
                i += 1
        self.literals = [part for part in [*literals, literal] if part]
        self.pattern = "".join(out) + r"\Z"
        self._compiled: re.Pattern[str] | None = None

    def match(self, path: str) -> bool:
        if not all(part in path for part in self.literals):
            return False
        if self._compiled is None:
            self._compiled = re.compile(self.pattern)
        return self._compiled.match(path) is not None


class _Pattern:
    """An added-line pattern, compiled only for a line that holds one of its literal hints:
    the built-in patterns are case-insensitive whole words, about 1 ms each to compile, and
    most changed lines hold none of their words. A line that is not ASCII is always searched
    (case-insensitive matching folds some other characters onto ASCII letters)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.hints = _HINTS.get(pattern, ())
        self._compiled: re.Pattern[str] | None = None

    def search(self, text: str) -> bool:
        if self.hints and text.isascii():
            lowered = text.lower()
            if not any(hint in lowered for hint in self.hints):
                return False
        if self._compiled is None:
            self._compiled = re.compile(self.pattern)
        return self._compiled.search(text) is not None


def _public_api(change: FileChange) -> Iterable[Reason]:
    """Public names a change removes or renames in a non-test Python module, and ``__all__``
    edits that drop names."""
    name = change.path.rsplit("/", 1)[-1]
    private = name.startswith(("test_", "_")) and name != "__init__.py"
    if not change.path.endswith(".py") or private or "/tests/" in f"/{change.path}":
        return []
    added = {
        m[1]: " ".join(t.split()) for t in change.added_text.values() if (m := _PUBLIC_DEF.match(t))
    }
    reasons = []
    for _, text in sorted(change.removed_text.items()):
        match = _PUBLIC_DEF.match(text)
        if match and match[1] not in added:
            reasons.append(Reason(change.path, f"public-api: removes or renames `{match[1]}`"))
        elif match and added[match[1]] != " ".join(text.split()):
            reasons.append(
                Reason(change.path, f"public-api: changes the signature of `{match[1]}`")
            )
        elif "__all__" in text:
            reasons.append(Reason(change.path, "public-api: edits `__all__`"))
    return reasons


def assess(
    scope: Scope,
    triggers: Mapping[str, Trigger] = BUILTIN_TRIGGERS,
    docs_paths: Sequence[str] = DOCS_PATHS,
    trivial_lines: int = 3,
    public_api: bool = True,
) -> tuple[Tier, list[Reason]]:
    """The automatic tier of a change, with every reason behind it."""
    compiled = {
        name: ([_Glob(g) for g in t.paths], [_Pattern(p) for p in t.added])
        for name, t in triggers.items()
    }
    reasons: list[Reason] = []
    for change in scope:
        for name, (globs, patterns) in compiled.items():
            paths = [change.path, *([change.old_path] if change.old_path else [])]
            glob = next((g for g in globs if any(g.match(p) for p in paths)), None)
            if glob is not None:
                reasons.append(Reason(change.path, f"{name}: path matches {glob.pattern}"))
                continue
            lines = [("added", *item) for item in sorted(change.added_text.items())]
            lines += [("removed", *item) for item in sorted(change.removed_text.items())]
            for side, line, text in lines:
                hit = next((p for p in patterns if p.search(text)), None)
                if hit is not None:
                    rule = f"{name}: {side} line {line} matches {hit.pattern}"
                    reasons.append(Reason(change.path, rule))
                    break
        if public_api:
            reasons.extend(_public_api(change))
    if reasons:
        return "strict", reasons
    docs = [_Glob(g) for g in docs_paths]
    if len(scope) and all(any(d.match(c.path) for d in docs) for c in scope):
        return "economy", [Reason(None, "economy: documentation only")]
    changed = sum(len(c.added) + len(c.removed) for c in scope)
    if len(scope) and changed <= trivial_lines and not any(c.binary or c.mode_only for c in scope):
        # The size of the change, never its consequence: a one-line regression is small, not trivial
        rule = f"economy: a small change ({changed} changed line(s), at most {trivial_lines})"
        return "economy", [Reason(None, rule)]
    return "standard", []


def rules_from(
    configured: Mapping[str, tuple[Sequence[str], Sequence[str], bool, bool]],
) -> tuple[dict[str, Trigger], bool]:
    """Built-in triggers with the configured ones applied: ``name -> (paths, added, replace,
    enabled)``; a new name adds a trigger. Returns the triggers and whether the public-API
    check stays on (``public-api`` can only be turned off)."""
    triggers = dict(BUILTIN_TRIGGERS)
    public_api = True
    for name, (paths, added, replace, enabled) in configured.items():
        if name == "public-api":
            public_api = enabled
            continue
        if not enabled:
            triggers.pop(name, None)
            continue
        base = Trigger() if replace else triggers.get(name, Trigger())
        triggers[name] = Trigger(base.paths + tuple(paths), base.added + tuple(added))
    return triggers, public_api
