"""Prompts live as text files in prompts/; a folder in settings can override any of them."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path


@lru_cache(maxsize=64)
def _bundled(name: str) -> str:
    return resources.files("prompts").joinpath(f"{name}.txt").read_text(encoding="utf-8")


def load_prompt(name: str, override_dir: Path | None = None) -> str:
    if override_dir is not None:
        p = Path(override_dir) / f"{name}.txt"
        if p.exists():
            return p.read_text(encoding="utf-8")
    return _bundled(name)
