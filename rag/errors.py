"""paperchat's exceptions, in one hierarchy, and what a user can cause turned into one clear line (no secret).

    UserError                    a mistake the user can fix; the message says how (printed as one line)
    ├── LibraryError             a library cannot do what was asked (bad name, other embedder, ...)
    │   ├── LibraryBusy          another process holds the library's write lock
    │   ├── StoreFull            the disk holding the embedded store is (nearly) full: nothing is repaired on it
    │   └── StoreStuck           another process has held the embedded store's lock far longer than any call takes
    ├── StoreUnavailable         the Chroma server does not answer
    ├── LoadError                a whole path cannot be read (`.rejection` says which and why)
    └── FieldsError              a `fields` mapping names a field of ours that does not exist
    StoreTorn                    a process died saving embedded Chroma's index files (not the user's doing)

The rooms raise these without importing each other: every module may import this one, and it imports
only `rag.records`.
"""

from __future__ import annotations

import errno
import os
import re

from rag.records import Rejection


class UserError(Exception):
    """A mistake in what the user asked for; the message says how to fix it."""


class LibraryError(UserError, RuntimeError):
    """A problem the user can act on; the CLI prints it as one line."""


class LibraryBusy(LibraryError):
    """Another process is writing to the library (its write lock did not come free in time)."""


class StoreFull(LibraryError):
    """The disk holding the embedded store is (nearly) full: Chroma cannot apply its last writes, and no repair
    (which rewrites the library) is started on it (rag.library.store.guard)."""


class StoreStuck(LibraryError):
    """The embedded store's lock was held by another process far longer than any Chroma call takes (rag.library.locks)."""


class StoreUnavailable(UserError, RuntimeError):
    """The Chroma server at PAPERCHAT_CHROMA_URL cannot be reached."""


class StoreTorn(RuntimeError):
    """Another process died while saving the vector index; Chroma must not load it (see rag.library.store)."""


class LoadError(UserError):
    """A whole path/file that cannot be read at all; `.rejection` says which and why in one line."""

    def __init__(self, rejection: Rejection) -> None:
        super().__init__(str(rejection))
        self.rejection = rejection


class FieldsError(UserError, ValueError):
    """A `fields` mapping names one of our fields that does not exist (a caller's mistake)."""


_SECRETS: set[str] = set()  # keys given in code rather than the environment (e.g. an embedding service's)
_KEY_VARS = ("OPENAI_API_KEY", "PAPERCHAT_OPENAI_API_KEY", "PAPERCHAT_EMBEDDINGS__API_KEY",
             "PAPERCHAT_FETCH__S2_API_KEY", "PAPERCHAT_FETCH__OPENALEX_API_KEY", "PAPERCHAT_FETCH__NCBI_API_KEY")


def register_secret(value: str | None) -> None:
    """Have redact() remove this value too."""
    if value and len(value) >= 6:
        _SECRETS.add(value)


def redact(text: str) -> str:
    """Remove API keys from text that may reach a log, the UI or an export."""
    for key in {*(os.environ.get(v) for v in _KEY_VARS), *_SECRETS}:
        if key and len(key) >= 6:
            text = text.replace(key, "***")
    return re.sub(r"\b(sk-[A-Za-z0-9_-]{6})[A-Za-z0-9_-]+", r"\1***", text)


READ_ONLY_HINT = (" — this command writes to PAPERCHAT_HOME, so it must be writable (readers such as stats, search "
                  "and ask read a private copy of a read-only home, in TMPDIR)")
FULL_HINT = (" — free some space and run the same command again: what was written is kept, each paper whole, "
             "and a re-run carries on")


def user_message(exc: BaseException) -> str | None:
    """One line for errors a user can cause; None for bugs, which should keep their traceback."""
    if isinstance(exc, UserError):
        return redact(str(exc))
    chroma_says = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
    if type(exc).__module__.startswith("chromadb") and "readonly database" in str(exc):
        return redact("the library's Chroma store is read-only (" + chroma_says + ")" + READ_ONLY_HINT)
    if type(exc).__module__.startswith("chromadb") and any(
            w in str(exc).lower() for w in ("no space", "disk is full", "disk full", "compaction")):
        # A full disk shows up inside Chroma as a failed write or compaction, never as ENOSPC.
        return redact("the library's Chroma store could not be written (" + chroma_says + "): is the disk full?"
                      + FULL_HINT)
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
            if not errs:
                return f"bad setting: {exc}"
            # ('ask', 'max_sentences') is set as PAPERCHAT_ASK__MAX_SENTENCES
            loc = "__".join(str(x) for x in errs[0]["loc"]).upper()
            name = "OPENAI_API_KEY" if loc == "OPENAI_API_KEY" else f"PAPERCHAT_{loc}"
            msg = re.sub(r"^Value error, ", "", str(errs[0]["msg"]))
            return redact(f"bad setting {name}: {msg}")
    except ImportError:
        pass
    import sys

    if "openai" in sys.modules:
        import openai

        if isinstance(exc, openai.AuthenticationError):
            return "the language model endpoint refused the API key (check OPENAI_API_KEY)"
        if isinstance(exc, openai.APIConnectionError):
            base = public_url(os.environ.get("OPENAI_BASE_URL") or os.environ.get("PAPERCHAT_OPENAI_BASE_URL")
                              or "https://api.openai.com/v1")  # a key pasted into the URL stays hidden
            return f"cannot reach the language model endpoint at {base} (check OPENAI_BASE_URL and that the server runs)"
        if isinstance(exc, openai.NotFoundError):
            return f"the language model endpoint does not know that model (check PAPERCHAT_MODEL): {redact(str(exc))[:200]}"
        if isinstance(exc, openai.APIError):
            return f"the language model endpoint failed: {redact(str(exc))[:200]}"
    if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError)):
        return redact(f"{exc.strerror}: {exc.filename}")
    if isinstance(exc, OSError) and exc.errno in (errno.EROFS, errno.ENOSPC, errno.EDQUOT):
        return redact(f"{exc.strerror}: {exc.filename or ''}".rstrip(": ") + (
            READ_ONLY_HINT if exc.errno == errno.EROFS else FULL_HINT))
    return None


def public_url(url: str | None) -> str:
    """A URL fit to show: no user, password or query string (where keys get pasted)."""
    if not url:
        return ""
    from urllib.parse import urlsplit, urlunsplit

    try:
        u = urlsplit(url)
        netloc = u.netloc.rsplit("@", 1)[-1]  # drop user:password@, keep host:port as written
        return redact(urlunsplit((u.scheme, netloc, u.path, "", "")))
    except ValueError:
        return "(an invalid URL)"
