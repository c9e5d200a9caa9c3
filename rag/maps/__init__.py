"""The map of a library: every paper placed by its vector, topic regions named (see build.py)."""
