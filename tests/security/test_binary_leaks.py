"""Secrets inside output that is not text are masked before its bytes leave (issue 27).

A stream of NUL, random or invalid-UTF-8 bytes now travels as base64 (``raw_base64``,
parism/output/redact/binary.py), masked on the bytes read as Latin-1 with RE2 searching the bytes
themselves. The attack: the leak corpus's secrets embedded in such floods — between NULs, next to
bytes >= 0x80, across the executor's 64 KiB read boundary, and in a stream cut by the output cap —
read with ``cat`` through the real engine and its sandbox. The check decodes the base64 and
looks for any 8-character piece of any secret in it and in every envelope string.

Armed-trap controls in the same test: the file read without Parism holds every secret (so the
check can see one), and the answer's bytes are the file's bytes with each secret replaced by the
marker (so the base64 is the real output, not an empty or mangled one).
"""

from __future__ import annotations

import base64
import os
import random
from pathlib import Path

import pytest

import parism
from tests.security.test_leaks import envelope_strings
from tests.unit.redact.leak_corpus import LEAKS as CORPUS
from tests.unit.redact.leak_corpus import leaked_pieces

#: The corpus but the Kubernetes Secret data values and block scalars: those are masked only
#: inside a whole ``kind: Secret`` document (tests/security/test_leaks.py runs them so), and one
#: line of one out of its document is not masked in text either.
LEAKS = tuple(leak for leak in CORPUS if not leak.family.startswith("kube_"))

CHUNK = 64 * 1024
MARKER = "[REDACTED]"
CONFIG = """
[guard]
allowed_commands = ["cat"]
allowed_paths = ["{ws}"]
max_output_bytes = {cap}
[guard.command_policies.cat]
positionals = "any"
[guard.secrets]
output_redaction_enabled = true
"""


def others(env) -> list[str]:  # noqa: ANN001
    """Every envelope string but the base64 itself (checked decoded: encoded, the public armour
    line of a masked key, ``-----BEGIN``, reads like the start of a base64-encoded key)."""
    encoded = env.stdout.raw_base64
    return [s for s in envelope_strings(env) if s != encoded and (not encoded or encoded not in s)] + [
        env.model_copy(update={"stdout": env.stdout.model_copy(update={"raw_base64": "-"})}).to_json()]


def fillers(kind: str, size: int, rng: random.Random) -> bytes:
    if kind == "nul":
        return bytes(size)
    if kind == "random":
        return rng.randbytes(size)
    return bytes(rng.randrange(0x80, 0x100) for _ in range(size))  # invalid UTF-8 throughout


def blob(kind: str) -> tuple[bytes, list[bytes]]:
    """(the file, its filler runs): every leak's text between filler runs, one placed across
    the 64 KiB read boundary."""
    rng = random.Random(kind)
    out, pads = bytearray(), []
    for i, leak in enumerate(LEAKS):
        pad = fillers(kind, (CHUNK - len(out) - 20) if i == 3 else rng.randrange(8, 300), rng)
        pads.append(pad)
        out += pad + b"\n" + leak.text.encode() + b"\n"
    pads.append(fillers(kind, 4096, rng))
    return bytes(out + pads[-1]), pads


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    root = tmp_path_factory.mktemp("binleaks")
    ws = root / "ws"
    ws.mkdir()
    ws.chmod(0o755)
    cfg = root / "c.toml"
    cfg.write_text(CONFIG.format(ws=ws, cap=4 << 20))
    engine = parism.create_engine(str(cfg))
    assert engine.errors == []
    yield engine, ws
    engine.close()


@pytest.mark.parametrize("kind", ["nul", "random", "invalid_utf8"])
def test_secrets_in_binary_output_are_masked(engine, kind: str) -> None:  # noqa: ANN001
    eng, ws = engine
    data, pads = blob(kind)
    path = ws / f"{kind}.bin"
    path.write_bytes(data)
    path.chmod(0o644)
    control = leaked_pieces([path.read_bytes().decode("latin-1")], LEAKS)
    assert len(control) == len(LEAKS), "control: the file itself must hold every secret"
    env = eng.run("cat", [str(path)], cwd=str(ws), contract_version="next")
    assert env.ok is True, env.failure
    assert env.stdout.raw == "" and env.stdout.raw_base64 is not None
    assert env.review is not None and "stdout_binary" in env.review.warnings
    got = base64.b64decode(env.stdout.raw_base64, validate=True)
    assert leaked_pieces([got.decode("latin-1"), *others(env)], LEAKS) == []
    at = 0
    for pad in pads:  # every filler run comes back, in order: the bytes are the file's own
        found = got.find(b"\n" if not pad else pad, at)
        assert found >= 0, f"a filler run of {len(pad)} bytes is missing after offset {at}"
        at = found + len(pad)
    assert got.count(MARKER.encode()) >= len(LEAKS)


def test_a_secret_in_a_capped_binary_stream_is_masked(engine, tmp_path: Path) -> None:  # noqa: ANN001
    """The cap cuts inside a token: its start is masked too (the text path's ``truncated``)."""
    eng, ws = engine
    leak = next(leak for leak in LEAKS if leak.family == "github_classic")
    cap = 4 << 20
    data = bytes(cap - 12) + leak.secret.encode() + bytes(4096)  # the cap falls 12 characters in
    path = ws / "capped.bin"
    path.write_bytes(data)
    path.chmod(0o644)
    assert leaked_pieces([data[:cap].decode("latin-1")], [leak]), "control: the capped bytes hold a piece"
    env = eng.run("cat", [str(path)], cwd=str(ws))
    assert env.failure is not None and env.failure.reason == "output_limit"
    got = base64.b64decode(env.stdout.raw_base64 or "", validate=True)
    assert len(got) >= cap - 12 and got[:cap - 12] == bytes(cap - 12)
    assert leaked_pieces([got.decode("latin-1"), *others(env)], [leak]) == []
    os.unlink(path)
