"""The deterministic checks of a plan: its required sections are there, every ``path:line``
it cites exists in the repository, and it does not claim commands already ran (a plan carries
no evidence of that)."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Sequence

from ..change.trees.treefiles import TreeFiles, split_lines
from ..core.fingerprint import finding_fingerprint
from ..core.settings.tables import PlanConfig
from ..models.finding import ReportFinding
from .sections import Section, code_lines, named, sections

_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_CITATION = re.compile(
    r"(?<![\w/.@:\\-])((?:[\w.-]+/)*[\w-][\w.-]*\.([A-Za-z0-9]{1,10})):(\d{1,9})(?:-(\d{1,9}))?"
    r"(?!\w|\.\w)"
)
# A name without a folder is taken for a file only with one of these extensions (or when the
# repository has it): `db.example.com:5432`, `127.0.0.1:8000` and `python3.11:3` are not files.
_FILE_EXTENSIONS = frozenset(
    [
        "py",
        "pyi",
        "md",
        "rst",
        "txt",
        "toml",
        "yaml",
        "yml",
        "json",
        "cfg",
        "ini",
        "js",
        "jsx",
        "ts",
        "tsx",
        "go",
        "rs",
        "java",
        "kt",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "cs",
        "rb",
        "php",
        "sh",
        "bash",
        "sql",
        "html",
        "css",
        "scss",
        "vue",
        "swift",
        "lock",
    ]
)
_SPAN = re.compile(r"(`+)([^`\n]+?)\1")
_RAN_BEFORE = re.compile(
    r"\b(?:ran|executed|(?:have|has|had|was|were|been) (?:run|executed)|verified (?:with|by)"
    r"|confirmed (?:with|by)|tested with)\s*(?:it\s+)?$",
    re.IGNORECASE,
)
_RAN_AFTER = re.compile(
    r"^\s*(?:passed|succeeded|was green|was clean|(?:was|were|has been|have been) run"
    r"|exited 0|returned 0|reported no)\b",
    re.IGNORECASE,
)
# A clause with one of these words states a condition or an intention, not a fact.
_NOT_A_FACT = re.compile(
    r"\b(?:will|would|should|shall|must|can|could|may|might|to|when|whenever|until|once|if"
    r"|after|before|unless|ensure|ensures|verify|check|confirm|that|so)\b",
    re.IGNORECASE,
)
_PROMPT = re.compile(r"^\s*\$ \S")


def first_irreversible(text: str, patterns: Sequence[str]) -> str | None:
    """The first text an irreversible-action pattern matches in ``text`` (case folded)."""
    for pattern in patterns:
        match = re.search(pattern, text, re.IGNORECASE)
        if match:
            return match.group(0)
    return None


def _finding(
    path: str,
    line: int,
    category: str,
    failure_mode: str,
    evidence: str,
    remediation: str,
    quote: str | None,
    key: str,
) -> ReportFinding:
    return ReportFinding(
        path=path,
        line=line,
        severity="blocking",
        category=category,
        failure_mode=failure_mode,
        evidence=evidence,
        quote=quote,
        remediation=remediation,
        fingerprint=finding_fingerprint(path, category, key),
        verification="deterministic",
        note="plan check",
    )


def _missing_sections(
    path: str, lines: Sequence[str], found: Sequence[Section], config: PlanConfig
) -> Iterator[ReportFinding]:
    required = [
        ("objective", config.objective, "requirement", "what the plan is for"),
        ("steps", config.steps, "requirement", "what will be done, in order"),
        ("verification", config.verification, "unverifiable-gate", "how success is checked"),
    ]
    text = "\n".join(lines)
    irreversible = first_irreversible(text, config.irreversible)
    if irreversible:
        required.append(("rollback", config.rollback, "missing-rollback", "how to undo it"))
    for role, names, category, what in required:
        section = named(found, names)
        if section is not None and section.body:
            continue
        why = f" (the plan mentions {irreversible!r})" if role == "rollback" else ""
        if section is None:
            failure = f"the plan has no {role} section{why}"
            evidence = f"no heading of {path} is one of: {', '.join(names)}"
        else:
            failure = f"the plan's {role} section is empty{why}"
            evidence = f"the section {section.title!r} at line {section.line} has no text"
        yield _finding(
            path,
            section.line if section else 1,
            category,
            failure,
            evidence,
            f"add a section titled {names[0]!r} saying {what}",
            None,
            f"missing-section:{role}",
        )


def _resolve(cited: str, plan: str, files: TreeFiles) -> list[str] | None:
    """The lines of the file ``cited`` names, from the repository's top or the plan's folder."""
    candidates = [cited.removeprefix("./")]
    folder = posixpath.dirname(plan)
    if folder:
        candidates.append(posixpath.normpath(posixpath.join(folder, cited)))
    for candidate in candidates:
        if candidate.startswith("../") or candidate == plan:
            continue
        where = files.resolve(candidate)
        content = files.lines(where) if where else None
        if content is not None:
            return content
    return None


def _citations(path: str, lines: Sequence[str], files: TreeFiles) -> Iterator[ReportFinding]:
    for number, line in enumerate(lines, 1):
        for match in _CITATION.finditer(_URL.sub(" ", line)):
            cited, extension = match.group(1), match.group(2)
            first = int(match.group(3))
            last = int(match.group(4) or first)
            content = _resolve(cited, path, files)
            if content is None and "/" not in cited and extension.lower() not in _FILE_EXTENSIONS:
                continue  # a host, an address or a version, not a file
            if content is not None and 1 <= first <= last <= len(content):
                continue
            if content is None:
                why = f"{cited} is not a file of the repository at HEAD"
            else:
                why = f"{cited} has {len(content)} line(s); the plan cites line(s) {first}-{last}"
            yield _finding(
                path,
                number,
                "plan-contradiction",
                f"the plan cites {match.group(0)}, which does not exist",
                why,
                "cite an existing file and line, or say the file is to be created",
                match.group(0),
                f"citation:{match.group(0)}",
            )


def _transcript(lines: Sequence[str], number: int, code: set[int]) -> bool:
    """Whether code line ``number`` is a ``$ command`` followed by its output."""
    following = lines[number] if number < len(lines) else ""
    return (
        bool(_PROMPT.match(lines[number - 1]))
        and number + 1 in code
        and bool(following.strip())
        and not _PROMPT.match(following)
        and not following.lstrip().startswith(("```", "~~~"))
    )


def _claimed_runs(path: str, lines: Sequence[str], code: set[int]) -> Iterator[ReportFinding]:
    for number, line in enumerate(lines, 1):
        claims: list[str] = []
        if number in code:
            if _transcript(lines, number, code):
                claims.append(f"`{line.strip()}`")
        else:
            for span in _SPAN.finditer(line):
                before, after = line[: span.start()], line[span.end() :]
                clause = re.split(r"[.;:!?]\s", before)[-1]
                if _NOT_A_FACT.search(clause):
                    continue
                if _RAN_BEFORE.search(before) or _RAN_AFTER.match(after):
                    claims.append(span.group(0))
        for claim in claims:
            yield _finding(
                path,
                number,
                "unverifiable-gate",
                f"the plan says {claim} already ran; a plan carries no evidence of it",
                f"line {number} quotes a command as run (with its outcome or a shell transcript)",
                "make running it a step of the plan (with what must be true after), or attach "
                "its output to the change that carries the plan out",
                line.strip(),
                f"claimed-run:{claim}",
            )


def check_plan(
    path: str, lines: Sequence[str], files: TreeFiles, config: PlanConfig
) -> list[ReportFinding]:
    """Every deterministic finding on the plan at ``path`` (its text as ``lines``), citations
    resolved in ``files`` (the repository's tree)."""
    visible = split_lines(_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), "\n".join(lines)))
    found = sections(visible)
    code = code_lines(lines)
    return [
        *_missing_sections(path, lines, found, config),
        *_citations(path, lines, files),
        *_claimed_runs(path, lines, code),
    ]
