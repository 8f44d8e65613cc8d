"""The settings: ``[tool.bounded-review]`` read, validated, and held against the base's."""
