"""The project's pytest configuration as pytest reads it: options, ini file, tox commands."""
