"""What a user can cause, turned into one clear line (with any secret removed)."""

from __future__ import annotations

import os
import re


class UserError(Exception):
    """A mistake in what the user asked for; the message says how to fix it."""


def redact(text: str) -> str:
    """Remove API keys from text that may reach a log, the UI or an export."""
    key = os.environ.get("OPENAI_API_KEY") or os.environ.get("PAPERCHAT_OPENAI_API_KEY")
    if key and len(key) >= 6:
        text = text.replace(key, "***")
    return re.sub(r"\b(sk-[A-Za-z0-9_-]{6})[A-Za-z0-9_-]+", r"\1***", text)


def user_message(exc: BaseException) -> str | None:
    """One line for errors a user can cause; None for bugs, which should keep their traceback."""
    from .chroma import StoreUnavailable
    from .library import LibraryError

    if isinstance(exc, (UserError, LibraryError, StoreUnavailable)):
        return redact(str(exc))
    try:
        from .loaders import LoadError
        from .loaders.mapping import FieldsError

        if isinstance(exc, (LoadError, FieldsError)):
            return redact(str(exc))
    except ImportError:
        pass
    if type(exc).__module__.startswith("chromadb") and type(exc).__name__ == "InternalError" and any(
            w in str(exc) for w in ("hnsw", "compactor", "pickle")):
        # Embedded Chroma writes its index files in place: a crash at the wrong moment can leave them
        # unloadable. Chunk indexes are rebuilt by the library; this is what it cannot rebuild.
        return redact("the library's Chroma store cannot be loaded (damaged by a crash while Chroma was saving "
                      "it?): ingest your files again into a new library (PAPERCHAT_LIBRARY=...) — Chroma says: "
                      + str(exc).splitlines()[0][:160])
    try:
        import pydantic

        if isinstance(exc, pydantic.ValidationError):
            errs = exc.errors()
            loc = ".".join(str(x) for x in errs[0]["loc"]) if errs else "?"
            return f"bad setting {loc.upper() and 'PAPERCHAT_' + loc.upper()}: {errs[0]['msg'] if errs else exc}"
    except ImportError:
        pass
    import sys

    if "openai" in sys.modules:
        import openai

        if isinstance(exc, openai.AuthenticationError):
            return "the language model endpoint refused the API key (check OPENAI_API_KEY)"
        if isinstance(exc, openai.APIConnectionError):
            from .llm import public_url

            base = public_url(os.environ.get("OPENAI_BASE_URL") or os.environ.get("PAPERCHAT_OPENAI_BASE_URL")
                              or "https://api.openai.com/v1")  # a key pasted into the URL stays hidden
            return f"cannot reach the language model endpoint at {base} (check OPENAI_BASE_URL and that the server runs)"
        if isinstance(exc, openai.NotFoundError):
            return f"the language model endpoint does not know that model (check PAPERCHAT_MODEL): {redact(str(exc))[:200]}"
        if isinstance(exc, openai.APIError):
            return f"the language model endpoint failed: {redact(str(exc))[:200]}"
    if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError)):
        return redact(f"{exc.strerror}: {exc.filename}")
    return None
