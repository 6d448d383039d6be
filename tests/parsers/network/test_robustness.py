"""Robustness and invariants of the process and network parsers.

- hypothesis feeds arbitrary text and mutations of real outputs: nothing escapes, and the outcome
  is always a parsed value or a ``parse_error`` (never ``parser_exception``);
- every real output (own fixtures and the corpus) satisfies the contract §10.1 invariants: the
  pydantic schema validates (strict_schemas), rows only use ``row_fields``, no NaN/Infinity;
- 100k-line inputs parse in linear time.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parism.parsers import registry
from tests.parsers.corpus.test_corpus import CORPUS, FAMILY_OS
from tests.parsers.network.fixtures import FIXTURES

COMMANDS = ("ps", "kill", "ping", "ping6", "curl", "netstat", "lsof", "ss", "dig")
CORPUS_KEYS = ("ps", "ping", "curl-head", "netstat", "lsof", "ss", "dig")
ARGVS: list[tuple[str, list[str]]] = [
    ("ps", ["aux"]), ("ps", ["-ef"]), ("ps", ["-eo", "pid,lstart,args"]), ("ps", ["-o", "pid=,args="]),
    ("kill", ["-l"]), ("kill", ["-TERM", "1"]), ("ping", ["-c", "3", "h"]), ("curl", ["-sIL", "u"]),
    ("netstat", ["-tulpn"]), ("netstat", ["-an"]), ("lsof", ["-i"]), ("ss", ["-tulpn"]),
    ("dig", ["example.com"]), ("dig", ["+short", "example.com"]),
]


def _real_outputs() -> list[tuple[str, list[str], str, str]]:
    """(cmd, args, text, os) for every own fixture and every corpus output of these commands."""
    out = []
    for meta_path in sorted(FIXTURES.glob("*/*/*.json")):
        if meta_path.parent.name not in COMMANDS:
            continue
        argv = json.loads(meta_path.read_text())["argv"]
        argv = argv[1:] if argv[0] == "busybox" else argv
        out.append((argv[0], argv[1:], meta_path.with_suffix(".out").read_text(), meta_path.parent.parent.name))
    manifest = json.loads((CORPUS / "manifest.json").read_text())["entries"]
    for e in manifest:
        if e["command_key"] in CORPUS_KEYS and e["argv"]:
            text = (CORPUS / e["files"]["out"]).read_bytes().decode("utf-8", errors="replace")
            out.append((e["argv"][0], e["argv"][1:], text, FAMILY_OS[e["os_family"]]))
    return out


REAL = _real_outputs()


def _check_outcome(out: registry.ParseOutcome) -> None:
    if out.parse_error is None:
        assert out.parsed is not None
    else:
        assert out.parse_error.reason != "parser_exception", out.parse_error.message


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ARGVS), st.text(max_size=400))
def test_arbitrary_text(argv: tuple[str, list[str]], text: str) -> None:
    _check_outcome(registry.parse(argv[0], argv[1], text, "linux"))


_LINE_OPS = st.lists(st.tuples(st.sampled_from(["drop", "dup", "cut", "junk", "swap", "crlf"]),
                               st.integers(0, 10_000), st.text(max_size=12)), max_size=8)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(REAL))), _LINE_OPS)
def test_mutated_real_outputs(index: int, ops: list[tuple[str, int, str]]) -> None:
    cmd, args, text, os = REAL[index]
    lines = text.splitlines()[:400] or [""]
    for op, pos, junk in ops:
        i = pos % len(lines)
        if op == "drop" and len(lines) > 1:
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "cut":
            lines[i] = lines[i][: pos % (len(lines[i]) + 1)]
        elif op == "junk":
            lines[i] = lines[i][: pos % (len(lines[i]) + 1)] + junk + lines[i][pos % (len(lines[i]) + 1):]
        elif op == "swap":
            j = (i + 1) % len(lines)
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines[i] += "\r"
    _check_outcome(registry.parse(cmd, args, "\n".join(lines), os))


def _walk(value: object) -> list[float]:
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _walk(v)]
    if isinstance(value, list):
        return [x for v in value for x in _walk(v)]
    return []


@pytest.mark.parametrize("case", REAL, ids=[f"{c[0]}-{i}" for i, c in enumerate(REAL)])
def test_invariants_on_real_outputs(case: tuple[str, list[str], str, str]) -> None:
    cmd, args, text, os = case
    out = registry.parse(cmd, args, text, os, strict_schemas=True)
    if out.parse_error is not None:
        assert out.parse_error.reason == "unsupported_format", out.parse_error  # low-confidence argv only
        return
    parser = out.parser
    assert parser is not None and parser.rows_key is not None
    rows = out.parsed.get(parser.rows_key, [])
    allowed = set(parser.row_fields)
    for row in rows:
        extra = set(row) - allowed if isinstance(row, dict) else set()
        assert not extra, f"{parser.id}: fields outside row_fields: {extra}"
    assert all(math.isfinite(x) for x in _walk(out.parsed))


_BIG = {
    "ps": ("aux", "USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND\n",
           "root {i} 0.0 0.1 1000 200 ? S 10:00 0:00 /bin/prog --flag   spaced\n"),
    "netstat": ("-tuln", "Active Internet connections (only servers)\nProto Recv-Q Send-Q Local Address Foreign Address State\n",
                "tcp 0 0 10.0.{j}.1:{i} 0.0.0.0:* LISTEN\n"),
    "ss": ("-tuln", "Netid State Recv-Q Send-Q Local Address:Port Peer Address:Port\n",
           "tcp LISTEN 0 128 10.0.{j}.1:{i} 0.0.0.0:*\n"),
    "lsof": ("-i", "COMMAND   PID USER   FD   TYPE DEVICE SIZE/OFF NODE NAME\n",
             "python  {i} root    3u  IPv4  46164      0t0  TCP 127.0.0.1:80 (LISTEN)\n"),
    "ping": ("-c", "PING h (1.2.3.4) 56(84) bytes of data.\n",
             "64 bytes from 1.2.3.4: icmp_seq={i} ttl=64 time=0.1 ms\n"),
    "dig": ("+noall", "", "host{i}.example.\t60\tIN\tA\t10.0.{j}.1\n"),
    "curl": ("-sI", "HTTP/1.1 200 OK\n", "X-H{i}: v\n"),
}


def _time_parse(cmd: str, lines: int) -> float:
    flag, head, row = _BIG[cmd]
    text = head + "".join(row.format(i=i, j=i % 250) for i in range(lines))
    args = {"ping": ["-c", "100000", "h"], "dig": ["+noall", "+answer", "x"], "curl": ["-sI", "u"]}.get(cmd, [flag])
    start = time.process_time()  # this process's CPU: other processes' load does not count
    out = registry.parse(cmd, args, text, "linux")
    elapsed = time.process_time() - start
    assert out.parse_error is None, out.parse_error
    return elapsed


@pytest.mark.parametrize("cmd", sorted(_BIG))
def test_100k_lines_linear_time(cmd: str) -> None:
    """Linear, not just fast: 5x the lines may take at most ~8x the CPU time (CPU, not wall
    time, so a shared machine's load does not decide it; the absolute cap is generous)."""
    small = _time_parse(cmd, 20_000)
    big = _time_parse(cmd, 100_000)
    assert big < 60, f"{cmd}: {big:.1f}s for 100k lines"
    assert big < 8 * small + 1.0, f"{cmd}: 20k lines {small:.2f}s, 100k lines {big:.2f}s (not linear)"


def test_fixture_dirs_exist() -> None:
    assert any(Path(FIXTURES, "linux", c).is_dir() for c in COMMANDS)


def test_bug_53_no_lines_fallback() -> None:
    """§22.3 #53: unrecognised output used to come back as ``{lines: [...]}``, hiding the failure."""
    garbage = "lorem ipsum dolor\nsit amet consectetur\n"
    for cmd, args in ARGVS:
        if cmd == "kill" and "-l" not in args:
            continue  # sending a signal has free-form stdout (messages), see kill.py
        out = registry.parse(cmd, args, garbage, "linux")
        assert out.parsed is None and out.parse_error is not None, (cmd, args, out.parsed)
        assert out.parse_error.reason == "unrecognized_output", (cmd, args, out.parse_error)
