"""Robustness of every registered parser: arbitrary text and mutated real fixtures never crash.

For each parser (and each subcommand of a dispatching parser) with an argv from its own
``examples``: the outcome is parsed or a ``parse_error`` with a known reason, never
``parser_exception`` (a parser bug the registry had to catch) and never an exception escaping
``registry.parse``.  A hang guard fails any single parse that runs longer than 5 s (a runaway
regex), by raising an exception the registry does not catch.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parism.parsers import registry

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
CORPUS = Path(os.environ.get("PARISM_CORPUS", ROOT.parent / "shared" / "corpus" / "jc"))
KNOWN = {"unsupported_format", "unrecognized_output", "schema_violation"}
HANG_S = 5
SETTINGS = settings(deadline=None, max_examples=25, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class Hang(BaseException):
    """Raised by the alarm; a BaseException so that the registry's ``except Exception`` lets it out."""


@contextmanager
def hang_guard(seconds: int = HANG_S) -> Iterator[None]:
    def _alarm(signum: int, frame: object) -> None:
        raise Hang(f"a parse ran longer than {seconds} s")

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _targets() -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """(command, argv after the command, OS families) for every parser and subcommand."""
    out = []
    for cmd in registry.available():
        try:
            parser = registry.get_parser(cmd)
        except Exception as exc:  # an import error is a failure of that parser, reported below
            out.append((cmd, ("<import error>", repr(exc)[:200]), ()))
            continue
        if parser is None:
            continue
        if parser.subcommands:
            for key, sub in sorted(parser.subcommands.items()):
                example = sub.examples[0] if sub.examples else ()
                out.append((cmd, tuple(key.split()) + tuple(example), tuple(sorted(sub.os))))
        else:
            example = parser.examples[0] if parser.examples else ()
            out.append((cmd, tuple(example), tuple(sorted(parser.os))))
    return out


TARGETS = _targets()
IDS = [" ".join((c,) + a)[:60] for c, a, _ in TARGETS]


def _samples(cmd: str) -> list[str]:
    """Real outputs for ``cmd``: the project's fixtures and the corpus (first 8 KB of each)."""
    paths = sorted(FIXTURES.glob(f"*/{cmd}*/*.out"))
    manifest = CORPUS / "manifest.json"
    if manifest.exists():
        entries = json.loads(manifest.read_text())["entries"]
        paths += [CORPUS / e["files"]["out"] for e in entries if e["argv"] and e["argv"][0] == cmd][:4]
    return [p.read_bytes()[:8192].decode("utf-8", "replace") for p in paths[:8]] or ["x\n"]


def _check(cmd: str, args: tuple[str, ...], os_name: str, text: str) -> None:
    if args[:1] == ("<import error>",):
        pytest.fail(f"{cmd}: parser module does not import: {args[1]}")
    with hang_guard():
        out = registry.parse(cmd, list(args), text, os_name)
    if out.parse_error is not None:
        assert out.parse_error.reason != "parser_exception", out.parse_error.message
        assert out.parse_error.reason in KNOWN, out.parse_error.reason
    else:
        json.dumps(out.parsed)  # the result must be plain JSON data


@st.composite
def mutated(draw: st.DrawFn, samples: list[str]) -> str:
    """A real output, damaged the way captures get damaged."""
    text = draw(st.sampled_from(samples))
    kind = draw(st.sampled_from(["truncate", "crlf", "garbage", "huge", "bytes", "drop", "dup"]))
    lines = text.split("\n")
    if kind == "truncate":
        return text[: draw(st.integers(0, len(text)))]
    if kind == "crlf":
        return text.replace("\n", "\r\n")
    if kind == "garbage":
        at = draw(st.integers(0, len(lines)))
        return "\n".join(lines[:at] + [draw(st.text(max_size=80))] + lines[at:])
    if kind == "huge":
        at = draw(st.integers(0, len(lines)))
        unit = draw(st.sampled_from([" ", "a", "9", "-", "│   ", "| ", "a -> ", "\t", "%"]))
        return "\n".join(lines[:at] + [unit * (20000 // len(unit))] + lines[at:])
    if kind == "bytes":
        raw = bytearray(text.encode("utf-8"))
        for _ in range(draw(st.integers(1, 8))):
            if raw:
                raw[draw(st.integers(0, len(raw) - 1))] = draw(st.integers(0x80, 0xFF))
        return raw.decode("utf-8", "replace")
    if kind == "drop":
        at = draw(st.integers(0, max(len(lines) - 1, 0)))
        return "\n".join(lines[:at] + lines[at + 1:])
    at = draw(st.integers(0, max(len(lines) - 1, 0)))
    return "\n".join(lines[: at + 1] + lines[at:])


@pytest.mark.parametrize(("cmd", "args", "oses"), TARGETS, ids=IDS)
def test_arbitrary_text(cmd: str, args: tuple[str, ...], oses: tuple[str, ...]) -> None:
    @SETTINGS
    @given(text=st.text(max_size=2000), os_name=st.sampled_from(oses or ("linux",)))
    def run(text: str, os_name: str) -> None:
        _check(cmd, args, os_name, text)

    run()


@pytest.mark.parametrize(("cmd", "args", "oses"), TARGETS, ids=IDS)
def test_mutated_fixtures(cmd: str, args: tuple[str, ...], oses: tuple[str, ...]) -> None:
    samples = _samples(cmd)

    @SETTINGS
    @given(text=mutated(samples), os_name=st.sampled_from(oses or ("linux",)))
    def run(text: str, os_name: str) -> None:
        _check(cmd, args, os_name, text)

    run()


def test_every_parser_is_covered() -> None:
    assert len({c for c, _, _ in TARGETS}) == len(registry.available()) >= 6


def test_hang_guard_fires() -> None:
    import time

    with pytest.raises(Hang):
        with hang_guard(1):
            time.sleep(3)
