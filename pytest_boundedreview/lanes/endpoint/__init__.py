"""The ``openai`` lane: an OpenAI-compatible HTTP endpoint, its deadline and its refusals."""
