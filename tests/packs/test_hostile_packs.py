"""Hostile parser packs, each contained in its worker (real bubblewrap) and reported; the
engine keeps serving. Expected facts come from the host (files, sockets, processes), not from
the pack's own answers."""

from __future__ import annotations

import os
import socket
import textwrap
import threading
import time
from pathlib import Path

import psutil
import pytest

from parism.packs.worker import Limits, PackFailure, Worker

HEAD = "from parism.packs.types import ParserPack\n"


def make_pack(root: Path, name: str, body: str) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "parser.py").write_text(HEAD + textwrap.dedent(body) + f"\nPACK = ParserPack(name={name!r}, parse=parse)\n")
    return d


@pytest.fixture
def packs(tmp_path: Path) -> Path:
    return tmp_path


def call(d: Path, raw: str = "x\n", limits: Limits | None = None) -> dict | PackFailure:
    w = Worker(str(d), limits or Limits(time_ms=1500))
    try:
        w.start()
        try:
            return w.call({"op": "parse", "raw": raw, "args": []})
        except PackFailure as exc:
            return exc
    finally:
        w.stop()


def test_endless_loop_is_cut_at_the_time_limit(packs: Path) -> None:
    d = make_pack(packs, "spin", "def parse(raw, args, ctx):\n    while True:\n        pass\n")
    t0 = time.monotonic()
    r = call(d, limits=Limits(time_ms=500))
    assert isinstance(r, PackFailure) and r.reason == "parser_exception"
    assert "longer than 500 ms" in r.message
    assert time.monotonic() - t0 < 5


def test_one_gigabyte_allocation_hits_the_memory_limit(packs: Path) -> None:
    d = make_pack(packs, "hog", "def parse(raw, args, ctx):\n    b = bytearray(1 << 30)\n    return {'n': len(b)}\n")
    r = call(d)
    assert isinstance(r, PackFailure), r
    assert "memory" in r.message


def test_segfault_is_a_crash_report(packs: Path) -> None:
    d = make_pack(packs, "segv", "import ctypes\ndef parse(raw, args, ctx):\n    ctypes.string_at(0)\n")
    r = call(d)
    assert isinstance(r, PackFailure) and "crashed" in r.message, r


@pytest.mark.parametrize("value", ["lambda: 1", "{1, 2}", "float('nan')", "object()"])
def test_values_that_are_not_plain_json_are_refused(packs: Path, value: str) -> None:
    d = make_pack(packs, "bad", f"def parse(raw, args, ctx):\n    return {{'v': {value}}}\n")
    r = call(d)
    assert isinstance(r, dict) and r["ok"] is False and r["reason"] == "parser_exception", r
    assert "not plain JSON" in r["message"]


def test_secrets_of_the_host_are_not_there(packs: Path, tmp_path: Path) -> None:
    home_ssh = Path(os.path.expanduser("~/.ssh"))
    control = Path("/etc/shadow").read_bytes()  # the armed trap: the file exists and we can read it
    assert control
    d = make_pack(packs, "snoop", f"""
        import os
        def parse(raw, args, ctx):
            out = {{}}
            for p in ("/etc/shadow", "/etc/passwd", {str(home_ssh)!r}, {str(Path.home())!r}):
                try:
                    out[p] = os.listdir(p) if os.path.isdir(p) else open(p).read()[:10]
                except OSError as exc:
                    out[p] = type(exc).__name__
            return out
        """)
    r = call(d)
    assert r["ok"] is True, r
    import sys

    home = str(Path.home())
    # the home directory may exist only as the path to a bound interpreter (e.g. ~/.pyenv)
    needed = {Path(p).relative_to(home).parts[0] for p in (sys.base_prefix, sys.prefix) if p.startswith(home + "/")}
    for path, seen in r["value"].items():
        if path == home and isinstance(seen, list):
            assert set(seen) <= needed, seen
        else:
            assert seen in ("FileNotFoundError", "PermissionError"), (path, seen)


def test_no_network_from_a_pack(packs: Path) -> None:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    hits: list[int] = []
    srv.settimeout(3)

    def accept() -> None:
        try:
            c, _ = srv.accept()
            hits.append(1)
            c.close()
        except OSError:
            pass

    control = socket.create_connection(("127.0.0.1", port), timeout=2)  # armed trap: reachable
    th = threading.Thread(target=accept)
    th.start()
    th.join()
    control.close()
    assert hits == [1]
    srv.settimeout(2)
    th = threading.Thread(target=accept)
    th.start()
    d = make_pack(packs, "net", f"""
        import socket
        def parse(raw, args, ctx):
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=1)
                return {{"connected": True}}
            except OSError as exc:
                return {{"connected": False, "error": type(exc).__name__}}
        """)
    r = call(d)
    th.join()
    srv.close()
    assert r["ok"] is True and r["value"]["connected"] is False, r
    assert hits == [1]  # only the control connection arrived


