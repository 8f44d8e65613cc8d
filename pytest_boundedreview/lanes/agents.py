"""The agent lane kinds by name, and what a lane row says about an agent's model."""

from __future__ import annotations

from . import claude, codex, gemini
from .agent import Agent

AGENTS: dict[str, Agent] = {a.name: a for a in (claude.AGENT, codex.AGENT, gemini.AGENT)}


def model_note(model: str | None) -> str:
    """None of these tools offers a supported live model list: the row says so."""
    if model is None:
        return "model: the tool's default, not verified against a live list"
    return "model not verified against a live list"
