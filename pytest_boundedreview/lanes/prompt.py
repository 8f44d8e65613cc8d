"""The text a model lane reads: the frozen packet, the lens prompt, and the contract.

The lens prompts are Markdown files in ``lanes/prompts/``, one per standard lens and one for
scouts; a custom lens gets a generic one naming it. A lane's ``prompt_file`` (read from the
reviewed snapshot, not the live tree) replaces the lens prompt only: the packet and the
contract (the rules of evidence and the answer format) are always there. The contract says
where the reviewer stands: an agent works in its copy of the snapshot with its tools
(``workdir.md``); a tool-less lane, an ``openai`` endpoint, has the packet alone and is told
how to read line numbers and quotes from the diff (``packet-only.md``). Nothing of this is ever
put on a command line.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

from ..core.errors import UsageError
from ..core.readfile import read_bounded
from ..core.settings.tables import LaneConfig

STANDARD_PROMPTS = ("correctness", "security", "architecture", "feasibility", "acceptance")
MAX_PROMPT_BYTES = 64 * 1024


@functools.cache
def builtin(name: str) -> str:
    """One of the prompt files shipped in ``lanes/prompts/``."""
    return (resources.files(__package__) / "prompts" / f"{name}.md").read_text(encoding="utf-8")


def lens_prompt(lane: LaneConfig, snapshot: Path) -> str:
    """The lens part of ``lane``'s prompt; a ``UsageError`` when its ``prompt_file`` cannot be
    read from ``snapshot`` (the lane's copy of the reviewed tree)."""
    if lane.prompt_file is not None:
        path = (snapshot / lane.prompt_file).resolve()
        if not path.is_relative_to(snapshot.resolve()) or not path.is_file():
            raise UsageError(
                f"the prompt_file {lane.prompt_file} is not a file of the reviewed snapshot "
                "(a link out of it is not followed)"
            )
        data = read_bounded(path, MAX_PROMPT_BYTES, "the prompt_file")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"the prompt_file {lane.prompt_file} is not UTF-8 text") from None
    if lane.role == "scout":
        return builtin("scout")
    if lane.lens in STANDARD_PROMPTS:
        return builtin(lane.lens)
    return builtin("lens").replace("{lens}", lane.lens)


def contract(tools: bool) -> str:
    """The rules of evidence and the answer format, for a reviewer with the snapshot and its
    tools (``tools``) or with the packet alone."""
    setting = builtin("workdir" if tools else "packet-only").rstrip()
    return builtin("contract").replace("{setting}", setting)


def full_prompt(packet: bytes, lens: str) -> str:
    """An agent's whole prompt: the packet first (long input before the questions), then the
    lens prompt, then the contract."""
    return (
        f"# The review packet\n\n```json\n{packet.decode('utf-8')}\n```\n\n"
        f"{lens.rstrip()}\n\n{contract(tools=True).rstrip()}\n"
    )


def system_prompt(lens: str) -> str:
    """A tool-less lane's system message: the lens prompt, then the contract for a reviewer
    with the packet alone (the packet is the user's message)."""
    return f"{lens.rstrip()}\n\n{contract(tools=False)}"
