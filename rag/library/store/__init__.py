"""The embedded-store guard: everything that protects embedded Chroma's files from several processes and from crashes.

Entered only through rag.library.chroma, and only for an embedded store: a user of a Chroma server never
passes through here.

    client.py      the guarded client: one Chroma call at a time across processes; take up what others saved
    guard.py       EmbeddedStore: check files before loading them, vouch for sound ones, rebuild what fails
    hnswfiles.py   are HNSW files sound? read as bytes, never loaded
    childcheck.py  can a fresh process load the collections? (python -m rag.library.store.childcheck)
    repair.py      whether Chroma loads a collection; the paper records salvaged from its SQLite file
    snapshot.py    a read-only home, read: a private copy of one library (readers; rag.library.chroma.readable_home)
"""

from rag.library.store.client import embedded_client
from rag.library.store.guard import EmbeddedStore

__all__ = ["embedded_client", "EmbeddedStore"]
