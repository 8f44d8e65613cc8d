"""Checkouts of the tool's own: the base's (temporary or kept) and the tested snapshot's."""
