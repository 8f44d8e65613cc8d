"""Renderers of the report; the only place untrusted text is escaped."""
