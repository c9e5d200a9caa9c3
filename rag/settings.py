"""Every setting in one object, read from the environment (prefix PAPERCHAT_)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class ChunkSettings(BaseModel):
    # Sentence windows of about this many characters (always within MiniLM's 256-token window).
    # 500 beats 800, 1100 and whole abstracts on SciFact train (README, "Retrieval quality").
    max_chars: int = 500
    max_tokens: int = 256


class RetrievalSettings(BaseModel):
    k: int = 10
    # Papers kept from each side before fusion, and chunks fetched per wanted paper on the dense side.
    candidates: int = 100
    chunks_per_paper: int = 8
    # z-score fusion, dense weight 0.6: chosen on SciFact train (bench/tune/scifact_tune.py).
    fusion: Literal["zscore", "minmax", "rrf"] = "zscore"
    dense_weight: float = 0.6
    rrf_k: int = 60
    bm25_k1: float = 1.2
    bm25_b: float = 0.75


class AskSettings(BaseModel):
    sources: int = 5  # abstracts given to the answerer
    max_sentences: int = 4
    # Below this cosine between the question and the best chunk the library is taken not to cover the
    # question. Chosen on the seeds (README): paraphrased questions >= 0.35, off-topic ones <= 0.19.
    abstain_below: float = 0.27


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PAPERCHAT_", env_nested_delimiter="__", extra="ignore")

    home: Path = Field(default_factory=lambda: Path.home() / ".paperchat")
    library: str = "default"
    chroma_url: str | None = None
    llm: Literal["extractive", "openai"] = "extractive"
    model: str = "gpt-4o-mini"
    embedder: Literal["minilm", "fake"] = "minilm"
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_API_KEY", "PAPERCHAT_OPENAI_API_KEY")
    )
    openai_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("OPENAI_BASE_URL", "PAPERCHAT_OPENAI_BASE_URL")
    )
    request_timeout: float = 60.0
    lock_timeout: float = 30.0  # how long a second ingest waits for the library before "library busy"
    prompts_dir: Path | None = None  # overrides files in the bundled prompts/
    chunk: ChunkSettings = ChunkSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    ask: AskSettings = AskSettings()
    # UI
    auth_user: str | None = None
    auth_password: SecretStr | None = None
    max_upload_mb: int = 50

    @property
    def library_dir(self) -> Path:
        return self.home / "libraries" / self.library


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
