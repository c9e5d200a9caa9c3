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


def test_a_read_only_home_is_one_line_for_every_command(tmp_path, monkeypatch, capsys):
    home, ro = tmp_path / "home", tmp_path / "ro"
    ro.mkdir()
    assert _cli(monkeypatch, home, "ingest", SEEDS) == 0
    with mounted("--bind", str(home), str(ro)):
        if subprocess.run(["mount", "-o", "remount,ro,bind", str(ro)], capture_output=True).returncode:
            pytest.skip("cannot remount read-only here")
        capsys.readouterr()
        for argv in (["stats"], ["search", "residual streams"], ["ingest", SEEDS]):
            assert _cli(monkeypatch, ro, *argv) == 2, argv
            err = capsys.readouterr().err
            assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
            assert "Read-only file system" in err and "PAPERCHAT_HOME must be writable" in err


def _run(home, *argv, timeout: float = 240) -> subprocess.CompletedProcess:
    """A command in a process of its own, as a user runs it (a store left mid-compaction is another process's)."""
    env = {**os.environ, "PAPERCHAT_HOME": str(home), "PAPERCHAT_EMBEDDER": "fake"}
    return subprocess.run([sys.executable, "-m", "rag.cli", *map(str, argv)], env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.timeout(900)
def test_a_full_disk_is_one_line_and_the_library_agrees_once_space_returns(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    big = tmp_path / "big.jsonl"
    big.write_text("".join(json.dumps({"abstract": f"Paper {i} studies topic {i % 97} with method {i}. " * 4}) + "\n"
                           for i in range(3000)))
    with mounted("-t", "tmpfs", "-o", "size=3m", "tmpfs", str(disk)):
        got = _run(disk, "ingest", big)
        assert got.returncode == 2 and "Traceback" not in got.stderr, got.stderr[-2000:]
        assert len(got.stderr.strip().splitlines()) == 1 and "free some space and run the same command again" in got.stderr
        # (Not checked here: a search right after sometimes hangs inside Chroma's bindings, the 150 s
        # futex wait; it is still open -- docs/guarantees.md, "Disks and permissions".)
        if subprocess.run(["mount", "-o", "remount,size=256m", str(disk)], capture_output=True).returncode:
            return
        got = _run(disk, "ingest", big)  # space back: the same command finishes the job
        assert got.returncode == 0, got.stderr[-2000:]
        assert "3000 papers" in _run(disk, "stats").stdout


def test_disk_errors_read_as_one_line():
    from rag.errors import user_message

    full = OSError(errno.ENOSPC, "No space left on device")
    assert user_message(full).startswith("No space left on device — free some space")
    ro = OSError(errno.EROFS, "Read-only file system", "/srv/paperchat/chroma.lock")
    assert user_message(ro).startswith("Read-only file system: /srv/paperchat/chroma.lock — the embedded store")
