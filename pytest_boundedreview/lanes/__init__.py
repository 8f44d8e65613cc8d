"""Reviewer lanes: the environment they get and the runners that start them."""
