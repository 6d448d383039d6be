"""Exact names (docs/envelope.md, "Exact names"): bytes that are not UTF-8 reach the caller
exactly, as a display form plus ``<field>_b64``, through the real engine, the real ``ls``/``find``
/``stat``/``du``/``wc`` and the JSON text a client reads. Expected values come from the kernel
(``os.listdir(b".")``), never from Parism."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Any

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parism.config.model import DEFAULT_BLOCK_PATTERNS
from parism.engine import Engine, create_engine
from parism.guard import NAME_PATTERNS
from parism.output.exact import decode, display, exact_names


def exact(row: dict[str, Any], key: str) -> bytes:
    """The bytes a row's text field stands for, read as a client must: ``<key>_b64`` when
    present, else the text's UTF-8."""
    if f"{key}_b64" in row:
        return base64.b64decode(row[f"{key}_b64"])
    return str(row[key]).encode("utf-8")


def wire(env: Any) -> dict[str, Any]:
    """The envelope as a client reads it: its JSON text, parsed by a strict reader."""
    text = env.to_json()
    data = text.encode("utf-8") if isinstance(text, str) else text  # strict: no lone surrogate
    return json.loads(data.decode("utf-8"))


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    root = tmp_path_factory.mktemp("exact")
    cfg = root / "parism.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"allowed_paths": [str(root)]}}))
    engine = create_engine(str(cfg))
    assert engine.errors == []
    engine.root = root  # type: ignore[attr-defined]
    return engine


def _dir(engine: Engine, name: str) -> Path:
    d = engine.root / name  # type: ignore[attr-defined]
    d.mkdir()
    return d


# -- the encoding itself ----------------------------------------------------------------------

def test_decode_keeps_every_byte_and_display_is_utf8() -> None:
    text, valid = decode(b"bad\xff bad\xfe ok\xc3\xa9")
    assert not valid and os.fsencode(text) == b"bad\xff bad\xfe ok\xc3\xa9"
    assert display(text) == "bad\ufffd bad\ufffd ok\u00e9"
    assert len(display(text)) == len(text)  # one code point for one: offsets are shared


def test_exact_names_adds_siblings_only_where_bytes_were_replaced() -> None:
    value = {"entries": [{"name": "bad\udcff", "size": 1}, {"name": "ok"}], "paths": ["a", "b\udcfe"]}
    out, replaced = exact_names(value)
    assert replaced
    assert out["entries"][0] == {"name": "bad\ufffd", "name_b64": base64.b64encode(b"bad\xff").decode(), "size": 1}
    assert out["entries"][1] == {"name": "ok"}
    assert out["paths"] == ["a", "b\ufffd"] and out["paths_b64"] == [None, base64.b64encode(b"b\xfe").decode()]
    clean = {"entries": [{"name": "x"}]}
    assert exact_names(clean) == (clean, False) and exact_names(clean)[0] is clean


# -- live: two names that differ in one byte stay two names -----------------------------------

CASES = [
    ("ls", ["-l"], "entries", "name"),
    ("ls", ["-la"], "entries", "name"),
    ("ls", ["-lb"], "entries", "name"),
    ("ls", ["-1"], "entries", "name"),
    ("ls", ["-1b"], "entries", "name"),
    ("ls", ["--quoting-style=c", "-l"], "entries", "name"),
    ("du", ["-a"], "entries", "path"),
]


@pytest.mark.parametrize(("cmd", "args", "rows", "key"), CASES, ids=[" ".join([c, *a]) for c, a, _, _ in CASES])
def test_bad_ff_and_bad_fe_are_two_names(live: Engine, cmd: str, args: list[str], rows: str, key: str) -> None:
    d = _dir(live, f"two-{cmd}{''.join(args)}")
    for name in (b"bad\xff", b"bad\xfe", b"good"):
        (Path(os.fsdecode(bytes(d))) / os.fsdecode(name)).write_bytes(b"x")
    env = live.run(cmd, args, cwd=str(d), format="json", contract_version="next")
    got = wire(env)
    assert got["ok"] is True, got
    names = {os.path.basename(exact(r, key)) for r in got["stdout"]["parsed"][rows]}
    names.discard(b".")
    names.discard(b"..")
    assert names == set(os.listdir(os.fsencode(d)))
    assert got["review"]["representation_lossless"] is False


def test_find_paths_and_symlink_targets_are_exact(live: Engine) -> None:
    d = _dir(live, "find-link")
    os.symlink(os.fsdecode(b"tgt\xfe"), os.path.join(d, os.fsdecode(b"ln\xff")))
    (d / os.fsdecode(b"bad\xff")).write_bytes(b"")
    got = wire(live.run("find", [".", "-mindepth", "1"], cwd=str(d), format="json"))
    parsed = got["stdout"]["parsed"]
    paths = [base64.b64decode(b) if b else p.encode() for p, b in zip(parsed["paths"], parsed["paths_b64"])]
    assert sorted(os.path.basename(p) for p in paths) == sorted(os.listdir(os.fsencode(d)))
    rows = wire(live.run("ls", ["-l"], cwd=str(d), format="json"))["stdout"]["parsed"]["entries"]
    link = next(r for r in rows if exact(r, "name") == b"ln\xff")
    assert exact(link, "target") == os.readlink(os.fsencode(d / os.fsdecode(b"ln\xff")))


