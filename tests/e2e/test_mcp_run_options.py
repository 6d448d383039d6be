"""``run``'s result parameters over MCP through the SDK client (issue 10): ``contract_version``,
``retain`` and ``evidence`` each change the answer as documented (docs/envelope.md, docs/results.md),
checked against the real directory (``os.lstat``, the bytes of the answer's own raw text) and
against the result tools that read what was kept."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from parism.output.shape.lean import expand
from tests.e2e.test_mcp_stdio import error_text, payload

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SIZES = {"alpha.txt": 5, "beta.bin": 4242, "gamma.log": 0}


@pytest.fixture
def files(workdir: Path) -> Path:
    where = workdir / "files"
    where.mkdir()
    where.chmod(0o755)
    for name, size in SIZES.items():
        (where / name).write_bytes(b"x" * size)
        (where / name).chmod(0o644)
    return where


async def run(session: ClientSession, cwd: Path, **options: Any) -> dict[str, Any]:
    result = await session.call_tool("run", {"cmd": "ls", "args": ["-la"], "cwd": str(cwd), **options})
    assert result.is_error is False, result.content
    return payload(result)


def entries(env: dict[str, Any]) -> list[dict[str, Any]]:
    return expand(env["stdout"]["parsed"])["entries"]


async def test_contract_version_stable_has_no_review_and_next_has_the_review(
        session: ClientSession, files: Path) -> None:
    plain = await run(session, files)
    stable = await run(session, files, contract_version="stable")
    assert "review" not in plain and "review" not in stable
    assert set(plain) == set(stable)

    env = await run(session, files, contract_version="next", format="json")
    review = env["review"]
    assert re.fullmatch(r"r_[0-9a-f]{24}", review["result_id"])
    assert review["content_hash"] == hashlib.sha256(env["stdout"]["raw"].encode()).hexdigest()[:16]
    assert (review["parser_id"], review["schema_version"]) == ("ls", "parism/1.1")
    assert review["source_complete"] is True and review["parse_complete"] is True
    assert review["representation_lossless"] is True and review["privacy_transform"] == "none"
    assert review["retained"] is False  # next alone shows the id; only retain keeps the result
    level = payload(await session.call_tool("describe", {}))["sandbox"]["level"]
    assert review["sandbox"]["level"] == level
    sizes = {e["name"]: e["size_bytes"] for e in env["stdout"]["parsed"]["entries"]}
    assert {n: sizes[n] for n in SIZES} == {n: os.lstat(files / n).st_size for n in SIZES}
    kept = await session.call_tool("explain_result", {"result_id": review["result_id"], "pointer": ""})
    assert payload(kept)["reason"] == "not_retained"

    lean = await run(session, files, contract_version="next")
    assert "format_adapted:lean" in lean["review"]["warnings"] and lean["stdout"]["raw"] == ""


async def test_contract_version_of_another_type_is_refused(session: ClientSession, files: Path) -> None:
    text = error_text(await session.call_tool("run", {"cmd": "ls", "cwd": str(files), "contract_version": 2}))
    assert "'contract_version'" in text and "'stable' or 'next'" in text


async def test_retain_keeps_the_result_for_the_result_tools(session: ClientSession, files: Path) -> None:
    env = await run(session, files, retain=True)
    review = env["review"]
    assert review["retained"] is True
    rows = entries(env)
    i = next(n for n, r in enumerate(rows) if r["name"] == "beta.bin")
    got = payload(await session.call_tool(
        "explain_result", {"result_id": review["result_id"], "pointer": f"/entries/{i}/size_bytes"}))
    assert got["ok"] and got["value"] == os.lstat(files / "beta.bin").st_size == 4242

    off = await run(session, files, retain=False)
    assert "review" not in off  # retain: false is the default answer


async def test_retain_pages_on_after_a_max_items_cut(session: ClientSession, workdir: Path) -> None:
    many = workdir / "many"
    many.mkdir()
    many.chmod(0o755)
    for n in range(520):  # guard.max_items is 500
        (many / f"f{n:03d}").write_text("")
    env = await run(session, many, retain=True)
    cut = env["continuation"]
    assert cut["total"] == 522 and cut["rows_left"] == 22 and cut["cursor"]
    names = [r["name"] for r in entries(env)]
    page = payload(await session.call_tool("fetch_result", {"result_id": cut["result_id"], "cursor": cut["cursor"]}))
    names += [r["name"] for r in expand(page["stdout"]["parsed"])["entries"]]
    assert "cursor" not in page["continuation"] and page["continuation"]["rows_left"] == 0
    assert sorted(names) == sorted([".", "..", *os.listdir(many)])

    without = await run(session, many)
    assert without["continuation"]["retained"] is False and "retain" in without["continuation"]["hint"]


async def test_retain_of_another_type_is_refused(session: ClientSession, files: Path) -> None:
    text = error_text(await session.call_tool("run", {"cmd": "ls", "cwd": str(files), "retain": "true"}))
    assert "'retain'" in text and "a boolean" in text


@pytest.mark.parametrize("mode", ["rows", "fields"])
async def test_evidence_points_into_the_raw_text(session: ClientSession, files: Path, mode: str) -> None:
    env = await run(session, files, retain=True, evidence=mode)
    rows = env["stdout"]["parsed"]["entries"]
    assert isinstance(rows, list) and isinstance(rows[0], dict)  # no folded table: pointers resolve
    raw = env["stdout"]["raw"].encode()
    assert raw and env["review"]["retained"] is True
    i = next(n for n, r in enumerate(rows) if r["name"] == "beta.bin")
    line = payload(await session.call_tool("explain_result", {"result_id": env["review"]["result_id"],
                                                                "pointer": f"/entries/{i}"}))
    span = line["source_spans"][0]
    assert raw[span["start"]:span["end"]].split()[-1] == b"beta.bin"
    size = payload(await session.call_tool("explain_result", {"result_id": env["review"]["result_id"],
                                                                "pointer": f"/entries/{i}/size_bytes"}))
    if mode == "fields":
        value = size["source_spans"][0]
        assert raw[value["start"]:value["end"]] == str(os.lstat(files / "beta.bin").st_size).encode()
    else:  # rows: the line only
        assert size["value"] == 4242 and size["source_kind"] == "none"


async def test_evidence_without_retain_says_it_was_not_kept(session: ClientSession, files: Path) -> None:
    env = await run(session, files, evidence="fields")
    assert env["review"]["retained"] is False
    assert any(w.startswith("evidence_not_retained") for w in env["review"]["warnings"])
    none = await run(session, files, evidence="none")
    assert "review" not in none


async def test_evidence_of_an_unknown_mode_is_refused_listing_the_modes(session: ClientSession, files: Path) -> None:
    text = error_text(await session.call_tool("run", {"cmd": "ls", "cwd": str(files), "evidence": "all"}))
    assert "'evidence'" in text and all(f"'{m}'" in text for m in ("none", "rows", "fields")), text