def test_printing_cannot_break_the_protocol(packs: Path) -> None:
    d = make_pack(packs, "chatty", "import sys\ndef parse(raw, args, ctx):\n    print('noise'); sys.stdout.write('{\"ok\": true}\\n')\n"
                                   "    return {'fine': True}\n")
    r = call(d)
    assert r == {"ok": True, "value": {"fine": True}}


def test_writing_to_the_protocol_stream_is_reported(packs: Path) -> None:
    d = make_pack(packs, "forger", "import os\ndef parse(raw, args, ctx):\n"
                                   "    os.write(3, b'garbage\\n')\n    return {}\n")
    r = call(d)
    assert isinstance(r, PackFailure) and "protocol" in r.message, r


def test_a_forked_child_does_not_outlive_the_call(packs: Path) -> None:
    marker = f"parism-pack-child-{os.getpid()}-{time.monotonic_ns()}"
    d = make_pack(packs, "forker", f"""
        import os, time
        def parse(raw, args, ctx):
            if os.fork() == 0:
                os.execvp("sleep", ["sleep", "300", {marker!r}] [:2])
            return {{}}
        """)
    w = Worker(str(d), Limits(time_ms=2000))
    try:
        w.start()
        assert w.call({"op": "parse", "raw": "", "args": []})["ok"] is True
        time.sleep(0.3)
        live = [p for p in psutil.process_iter(["cmdline"]) if (p.info["cmdline"] or [])[:2] == ["sleep", "300"]
                and p.ppid() != 0 and _below(p, w.proc.pid)]
        assert live == []
    finally:
        w.stop()


def _below(proc: psutil.Process, root: int) -> bool:
    try:
        return any(a.pid == root for a in proc.parents())
    except psutil.NoSuchProcess:
        return False


def test_a_missing_import_is_a_load_error(packs: Path) -> None:
    d = packs / "missing"
    d.mkdir()
    (d / "parser.py").write_text("import no_such_module_here\n")
    w = Worker(str(d), Limits())
    with pytest.raises(PackFailure) as exc:
        w.start()
    assert exc.value.reason == "pack_invalid" and "no_such_module_here" in exc.value.message


def test_backoff_grows_and_a_success_resets_it(packs: Path) -> None:
    d = make_pack(packs, "flaky", """
        def parse(raw, args, ctx):
            if raw == "spin":
                while True:
                    pass
            return {"ok": raw}
        """)
    w = Worker(str(d), Limits(time_ms=300))
    try:
        w.start()
        delays = []
        for _ in range(3):
            with pytest.raises(PackFailure):
                w.call({"op": "parse", "raw": "spin", "args": []})
            t_fail = time.monotonic()
            delays.append(w.cool_until - t_fail)
            with pytest.raises(PackFailure) as fast:  # fails fast while cooling down
                w.call({"op": "parse", "raw": "ok", "args": []})
            assert "back-off" in fast.value.message
            time.sleep(max(0.0, w.cool_until - time.monotonic()) + 0.05)
            if len(delays) < 3:
                continue
        assert [round(x) for x in delays] == [2, 4, 8], delays
        for want, got in zip((2, 4, 8), delays):
            assert abs(got - want) <= 0.2 * want
        assert w.call({"op": "parse", "raw": "ok", "args": []})["value"] == {"ok": "ok"}
        assert w.failures == 0
        with pytest.raises(PackFailure):
            w.call({"op": "parse", "raw": "spin", "args": []})
        assert abs((w.cool_until - time.monotonic()) - 2) <= 0.4  # back to the first step
    finally:
        w.stop()


def test_backoff_is_capped_at_thirty_seconds() -> None:
    from parism.packs import worker as mod

    w = Worker("/nonexistent", Limits())
    for n in range(1, 9):
        w.failures = n - 1
        w._fail()
        expected = min(30.0, 2.0 * 2 ** (n - 1))
        assert abs((w.cool_until - time.monotonic()) - expected) < 0.1
    assert mod.BACKOFF_MAX_S == 30.0
