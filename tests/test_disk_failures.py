"""A read-only PAPERCHAT_HOME and a full disk (issue 28, items 12-13): one line and an exit status, never a
traceback. The real thing: a read-only bind mount and a 3 MB tmpfs (skipped where mounting is not allowed)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import sys

import pytest

from conftest import SEEDS


@contextlib.contextmanager
def mounted(*args: str):
    target = args[-1]
    got = subprocess.run(["mount", *args], capture_output=True, text=True)
    if got.returncode != 0:
        pytest.skip(f"cannot mount here ({got.stderr.strip()[:80]}): needs root and CAP_SYS_ADMIN")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", target], capture_output=True)


def _cli(monkeypatch, home, *argv) -> int:
    from rag.cli import main

    monkeypatch.setenv("PAPERCHAT_HOME", str(home))
    monkeypatch.setenv("PAPERCHAT_EMBEDDER", "fake")
    return main([str(a) for a in argv])


READERS = (["stats"], ["search", "residual streams"], ["papers"], ["sources"], ["cite", "residual streams are widened"],
           ["ask", "how can residual streams be widened?"])


def _read_all(monkeypatch, capsys, home) -> tuple[dict, list[str]]:
    """What each reader prints on `home`, and the lines it wrote to stderr."""
    out, notes = {}, []
    for argv in READERS:
        assert _cli(monkeypatch, home, *argv) == 0, argv
        got = capsys.readouterr()
        out[argv[0]] = got.out.replace(str(home), "HOME")
        notes += got.err.strip().splitlines()
    return out, notes


def _stats_lines(out: str) -> str:
    return out.split(" (", 1)[0]  # (the store's path differs: the copy's)


def _writers_refused(monkeypatch, capsys, ro) -> None:
    for argv in (["ingest", SEEDS], ["remove", "--source", "000_e59311403e2266af.txt"]):
        assert _cli(monkeypatch, ro, *argv) == 2, argv
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert f"PAPERCHAT_HOME {ro} cannot be written, and `{argv[0]}` writes to it" in err, err


def test_readers_of_a_home_they_cannot_write_read_a_private_copy(tmp_path, monkeypatch, capsys):
    """Item 13 without a mount (runs everywhere): the home is taken as unwritable; every reader answers as on
    the home itself, with one note, and the copy is made once; writers are one line; the home is not touched."""
    from rag.library.store import snapshot

    home = tmp_path / "home"
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", None)  # (TMPDIR is read once per process otherwise)
    assert _cli(monkeypatch, home, "ingest", SEEDS) == 0
    capsys.readouterr()
    want, notes = _read_all(monkeypatch, capsys, home)
    assert notes == []
    before = {p: p.stat().st_mtime_ns for p in home.rglob("*")}
    monkeypatch.setattr(snapshot, "writable", lambda h: h != home)
    got, notes = _read_all(monkeypatch, capsys, home)
    assert got["search"] == want["search"] and got["papers"] == want["papers"] and got["ask"] == want["ask"]
    assert got["cite"] == want["cite"] and _stats_lines(got["stats"]) == _stats_lines(want["stats"])
    assert "76 papers" in got["stats"]
    assert len(notes) == len(READERS) and all(n.startswith("note: reading ") for n in notes), notes
    assert "a private copy of library 'default'" in notes[0] and "made earlier" in notes[1], notes
    assert {p: p.stat().st_mtime_ns for p in home.rglob("*")} == before  # nothing under the home was written
    _writers_refused(monkeypatch, capsys, home)


def test_a_read_only_home_is_read_and_writers_are_one_line(tmp_path, monkeypatch, capsys):
    """The real thing: a read-only bind mount of a library. A change made through the writable path is read
    on the next command (a new copy)."""
    home, ro = tmp_path / "home", tmp_path / "ro"
    ro.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", None)
    assert _cli(monkeypatch, home, "ingest", SEEDS / "000_e59311403e2266af.txt") == 0
    with mounted("--bind", str(home), str(ro)):
        if subprocess.run(["mount", "-o", "remount,ro,bind", str(ro)], capture_output=True).returncode:
            pytest.skip("cannot remount read-only here")
        capsys.readouterr()
        got, notes = _read_all(monkeypatch, capsys, ro)
        assert "19 papers" in got["stats"] and "Hyper-Connections" in got["search"], got
        assert all(n.startswith("note: reading ") and "read-only PAPERCHAT_HOME" in n for n in notes), notes
        _writers_refused(monkeypatch, capsys, ro)
        assert _cli(monkeypatch, home, "ingest", SEEDS) == 0  # the owner adds papers through the writable path
        capsys.readouterr()
        assert _cli(monkeypatch, ro, "stats") == 0
        got = capsys.readouterr()
        assert "76 papers" in got.out and "note: reading a private copy" in got.err, got


def _run(home, *argv, timeout: float = 240) -> subprocess.CompletedProcess:
    """A command in a process of its own, as a user runs it (a store left mid-compaction is another process's)."""
    env = {**os.environ, "PAPERCHAT_HOME": str(home), "PAPERCHAT_EMBEDDER": "fake"}
    return subprocess.run([sys.executable, "-m", "rag.cli", *map(str, argv)], env=env, capture_output=True,
                          text=True, timeout=timeout)


def _big(tmp_path):
    big = tmp_path / "big.jsonl"
    big.write_text("".join(json.dumps({"abstract": f"Paper {i} studies topic {i % 97} with method {i}. " * 4}) + "\n"
                           for i in range(3000)))
    return big


def _one_line(got: subprocess.CompletedProcess) -> str:
    assert got.returncode == 2 and "Traceback" not in got.stderr, got.stderr[-2000:]
    assert len(got.stderr.strip().splitlines()) == 1, got.stderr
    assert "free some space and run the same command again" in got.stderr
    return got.stderr


@pytest.mark.timeout(900)
def test_a_full_disk_is_one_line_and_the_library_agrees_once_space_returns(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    big = _big(tmp_path)
    with mounted("-t", "tmpfs", "-o", "size=3m", "tmpfs", str(disk)):
        _one_line(_run(disk, "ingest", big))
        # Right after: readers say so in one line, and never wait forever inside Chroma (a search "repaired" the
        # store Chroma could not load: it salvaged 256 papers, or hung in an upsert, 3 runs of 4) ...
        for argv in (["search", "topic 5"], ["ask", "what does paper 5 study?"]):
            err = _one_line(_run(disk, *argv, timeout=120))
            assert "is full" in err and "restoring" not in err, err
        if subprocess.run(["mount", "-o", "remount,size=256m", str(disk)], capture_output=True).returncode:
            return
        got = _run(disk, "ingest", big)  # ... and nothing was removed: space back, the same command finishes the job
        assert got.returncode == 0, got.stderr[-2000:]
        assert "3000 papers" in _run(disk, "stats").stdout


# One process, as `serve` is: an ingest fills the disk, a second fails the same way, space returns, a third finishes.
_SERVE_LIKE = """
import subprocess, sys
from pathlib import Path
from rag.errors import user_message
from rag.library.library import Library
from rag.settings import Settings
disk, big = Path(sys.argv[1]), Path(sys.argv[2])
lib = Library(Settings(home=disk, embedder="fake"))
for attempt in (1, 2):
    try:
        lib.ingest([big])
        print(f"attempt {attempt}: finished")
    except Exception as exc:
        print(f"attempt {attempt}: {user_message(exc) or repr(exc)}", flush=True)
subprocess.run(["mount", "-o", "remount,size=256m", str(disk)], check=True)
lib.ingest([big])
print(f"after space returned: {len(lib)} papers", flush=True)
"""


@pytest.mark.timeout(600)
def test_a_process_whose_ingest_filled_the_disk_writes_again_once_space_returns(tmp_path):
    """Chroma's bindings are left mid-transaction by a failed write: the same process's next write waited forever
    on SQLite's lock (3 of 3 runs), even after space returned (rag.library.store.client replaces them)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    big = _big(tmp_path)
    with mounted("-t", "tmpfs", "-o", "size=3m", "tmpfs", str(disk)):
        try:
            got = subprocess.run([sys.executable, "-c", _SERVE_LIKE, str(disk), str(big)], capture_output=True,
                                 text=True, timeout=300, env={**os.environ, "PAPERCHAT_EMBEDDER": "fake"})
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"the process hung after its ingest filled the disk; it had printed: {exc.stdout!r}")
        out = got.stdout.splitlines()
        assert got.returncode == 0, got.stderr[-2000:]
        assert [line.split(":")[0] for line in out] == ["attempt 1", "attempt 2", "after space returned"], out
        assert all("free some space" in line for line in out[:2]), out
        assert out[2] == "after space returned: 3000 papers"


def test_a_command_never_waits_forever_behind_a_process_stuck_inside_chroma(tmp_path, monkeypatch, capsys):
    """A process hung inside Chroma holds the store lock; other commands waited on it silently, for ever. Now
    they wait at most STORE_WAIT (900 s; 2 s here) and name the holder in one line."""
    home = tmp_path / "home"
    assert _cli(monkeypatch, home, "ingest", SEEDS / "000_e59311403e2266af.txt") == 0
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
                               "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(30)",
                               str(home / "chroma.lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setattr("rag.library.locks.STORE_WAIT", 2.0, raising=False)
        capsys.readouterr()
        assert _cli(monkeypatch, home, "stats") == 2  # (main: waited until the holder left, then answered)
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and f"by process {holder.pid}" in err, err
        assert f"kill {holder.pid}" in err and "seems stuck inside Chroma" in err, err
    finally:
        holder.kill()
        holder.wait()
    assert _cli(monkeypatch, home, "stats") == 0 and "19 papers" in capsys.readouterr().out


def test_disk_errors_read_as_one_line():
    from rag.errors import user_message

    full = OSError(errno.ENOSPC, "No space left on device")
    assert user_message(full).startswith("No space left on device — free some space")
    ro = OSError(errno.EROFS, "Read-only file system", "/srv/paperchat/chroma.lock")
    assert user_message(ro).startswith("Read-only file system: /srv/paperchat/chroma.lock — this command writes to "
                                       "PAPERCHAT_HOME, so it must be writable")
