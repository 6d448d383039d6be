"""``parism/approx`` within ±15 % of o200k on the shared corpus (issue #26: 1.0.0 ran ~25-55 %
above it on JSON answers, so budgets bought fewer rows than they could): the raw outputs, their
default answers and their ``format: "json"`` answers, each kind in total.  The control: 1.0.0's
rule, kept here, misses the band on the JSON answers."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
from pydantic_core import to_json

from parism.output.shape import shape
from parism.output.shape.tokens import approx
from parism.parsers import registry

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
from tokenizer import o200k  # noqa: E402

CORPUS = Path(os.environ.get("PARISM_CORPUS", ROOT.parent / "shared" / "corpus" / "jc"))
_OLD = re.compile(r"[A-Za-z0-9_]+|\S")


def approx_1_0(text: str) -> int:
    return sum(-(-len(m) // 4) for m in _OLD.findall(text))


@pytest.fixture(scope="module")
def texts() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"raw": [], "default": [], "json": []}
    for e in json.loads((CORPUS / "manifest.json").read_text())["entries"]:
        raw = (CORPUS / e["files"]["out"]).read_bytes().decode("utf-8", "replace")
        out["raw"].append(raw)
        if not e["argv"]:
            continue
        o = registry.parse(e["argv"][0], e["argv"][1:], raw, "linux")
        if o.parser is None or o.parsed is None:
            continue
        p = o.parser
        d = shape(o.parsed, requested=None, rows_key=p.rows_key, max_items=0, thresholds=None, parser=p,
                  args=e["argv"][1:], text=raw)
        j = shape(o.parsed, requested="json", rows_key=p.rows_key, max_items=0, thresholds=None)
        out["default"].append(to_json({"stdout": {"raw": raw if d.keep_raw else "", "parsed": d.parsed}}).decode())
        out["json"].append(to_json({"stdout": {"raw": raw, "parsed": j.parsed}}).decode())
    return out


def test_approx_is_within_15_percent_of_o200k_on_the_corpus(texts: dict[str, list[str]]) -> None:
    assert o200k.available() is None, o200k.available()
    assert len(texts["raw"]) >= 200 and len(texts["json"]) >= 100
    old_json = None
    for kind, items in texts.items():
        real = sum(o200k.count_many(items))
        ratio = sum(map(approx, items)) / real
        assert 0.85 <= ratio <= 1.15, (kind, round(ratio, 3))
        if kind == "json":
            old_json = sum(map(approx_1_0, items)) / real
    assert old_json is not None and old_json > 1.15, old_json  # the old rule misses: the check can fail
