"""The agent lane kinds by name."""

from __future__ import annotations

from . import claude, codex, gemini
from .agent import Agent

AGENTS: dict[str, Agent] = {a.name: a for a in (claude.AGENT, codex.AGENT, gemini.AGENT)}
