"""The coding-agent lanes: Claude Code, Codex and Gemini CLI on one shared agent runner."""
