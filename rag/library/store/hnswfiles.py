"""Are a Chroma vector segment's HNSW files sound enough to load? Checked by reading them, never by loading.

Embedded Chroma keeps each collection's vectors in hnswlib's persisted files (header.bin,
data_level0.bin, length.bin, link_lists.bin), rewritten in place on every flush. A process killed
mid-flush leaves them torn, and hnswlib trusts what it reads: a torn link list makes the loader read
garbage sizes, and every later flush then seeks further past the end (chroma-core/chroma#7510; we saw
a 2.2 TB sparse link_lists.bin), and a search that follows a bad neighbour id crashes the process
with SIGSEGV (chroma-core/chroma#7238). Neither can be caught once Chroma has loaded the files, so
this module checks, with numpy over the raw bytes, everything the loader and a search rely on:

- the header's geometry is hnswlib's own (M, maxM0 = 2M, offsets, element size), and so are its
  parameters: the level multiplier is 1/ln(M) (a torn one draws a level of billions for the next
  element, and that insert crashes), ef_construction lies in [M, 4096], and the capacity in
  [count, max(8 count, 65536)] (Chroma grows it to the next power of two past what a batch needs);
- the files are as long as the header's element count needs, and the link lists add up exactly;
- every neighbour id is a stored element, every layer's neighbour lives on that layer, and the entry
  point is on the top layer;
- every stored, undeleted vector has unit length (paperchat stores only unit vectors, and a flush
  that never reached an element leaves zeros);
- Chroma's id map (index_metadata.pickle) names only labels of stored, undeleted elements.

The layout is chroma-core/chroma rust/hnswlib/cpp/hnswlib/hnswalg.h (persistHeader, persistDirty,
loadPersistedIndex, PERSISTENCE_VERSION 1); the growth rule is rust/segment/src/local_hnsw.rs
(apply_log_chunk: resize to (elements + batch).next_power_of_two()).
"""

from __future__ import annotations

import math
import pickle
import struct
from pathlib import Path

import numpy as np

FILES = ("header.bin", "data_level0.bin", "length.bin", "link_lists.bin", "index_metadata.pickle")
_HEADER = struct.Struct("<iQQQQQQiIQQQdQ")  # version, offsetLevel0, max_elements, count, size_data_per_element,
# label_offset, offsetData, maxlevel, enterpoint, maxM, maxM0, M, mult, ef_construction (100 bytes)
_ROWS = 50_000  # elements per numpy pass: bounds memory at any library size
_MAX_EF = 4096  # ef_construction: Chroma's default is 100; beyond this a torn value, not a setting
# Capacity: a batch of b labels (adds and deletes) on c elements resizes to next_power_of_two(c + b), and b is
# at most what the batch deletes (<= c) plus what it adds (new elements, or deleted slots reused: <= c more),
# so capacity < 6 x count once grown; before that it is the initial capacity (100 or 10,000 by version).
_GROWTH, _FLOOR = 8, 65536
_NO_LABELS = np.zeros(0, np.uint64)


def fingerprint(seg: Path) -> dict[str, list[int]]:
    """Size and modification time of each file: any write by any process changes it."""
    out = {}
    for name in FILES:
        try:
            st = (seg / name).stat()
        except FileNotFoundError:
            continue
        out[name] = [st.st_size, st.st_mtime_ns]
    return out


