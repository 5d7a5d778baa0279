"""Scenes and experiments built on the library (not part of its API)."""
