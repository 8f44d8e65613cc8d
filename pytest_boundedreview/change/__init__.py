"""Stage 1: what is reviewed, frozen: git, the target and its snapshot, the scope."""