def problems(seg: Path, normalised: bool = False) -> list[str]:
    """What would make hnswlib crash or misread this segment; [] when it is sound (or not written yet).
    `normalised`: a cosine collection, whose length.bin holds each vector's length (1 for paperchat's)."""
    present = [n for n in FILES[:4] if (seg / n).exists()]
    if not present:
        return []  # Chroma writes a collection's files on its first flush
    if len(present) < 4:
        return [f"missing {', '.join(n for n in FILES[:4] if n not in present)}"]
    raw = (seg / "header.bin").read_bytes()
    if len(raw) != _HEADER.size:
        return [f"header.bin is {len(raw)} bytes, not {_HEADER.size}"]
    (version, off0, max_el, n, per, label_off, data_off, maxlevel, entry, max_m, max_m0, m, mult,
     efc) = _HEADER.unpack(raw)
    links0 = max_m0 * 4 + 4
    dim, rest = divmod(label_off - data_off, 4)
    if (version != 1 or off0 != 0 or not 2 <= m <= 4096 or max_m != m or max_m0 != 2 * m or data_off != links0
            or rest or dim < 1 or per != label_off + 8):
        return ["header.bin does not describe an hnswlib index"]
    errs = _parameters(max_el, n, m, mult, efc)
    if errs:
        return errs
    if n == 0:  # an index created but never given an element: nothing may refer to one
        if (seg / "link_lists.bin").stat().st_size:
            return ["header.bin counts no element, yet link_lists.bin holds some"]
        return _pickle(seg / "index_metadata.pickle", _NO_LABELS)
    if not 0 <= maxlevel < 64 or entry >= n:
        return [f"entry point {entry} at level {maxlevel} lies outside the {n} elements"]
    for name, need in (("data_level0.bin", n * per), ("length.bin", n * 4)):
        if (seg / name).stat().st_size < need:
            errs.append(f"{name} is shorter than {n} elements need")
    if errs:
        return errs

    levels, upper, err = _link_lists(seg / "link_lists.bin", n, max_m * 4 + 4)
    if err:
        return [err]
    if levels[entry] != maxlevel:
        errs.append(f"entry point {entry} is on level {levels[entry]}, not the top level {maxlevel}")
    if int(levels.max(initial=0)) > maxlevel:
        errs.append("an element lies above the top level")
    # Upper layers: block j of an element with level L is its layer j+1 list (count, then maxM ids).
    if upper.size:
        counts = upper[:, 0] & 0xFFFF
        ids = upper[:, 1:]
        layer = _layers_of(levels)
        used = np.arange(max_m)[None, :] < counts[:, None]
        if (counts > max_m).any():
            errs.append("an upper-layer link list is longer than M")
        else:
            bad = used & ((ids >= n) | (levels[np.minimum(ids, n - 1)] < layer[:, None]))
            if bad.any():
                errs.append("an upper-layer link points outside its layer")
    bad, live = _level0(seg / "data_level0.bin", n, per, max_m0, data_off, dim,
                        seg / "length.bin" if normalised else None)
    errs += bad
    return errs + (_pickle(seg / "index_metadata.pickle", live) if not bad else [])


def _parameters(capacity: int, n: int, m: int, mult: float, efc: int) -> list[str]:
    """The header's numbers that hnswlib trusts when it allocates (capacity) or adds (mult, ef_construction)."""
    if not (math.isfinite(mult) and abs(mult * math.log(m) - 1.0) < 1e-9):  # hnswlib: mult_ = 1 / log(M)
        return [f"header.bin's level multiplier is {mult!r}, not 1/ln(M) for M = {m}"]
    if not m <= efc <= _MAX_EF:  # hnswlib: ef_construction_ = max(ef_construction, M)
        return [f"header.bin's ef_construction {efc} lies outside [M = {m}, {_MAX_EF}]"]
    if not n <= capacity <= max(_GROWTH * n, _FLOOR):
        return [f"header.bin's capacity {capacity} does not fit its {n} elements"]
    return []


