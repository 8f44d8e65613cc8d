"""A checkout made ready to re-run in: its contents, its imports and its bytecode."""
