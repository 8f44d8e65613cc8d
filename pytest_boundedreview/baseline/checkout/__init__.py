"""A checkout to re-run in made ready: what it holds besides the commit's files, how it is filled
in, and its imports and bytecode kept its own."""