def _link_lists(path: Path, n: int, block: int) -> tuple[np.ndarray, np.ndarray, str]:
    """Each element's level and its upper-layer link blocks, walking the records as hnswlib reads them
    (a uint32 size, then size bytes); the walk must end exactly at the end of the file."""
    size = path.stat().st_size
    levels = np.zeros(n, dtype=np.int32)
    starts: list[int] = []
    with open(path, "rb") as f:
        # Far more than any level distribution uses: a torn size can claim terabytes (a sparse file).
        buf = f.read(min(size, (n + 1) * 4 + 4 * n * block + (1 << 20)))
        if len(buf) < size:
            return levels, np.zeros((0, 0), np.uint32), f"link_lists.bin is {size} bytes, far more than {n} elements use"
    pos = 0
    for i in range(n):
        if pos + 4 > size:
            return levels, np.zeros((0, 0), np.uint32), f"link_lists.bin ends at element {i} of {n}"
        k = int.from_bytes(buf[pos : pos + 4], "little")
        pos += 4
        if k:
            if k % block or k // block > 63 or pos + k > size:
                return levels, np.zeros((0, 0), np.uint32), f"link_lists.bin holds a torn record at element {i}"
            levels[i] = k // block
            starts.append(pos)
            pos += k
    if pos != size:
        return levels, np.zeros((0, 0), np.uint32), f"link_lists.bin has {size - pos} bytes past its {n} records"
    words = np.frombuffer(buf, dtype=np.uint8)
    rows = [words[s : s + levels_k * block] for s, levels_k in zip(starts, levels[levels > 0])]
    upper = (np.concatenate(rows).view(np.uint32).reshape(-1, block // 4) if rows
             else np.zeros((0, block // 4), np.uint32))
    return levels, upper, ""


def _layers_of(levels: np.ndarray) -> np.ndarray:
    """The layer (1..L) of every upper-layer block, in file order."""
    lv = levels[levels > 0]
    return np.concatenate([np.arange(1, k + 1) for k in lv]) if lv.size else np.zeros(0, np.int64)


def _level0(path: Path, n: int, per: int, max_m0: int, data_off: int, dim: int,
            lengths: Path | None) -> tuple[list[str], np.ndarray]:
    """Layer 0 lives in data_level0.bin: per element a uint16 count (byte 2 holds the delete mark),
    maxM0 neighbour ids, the vector, the label (uint64, Chroma's). Returns the findings and the labels of
    the undeleted elements."""
    mm = np.memmap(path, dtype=np.uint8, mode="r", shape=(n, per))
    ln = np.memmap(lengths, dtype=np.float32, mode="r", shape=(n,)) if lengths else None
    labels: list[np.ndarray] = []
    for s in range(0, n, _ROWS):
        part = np.asarray(mm[s : s + _ROWS])
        head = part[:, :4].copy().view(np.uint32)[:, 0]
        counts, deleted = head & 0xFFFF, (head >> 16) & 1
        if (counts > max_m0).any():
            return [f"a layer-0 link list near element {s} is longer than 2M"], _NO_LABELS
        ids = part[:, 4 : 4 + max_m0 * 4].copy().view(np.uint32)
        if ((np.arange(max_m0)[None, :] < counts[:, None]) & (ids >= n)).any():
            return [f"a layer-0 link near element {s} points past the {n} elements"], _NO_LABELS
        vec = part[:, data_off : data_off + dim * 4].copy().view(np.float32)
        with np.errstate(all="ignore"):
            norms = np.sqrt((vec.astype(np.float64) ** 2).sum(axis=1))
        live = deleted == 0
        if not (np.isfinite(norms[live]).all() and (np.abs(norms[live] - 1.0) < 1e-2).all()):
            return [f"data_level0.bin holds a vector that is not a stored one near element {s}"], _NO_LABELS
        with np.errstate(all="ignore"):
            off = np.abs(np.asarray(ln[s : s + _ROWS], dtype=np.float64)[live] - 1.0) if ln is not None else None
        if off is not None and not (off < 1e-2).all():
            return [f"length.bin holds a length that is not a stored one near element {s}"], _NO_LABELS
        labels.append(part[:, data_off + dim * 4 : data_off + dim * 4 + 8].copy().view(np.uint64)[live, 0])
    return [], np.concatenate(labels)


def _pickle(path: Path, live: np.ndarray) -> list[str]:
    """Chroma's id <-> label map, written last in a flush: every label it names must be a stored, undeleted
    element's (Chroma reads a named label's vector; hnswlib holds no such label). The index may hold labels
    the map lacks: a writer killed between the two saves, which Chroma's log replay adds again."""
    if not path.exists():
        return []
    try:
        with open(path, "rb") as f:
            meta = pickle.load(f)
    except Exception as exc:  # noqa: BLE001 - any failure to read it is the same finding
        return [f"index_metadata.pickle cannot be read ({type(exc).__name__})"]
    ids = meta.get("id_to_label") if isinstance(meta, dict) else None
    if not isinstance(ids, dict) or not all(type(v) is int and 0 <= v < 1 << 64 for v in ids.values()):
        return ["index_metadata.pickle is not Chroma's id map"]
    named = np.fromiter(ids.values(), dtype=np.uint64, count=len(ids))
    stray = named[~np.isin(named, live)]
    if stray.size:
        return [f"index_metadata.pickle names {stray.size} labels the index does not hold (label {int(stray[0])})"]
    return []
