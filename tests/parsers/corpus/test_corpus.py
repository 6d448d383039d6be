"""Every high/medium-confidence case of the real-output corpus must parse and agree with jc.

The corpus lives beside the repository (``../shared/corpus/jc``, or ``$PARISM_CORPUS``). Its
absence is a failure, never a skip. The only way out for a case is an entry in
``exceptions.toml`` (next to this file) saying why, checked by hand.
"""

from __future__ import annotations

import collections
import importlib
import json
import os
import tomllib
from pathlib import Path

import pytest

from parism.parsers import registry

HERE = Path(__file__).parent
ROOT = Path(__file__).resolve().parents[3]
CORPUS = Path(os.environ.get("PARISM_CORPUS", ROOT.parent / "shared" / "corpus" / "jc"))
FAMILY_OS = {"linux": "linux", "macos": "macos", "freebsd": "freebsd", "windows": "windows", "other": "linux"}


def _manifest() -> list[dict]:
    path = CORPUS / "manifest.json"
    if not path.exists():
        return []
    return json.loads(path.read_text())["entries"]


ENTRIES = [e for e in _manifest() if e["argv_confidence"] in ("high", "medium") and e["expected"] == "json"]
EXCEPTIONS: dict[str, dict] = tomllib.loads((HERE / "exceptions.toml").read_text()).get("cases", {})


def run_case(entry: dict) -> list[str]:
    """Parse one corpus case and compare with jc; return the problems (empty = pass)."""
    raw = (CORPUS / entry["files"]["out"]).read_bytes().decode("utf-8", errors="replace")
    expected = json.loads((CORPUS / entry["files"]["jc_json"]).read_text())
    argv = entry["argv"]
    outcome = registry.parse(argv[0], argv[1:], raw, FAMILY_OS[entry["os_family"]])
    if outcome.parse_error is not None:
        pe = outcome.parse_error
        return [f"parse_error {pe.reason}: {pe.message}"]
    if outcome.not_found:
        return ["parser_not_found"]
    try:
        mapper = importlib.import_module(f"tests.parsers.corpus.mappers.{entry['command_key'].replace('-', '_')}")
    except ModuleNotFoundError:
        return [f"no mapper for {entry['command_key']}"]
    return mapper.check(outcome.parsed, expected, entry)


def test_corpus_present():
    assert CORPUS.is_dir(), f"corpus missing at {CORPUS} (set PARISM_CORPUS)"
    assert len(_manifest()) >= 200, "corpus manifest is missing or truncated"


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_corpus_case(entry):
    problems = run_case(entry)
    if entry["id"] in EXCEPTIONS:
        pytest.xfail(EXCEPTIONS[entry["id"]]["why"])
    assert not problems, "\n".join(problems[:20])


def test_corpus_pass_rate_per_family(capsys):
    """Exceptions count as failures here: each OS family must reach 95 % on its own."""
    assert ENTRIES, "no corpus cases"
    seen: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for entry in ENTRIES:
        fam = entry["os_family"]
        seen[fam][1] += 1
        if not run_case(entry):
            seen[fam][0] += 1
    with capsys.disabled():
        print()
        for fam, (ok, total) in sorted(seen.items()):
            print(f"corpus {fam:8s} {ok:4d}/{total:<4d} {100 * ok / total:5.1f} %")
    low = {f: f"{100 * ok / t:.1f}%" for f, (ok, t) in seen.items() if ok / t < 0.95}
    assert not low, f"families under 95 %: {low}"
