"""An OpenAI-compatible /v1/embeddings endpoint as the embedder (TEI, vLLM, Infinity, Ollama, llama.cpp, OpenAI).

Through the `openai` client rather than raw httpx: it already retries connection errors, timeouts, 408,
409, 429 and 5xx with capped exponential backoff and jitter (honouring Retry-After), raises typed errors,
and asks for base64 vectors (a quarter of the bytes of JSON floats) while accepting servers that answer
with floats. Batches go out on a small thread pool (the client is thread-safe) and come back in order.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from langchain_core.embeddings import Embeddings

from rag.errors import UserError, redact, register_secret
from rag.embedders.identity import EmbedderIdentity, EmbedderMismatch
from rag.embedders.minilm import MAX_TOKENS, TokenCounter


class EndpointFailed(UserError):
    """The embedding endpoint kept failing (retries exhausted) or answered something unusable."""


class EndpointEmbeddings(Embeddings):
    """Vectors from an OpenAI-protocol embeddings server, L2-normalised here whatever the server does."""

    max_tokens = MAX_TOKENS

    def __init__(self, url: str, model: str, api_key: str | None = None, batch_size: int = 32,
                 concurrency: int = 4, retries: int = 5, timeout: float = 60.0, dimensions: int | None = None):
        if not url:
            raise UserError("PAPERCHAT_EMBEDDER=endpoint needs PAPERCHAT_EMBEDDINGS__URL (e.g. http://HOST:8080/v1)")
        if not model:
            raise UserError("the embedding endpoint needs a model name: set PAPERCHAT_EMBEDDINGS__MODEL "
                            "(the name the service serves, e.g. BAAI/bge-small-en-v1.5)")
        self.url, self.model_id = url, model
        self._key = api_key
        register_secret(api_key)
        self.batch_size, self.concurrency = max(1, batch_size), max(1, concurrency)
        self.retries, self.timeout, self.dimensions = retries, timeout, dimensions
        self._dim: int | None = dimensions
        self._client = None
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        # The endpoint's own tokenizer is unknown here; MiniLM's WordPiece is a close, slightly
        # pessimistic stand-in for English (BPE tokenizers cut fewer pieces), which is what chunking needs.
        self.count_tokens = TokenCounter()

    # -- identity ----------------------------------------------------------------------------------

    def identity(self, recorded_dimension: int | None = None) -> EmbedderIdentity:
        """Model and dimension. A library that recorded its dimension spares a probe: the first real
        response is checked against it instead."""
        if self._dim is None and recorded_dimension:
            self._dim = int(recorded_dimension)
        return EmbedderIdentity(model=self.model_id, dimension=self.dimension)

    @property
    def dimension(self) -> int:
        if self._dim is None:
            self.embed_array(["dimension probe"])
        return self._dim

    @property
    def where(self) -> str:
        from rag.errors import public_url

        return public_url(self.url)

    @property
    def runs_on(self) -> str:
        return f"endpoint {self.where} ({self.batch_size} texts a request, {self.concurrency} at once)"

    # -- requests ------------------------------------------------------------------------------------

    def _get_client(self):
        with self._lock:
            if self._client is None:
                import openai

                self._client = openai.OpenAI(base_url=self.url, api_key=self._key or "not-needed",
                                             max_retries=self.retries, timeout=self.timeout)
                self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="paperchat-embed")
            return self._client

    def _fail(self, what: str) -> EndpointFailed:
        return EndpointFailed(redact(f"the embedding endpoint at {self.where} failed ({what}) after "
                                     f"{self.retries + 1} attempt{'s' if self.retries else ''}"))

    def _post(self, texts: list[str]) -> np.ndarray:
        import openai

        kw = {"dimensions": self.dimensions} if self.dimensions else {}
        try:
            resp = self._get_client().embeddings.create(model=self.model_id, input=texts, **kw)
        except openai.AuthenticationError:
            raise EndpointFailed(f"the embedding endpoint at {self.where} refused the API key "
                                 f"(check PAPERCHAT_EMBEDDINGS__API_KEY)") from None
        except openai.APIStatusError as exc:
            body = exc.body.get("message", "") if isinstance(exc.body, dict) else ""
            raise self._fail(f"HTTP {exc.status_code}{': ' + str(body)[:160] if body else ''}") from None
        except openai.APITimeoutError:
            raise self._fail(f"no answer within {self.timeout:.0f} s") from None
        except openai.APIConnectionError:
            raise self._fail("cannot connect; check PAPERCHAT_EMBEDDINGS__URL and that the service runs") from None
        data = sorted(resp.data, key=lambda d: d.index)
        if len(data) != len(texts):
            raise self._fail(f"{len(data)} vectors for {len(texts)} texts")
        vecs = np.asarray([d.embedding for d in data], dtype=np.float32)
        if vecs.ndim != 2:
            raise self._fail("vectors of differing lengths")
        with self._lock:
            if self._dim is None:
                self._dim = vecs.shape[1]
        if vecs.shape[1] != self._dim:
            raise EmbedderMismatch(
                f"the embedding endpoint at {self.where} serves {vecs.shape[1]}-dim vectors for model "
                f"{self.model_id}, but {self._dim}-dim ones were expected (the library was built with them, or "
                f"the service changed its model): point PAPERCHAT_EMBEDDINGS__URL at a service of the library's model")
        return vecs

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """Vectors in input order: batches of `batch_size` texts, up to `concurrency` requests at once.
        Texts go out sorted by length, so each request holds texts of similar length: a service pads a
        batch to its longest text (TEI, vLLM and llama.cpp compute the padding)."""
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        texts = [texts[i] if texts[i].strip() else "." for i in order]  # some servers refuse empty input
        batches = [texts[s : s + self.batch_size] for s in range(0, len(texts), self.batch_size)]
        self._get_client()
        if len(batches) == 1:
            parts = [self._post(batches[0])]
        else:
            # map() keeps the order, and cancels the batches not yet sent when one fails.
            parts = list(self._pool.map(self._post, batches))
        sent = np.concatenate(parts)
        v = np.empty_like(sent)
        v[order] = sent  # back to the caller's order
        return v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_array(list(texts)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_array([text])[0].tolist()
