"""Every setting in one object, read from the environment (prefix PAPERCHAT_)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

import re

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


MAX_K = 1000  # results of one search at most (--k): fusion and the hits' texts cost in proportion to k
LIBRARY_NAME_MAX = 63  # Chroma collection names are built from it ("paperchat-NAME-chunks")
_LIBRARY_CHARS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")


class _Finite(BaseModel):
    """A settings group whose numbers must be numbers: `nan` or `inf` in a weight or a threshold would be
    accepted and turn every score into nan."""

    model_config = ConfigDict(allow_inf_nan=False)


def library_name_problem(name: str) -> str:
    """Why `name` cannot name a library ('' if it can): its characters and its length, each said as such."""
    if not _LIBRARY_CHARS.match(name or ""):
        return (f"library name {name!r} must start with a letter or digit and hold only letters, digits, "
                f"'-' or '_'")
    if len(name) > LIBRARY_NAME_MAX:
        return f"library name is {len(name)} characters long; the limit is {LIBRARY_NAME_MAX}"
    return ""


class ChunkSettings(_Finite):
    # Sentence windows of about this many characters (always within MiniLM's 256-token window).
    # 500 beats 800, 1100 and whole abstracts on SciFact train (docs/quality.md, "Retrieval quality").
    max_chars: int = Field(500, ge=50)
    max_tokens: int = Field(256, ge=16)
    # One forward pass per chunk also gives each sentence's vector (its tokens pooled in the chunk and read out
    # to stand in for the sentence alone, rag.embedders.readout; issue 34), read by the same weights as
    # sentences embedded alone; off: each sentence also embedded on its own (1.4x the model work at ingest).
    # The evals and the seed cases hold either way (docs/quality.md, "One pass per chunk"). A library keeps the
    # way it was built (rag.library.collections: `sentences`): this applies to new libraries.
    one_pass: bool = True


class RetrievalSettings(_Finite):
    k: int = Field(10, ge=1)
    # Papers kept from each side before fusion, and chunks fetched per wanted paper on the dense side.
    candidates: int = Field(100, ge=1)
    chunks_per_paper: int = Field(8, ge=1)
    # z-score fusion, dense weight 0.6: chosen on SciFact train (bench/tune/scifact_tune.py).
    fusion: Literal["zscore", "minmax", "rrf"] = "zscore"
    dense_weight: float = Field(0.6, ge=0.0, le=1.0)  # the lexical side weighs 1 - dense_weight
    rrf_k: int = Field(60, ge=1)  # reciprocal-rank fusion divides by rrf_k + rank
    bm25_k1: float = Field(1.2, ge=0.0)
    bm25_b: float = Field(0.75, ge=0.0, le=1.0)


class AskSettings(_Finite):
    sources: int = Field(5, ge=1)  # abstracts given to the answerer
    max_sentences: int = Field(4, ge=1)
    # Below this cosine between the question and the best chunk the library is taken not to cover the
    # question. Chosen on the seeds (docs/design.md): paraphrased questions >= 0.35, off-topic ones <= 0.19.
    abstain_below: float = 0.27
    # Both on the answer scorer's probability that a sentence answers the question (rag.reading.answer_scorer):
    # a sentence is quoted (and a source given to the model) only from `floor`; a citation is graded
    # `answers` from `answers_at`, `related` from `floor`, else `weak`. Chosen on train splits
    # (bench/train_answer_scorer.py; rag.reading.grades says how).
    floor: float = 0.10
    answers_at: float = 0.95
    # The dense side's weight when ask retrieves (search, cite and summarise keep retrieval.dense_weight, chosen
    # on SciFact's claims). Chosen end to end on the mlqa train questions: 0.3 / 0.4 / 0.45 / 0.5 / 0.6 answered
    # 0.881 / 0.881 / 0.868 / 0.862 / 0.855 with a marked sentence (a question's exact terms single out its
    # paper more often than a claim's do; SciFact train nDCG@10 at 0.4 0.741 against 0.751). docs/quality.md.
    dense_weight: float = Field(0.4, ge=0.0, le=1.0)


class EmbeddingsSettings(_Finite):
    """The embedder past the default in-process MiniLM: an OpenAI-compatible /v1/embeddings service (TEI,
    vLLM, Infinity, Ollama, llama.cpp, OpenAI), or MiniLM on a GPU."""

    url: str | None = None  # e.g. http://tei:8080/v1; setting it makes the endpoint the embedder
    model: str = ""  # the name the service serves; recorded with the library (the URL is not)
    api_key: SecretStr | None = None  # never printed
    # 32 texts a request: TEI's default --max-client-batch-size; raise it with the service's limit.
    batch_size: int = Field(default=32, ge=1)
    concurrency: int = Field(default=4, ge=1)  # requests in flight at once
    retries: int = Field(default=5, ge=0)  # per request, with exponential backoff (0.5 s doubling, at most 8 s)
    timeout: float = 60.0
    dimensions: int | None = None  # ask the service for shorter vectors (OpenAI text-embedding-3 models)
    device: Literal["auto", "cpu", "cuda"] = "auto"  # in-process MiniLM: CUDA when onnxruntime-gpu sees a GPU


class MapSettings(_Finite):
    # t-SNE (openTSNE) on cosine distance: each paper's 30 nearest set its place (rag/maps/layout.py).
    perplexity: float = Field(default=30.0, gt=1)
    seed: int = 42  # a fixed seed: the same library draws the same map
    # Papers added (or removed) since the layout was fitted, as a share of the papers it was fitted on,
    # past which the layout is recomputed (in the background in the UI): placing by neighbours keeps
    # old papers still, so the new ones cannot open up regions of their own.
    refit_share: float = 0.2
    max_topics: int = 36  # labelled regions at most (about n ** 0.4: 6 for 76 papers, 31 for 5k)


class FetchSettings(BaseModel):
    """`paperchat fetch`: how politely to ask the services (rag.fetch)."""

    # Sent as OpenAlex's and Crossref's `mailto` and NCBI's `email` (their "polite pools" ask for a contact).
    email: str = ""
    openalex_api_key: SecretStr | None = None  # OpenAlex asks for a (free) key since 2026; never printed
    s2_api_key: SecretStr | None = None  # Semantic Scholar's x-api-key: a higher rate; never printed
    ncbi_api_key: SecretStr | None = None  # NCBI E-utilities: 10 requests/s instead of 3; never printed
    limit: int = Field(300, ge=1)  # papers per fetch unless --limit says otherwise
    max_limit: int = Field(10000, ge=1)  # the hard cap on --limit (raise it here for a bigger fetch)
    timeout: float = Field(30.0, gt=0)  # seconds per request
    retries: int = Field(6, ge=0)  # per request, on 429 / 5xx / a dropped connection
    backoff: float = Field(2.0, ge=0)  # first wait after a 429 or 503 (doubling, at most 60 s; Retry-After wins)
    pace: float = Field(1.0, ge=0)  # scales each service's pause between requests (arXiv asks for 3 s)
    openalex_url: str = "https://api.openalex.org"
    arxiv_url: str = "https://export.arxiv.org/api/query"
    s2_url: str = "https://api.semanticscholar.org/graph/v1"
    pubmed_url: str = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
    crossref_url: str = "https://api.crossref.org"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PAPERCHAT_", env_nested_delimiter="__", extra="ignore",
                                      allow_inf_nan=False)

    home: Path = Field(default_factory=lambda: Path.home() / ".paperchat")
    library: str = "default"
    chroma_url: str | None = None
    llm: Literal["extractive", "openai"] = "extractive"
    model: str = "gpt-4o-mini"
    embedder: Literal["minilm", "endpoint", "fake"] = "minilm"
    embeddings: EmbeddingsSettings = EmbeddingsSettings()
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
    map: MapSettings = MapSettings()
    fetch: FetchSettings = FetchSettings()
    # UI
    auth_user: str | None = None
    auth_password: SecretStr | None = None
    max_upload_mb: int = Field(50, ge=1)

    @field_validator("home", mode="before")
    @classmethod
    def _home_is_named(cls, v):
        # PAPERCHAT_HOME= (empty) would be Path("") -- the current folder, filled with chroma/ and libraries/
        if isinstance(v, str) and not v.strip():
            raise ValueError("is empty: unset it for ~/.paperchat, or name a folder")
        return v

    @field_validator("home")
    @classmethod
    def _home_is_a_folder(cls, v: Path) -> Path:
        v = v.expanduser()
        if v.exists() and not v.is_dir():
            raise ValueError(f"{v} is a file, not a folder: point PAPERCHAT_HOME at a folder (it is created if missing)")
        return v

    @field_validator("library")
    @classmethod
    def _library_name(cls, v: str) -> str:
        if problem := library_name_problem(v):
            raise ValueError(problem)
        return v

    @model_validator(mode="after")
    def _endpoint_when_url(self):
        # PAPERCHAT_EMBEDDINGS__URL alone is enough; an explicit PAPERCHAT_EMBEDDER still wins.
        if self.embeddings.url and "embedder" not in self.model_fields_set:
            self.embedder = "endpoint"
        return self

    @property
    def library_dir(self) -> Path:
        return self.home / "libraries" / self.library


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
