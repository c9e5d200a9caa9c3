"""Shared fixtures: libraries built once per session, settings isolated from the user's environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT / "seeds"
SHARED = ROOT.parent / "shared"

os.environ["ANONYMIZED_TELEMETRY"] = "False"
for var in ("PAPERCHAT_LLM", "PAPERCHAT_LIBRARY", "PAPERCHAT_CHROMA_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
    os.environ.pop(var, None)


def make_settings(home: Path, **kw):
    from rag.settings import Settings

    return Settings(home=home, **kw)


@pytest.fixture
def fake_settings(tmp_path):
    """Settings for a fresh library with the hashing fake embedder (fast, lexical similarity)."""
    return make_settings(tmp_path / "home", embedder="fake")


@pytest.fixture
def fake_library(fake_settings):
    from rag.library.library import Library

    return Library(fake_settings)


@pytest.fixture(scope="session")
def seeds_home(tmp_path_factory):
    return tmp_path_factory.mktemp("seeds-home")


@pytest.fixture(scope="session")
def seeds_library(seeds_home):
    """The four bundled seed files in a library with the real offline embedder, built once per session."""
    from rag.library.library import Library

    lib = Library(make_settings(seeds_home, embedder="minilm"))
    report = lib.ingest([SEEDS], progress=False)
    assert report.added == 76, report.summary()
    return lib


@pytest.fixture(scope="session")
def seeds_settings(seeds_library):
    return seeds_library.settings


class RecordingFake(FakeListChatModel):
    """A scripted chat model that remembers the prompts it was sent."""

    seen: list = []

    def _call(self, messages, stop=None, run_manager=None, **kw):
        self.seen.append(messages)
        return super()._call(messages, stop, run_manager, **kw)

    def _stream(self, messages, stop=None, run_manager=None, **kw):
        self.seen.append(messages)
        yield from super()._stream(messages, stop, run_manager, **kw)
