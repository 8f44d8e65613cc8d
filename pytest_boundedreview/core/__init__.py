"""Shared helpers every stage may use: errors, configuration, subprocesses, files."""
