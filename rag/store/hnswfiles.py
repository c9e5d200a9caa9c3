"""Are a Chroma vector segment's HNSW files sound enough to load? Checked by reading them, never by loading.

Embedded Chroma keeps each collection's vectors in hnswlib's persisted files (header.bin,
data_level0.bin, length.bin, link_lists.bin), rewritten in place on every flush. A process killed
mid-flush leaves them torn, and hnswlib trusts what it reads: a torn link list makes the loader read
garbage sizes, and every later flush then seeks further past the end (chroma-core/chroma#7510; we saw
a 2.2 TB sparse link_lists.bin), and a search that follows a bad neighbour id crashes the process
with SIGSEGV (chroma-core/chroma#7238). Neither can be caught once Chroma has loaded the files, so
this module checks, with numpy over the raw bytes, everything the loader and a search rely on:

- the header's geometry is hnswlib's own (M, maxM0 = 2M, offsets, element size);
- the files are as long as the header's element count needs, and the link lists add up exactly;
- every neighbour id is a stored element, every layer's neighbour lives on that layer, and the entry
  point is on the top layer;
- every stored, undeleted vector has unit length (paperchat stores only unit vectors, and a flush
  that never reached an element leaves zeros).

The layout is chroma-core/chroma rust/hnswlib/cpp/hnswlib/hnswalg.h (persistHeader, persistDirty,
loadPersistedIndex, PERSISTENCE_VERSION 1).
"""

from __future__ import annotations

import pickle
import struct
from pathlib import Path

import numpy as np

FILES = ("header.bin", "data_level0.bin", "length.bin", "link_lists.bin", "index_metadata.pickle")
_HEADER = struct.Struct("<iQQQQQQiIQQQdQ")  # version, offsetLevel0, max_elements, count, size_data_per_element,
# label_offset, offsetData, maxlevel, enterpoint, maxM, maxM0, M, mult, ef_construction (100 bytes)
_ROWS = 50_000  # elements per numpy pass: bounds memory at any library size


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
    (version, off0, max_el, n, per, label_off, data_off, maxlevel, entry, max_m, max_m0, m, _mult,
     _efc) = _HEADER.unpack(raw)
    links0 = max_m0 * 4 + 4
    dim, rest = divmod(label_off - data_off, 4)
    if (version != 1 or off0 != 0 or not 2 <= m <= 4096 or max_m != m or max_m0 != 2 * m or data_off != links0
            or rest or dim < 1 or per != label_off + 8 or n > max_el):
        return ["header.bin does not describe an hnswlib index"]
    errs: list[str] = []
    if n == 0:
        return errs
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
    errs += _level0(seg / "data_level0.bin", n, per, max_m0, data_off, dim, seg / "length.bin" if normalised else None)
    errs += _pickle(seg / "index_metadata.pickle")
    return errs


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


def _level0(path: Path, n: int, per: int, max_m0: int, data_off: int, dim: int, lengths: Path | None) -> list[str]:
    """Layer 0 lives in data_level0.bin: per element a uint16 count (byte 2 holds the delete mark),
    maxM0 neighbour ids, the vector, the label."""
    mm = np.memmap(path, dtype=np.uint8, mode="r", shape=(n, per))
    ln = np.memmap(lengths, dtype=np.float32, mode="r", shape=(n,)) if lengths else None
    for s in range(0, n, _ROWS):
        part = np.asarray(mm[s : s + _ROWS])
        head = part[:, :4].copy().view(np.uint32)[:, 0]
        counts, deleted = head & 0xFFFF, (head >> 16) & 1
        if (counts > max_m0).any():
            return [f"a layer-0 link list near element {s} is longer than 2M"]
        ids = part[:, 4 : 4 + max_m0 * 4].copy().view(np.uint32)
        if ((np.arange(max_m0)[None, :] < counts[:, None]) & (ids >= n)).any():
            return [f"a layer-0 link near element {s} points past the {n} elements"]
        vec = part[:, data_off : data_off + dim * 4].copy().view(np.float32)
        with np.errstate(all="ignore"):
            norms = np.sqrt((vec.astype(np.float64) ** 2).sum(axis=1))
        live = deleted == 0
        if not (np.isfinite(norms[live]).all() and (np.abs(norms[live] - 1.0) < 1e-2).all()):
            return [f"data_level0.bin holds a vector that is not a stored one near element {s}"]
        with np.errstate(all="ignore"):
            off = np.abs(np.asarray(ln[s : s + _ROWS], dtype=np.float64)[live] - 1.0) if ln is not None else None
        if off is not None and not (off < 1e-2).all():
            return [f"length.bin holds a length that is not a stored one near element {s}"]
    return []


def _pickle(path: Path) -> list[str]:
    """Chroma's id <-> label map, written last in a flush."""
    if not path.exists():
        return []
    try:
        with open(path, "rb") as f:
            meta = pickle.load(f)
    except Exception as exc:  # noqa: BLE001 - any failure to read it is the same finding
        return [f"index_metadata.pickle cannot be read ({type(exc).__name__})"]
    if not isinstance(meta, dict) or not isinstance(meta.get("id_to_label"), dict):
        return ["index_metadata.pickle is not Chroma's id map"]
    return []
