"""The text an agent lane reads: how to review, the frozen packet, and the answer it owes.

The packet goes in whole, as JSON; nothing of it is ever put on a command line.
"""

from __future__ import annotations

INSTRUCTIONS = """\
You are a read-only code reviewer in a bounded review. The files of the reviewed snapshot are
in your working directory; do not change them. Review only through your lens (`lane.lens` in
the packet) and only the change: the files in `scope` and the lines the diff adds. Earlier code
is context, not the subject.

A finding is `blocking` only when you can show it: cite `path` and `line` inside the scope,
copy the exact text of that line into `quote`, and say how it fails (`failure_mode`) and what
shows it (`evidence`). Prefer a reproduction: a pytest node id or a command that fails at the
reviewed snapshot (`reproduce`). Speculation, style, naming and alternatives are `advisory`
or left out. Nothing found is a valid review: then say in `rationale` why nothing blocks.

When the packet holds `scout_findings`, answer each one by its fingerprint in
`reconciliation`: `accepted`, or `dismissed` with a reason. When it holds `open_findings`
and a `delta`, check whether the delta fixes them.
"""

CONTRACT = """\
Answer with exactly one JSON object and nothing else: `schema` is
"bounded-review/lane-result/v1"; `verdict` is "pass" or "revise" for a verdict lane and null
for a scout; `rationale` says briefly what you checked; each entry of `findings` follows
`finding_schema` from the packet; `reconciliation` answers the scout findings; `assurances`
is required when the target is a plan.
"""


def agent_prompt(packet: bytes, instructions: str = INSTRUCTIONS) -> bytes:
    """The whole prompt for one attempt of an agent lane."""
    return (
        f"{instructions}\n## The review packet\n\n```json\n{packet.decode('utf-8')}\n```\n\n"
        f"## Your answer\n\n{CONTRACT}"
    ).encode()