@pytest.mark.parametrize(("cmd", "args", "rows", "key"), [
    ("ls", ["-l", "--"], "entries", "name"),
    ("stat", [], "files", "file"),
    ("wc", ["-c"], "entries", "file"),
])
def test_an_argument_that_is_not_utf8_answers_in_an_envelope(live: Engine, cmd: str, args: list[str],
                                                             rows: str, key: str) -> None:
    """``ls -l -- $'bad\\xff'``: a shell passes the byte; Python's argv holds it surrogateescaped.
    The old code crashed in the redactor (re2 ``_encode``) and printed no envelope."""
    d = _dir(live, f"arg-{cmd}")
    (d / os.fsdecode(b"bad\xff")).write_bytes(b"abc")
    (d / os.fsdecode(b"bad\xfe")).write_bytes(b"abcd")
    env = live.run(cmd, [*args, os.fsdecode(b"bad\xff")], cwd=str(d), format="json")
    got = wire(env)
    assert got["ok"] is True, got
    assert got["args"][-1] == "bad\ufffd"  # the echo is shown text
    found = got["stdout"]["parsed"][rows]
    assert [exact(r, key) for r in found] == [b"bad\xff"]
    if cmd == "wc":
        assert found[0]["bytes"] == os.lstat(os.path.join(os.fsencode(d), b"bad\xff")).st_size


def test_a_lone_surrogate_that_is_no_byte_is_refused_naming_the_argument(live: Engine) -> None:
    env = live.run("ls", ["-l", "a\ud800"], cwd=str(live.root))  # type: ignore[attr-defined]
    got = wire(env)
    assert got["failure"]["reason"] == "invalid_request" and "args.1" in got["failure"]["message"]


def test_a_working_directory_that_is_not_utf8(live: Engine) -> None:
    d = Path(os.fsdecode(os.path.join(os.fsencode(live.root), b"dir\xff")))  # type: ignore[attr-defined]
    d.mkdir()
    (d / "f").write_text("")
    got = wire(live.run("ls", ["-l"], cwd=str(d), format="json"))
    assert got["ok"] is True and got["cwd"].endswith("dir\ufffd")
    assert [r["name"] for r in got["stdout"]["parsed"]["entries"]] == ["f"]


# -- hypothesis: any byte name round-trips ------------------------------------------------------

KEPT_PATTERNS = [p for p in DEFAULT_BLOCK_PATTERNS if p not in NAME_PATTERNS]
NAME_BYTES = st.binary(min_size=1, max_size=12).filter(
    lambda b: b"/" not in b and b"\0" not in b and b not in (b".", b".."))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=NAME_BYTES)
def test_any_byte_name_round_trips_through_the_envelope(live: Engine, name: bytes) -> None:
    """JSON text → ``json.loads`` → the name's bytes (``_b64`` or UTF-8) equal ``os.listdir``'s,
    for a long listing under ``-b`` (exact escapes) and for ``stat`` on the name as argument."""
    d = os.path.join(os.fsencode(live.root), b"hyp-" + base64.b16encode(name))  # type: ignore[attr-defined]
    if not os.path.exists(d):
        os.mkdir(d)
        with open(os.path.join(d, name), "wb"):
            pass
    [on_disk] = os.listdir(d)
    got = wire(live.run("ls", ["-lab"], cwd=os.fsdecode(d), format="json"))
    names = [exact(r, "name") for r in got["stdout"]["parsed"]["entries"]]
    assert sorted(n for n in names if n not in (b".", b"..")) == [on_disk]
    got = wire(live.run("stat", ["--", os.fsdecode(name)], cwd=os.fsdecode(d), format="json"))
    if any(p.encode() in name for p in KEPT_PATTERNS):  # refused in a path too (docs/guard.md)
        assert got["failure"]["reason"] == "injection_pattern", got
        return
    if name.startswith(b"~"):  # the guard expands ~ in a path value (paths.py) although no shell does
        assert got["failure"]["reason"] == "path_not_allowed", got
        return
    assert got["ok"] is True, got
    assert [exact(r, "file") for r in got["stdout"]["parsed"]["files"]] == [on_disk]


def test_parism_parse_keeps_the_bytes_of_saved_output(tmp_path: Path) -> None:
    """``ls -l | parism parse -- ls -l``: stdin bytes that are not UTF-8 give exact names too."""
    import subprocess
    import sys

    d = tmp_path / "saved"
    d.mkdir()
    for name in (b"bad\xff", b"bad\xfe"):
        open(os.path.join(os.fsencode(d), name), "wb").close()
    listing = subprocess.run(["ls", "-l"], cwd=d, capture_output=True, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"},
                             check=True).stdout
    out = subprocess.run([sys.executable, "-m", "parism", "parse", "--", "ls", "-l"], input=listing,
                         capture_output=True, env={**os.environ, "HOME": str(tmp_path)}, check=False)
    got = json.loads(out.stdout.decode("utf-8"))
    assert {exact(r, "name") for r in got["stdout"]["parsed"]["entries"]} == set(os.listdir(os.fsencode(d)))


def test_without_the_sandbox_the_argument_is_the_byte_too(tmp_path: Path) -> None:
    """The direct launcher (``sandbox.mode = "off"``) passes the argv as bytes (``os.fsencode``)."""
    tmp_path.chmod(0o755)
    cfg = tmp_path / "parism.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"allowed_paths": [str(tmp_path)]}, "sandbox": {"mode": "off"}}))
    engine = create_engine(str(cfg))
    assert engine.errors == []
    (tmp_path / os.fsdecode(b"bad\xff")).write_bytes(b"abc")
    (tmp_path / os.fsdecode(b"bad\xfe")).write_bytes(b"")
    got = wire(engine.run("wc", ["-c", os.fsdecode(b"bad\xff")], cwd=str(tmp_path), format="json"))
    assert got["ok"] is True, got
    assert [(exact(r, "file"), r["bytes"]) for r in got["stdout"]["parsed"]["entries"]] == [(b"bad\xff", 3)]
