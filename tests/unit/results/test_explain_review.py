"""explain_result and the review block through a real engine (readonly profile, real binaries)."""

from __future__ import annotations

import os
import pwd
from pathlib import Path
from typing import Any

import pytest

import parism.results.service as service
from parism.results.store import StoredResult


def test_explain_answers_where_a_value_came_from(make_engine, tmp_path: Path) -> None:
    (tmp_path / "größe.txt").write_text("x" * 1234)
    engine = make_engine()
    env = engine.run("ls", ["-la"], cwd=str(tmp_path), retain=True, evidence="fields")
    assert env.ok and env.review is not None and env.review.retained
    rows = env.stdout.parsed["entries"]
    i = next(n for n, r in enumerate(rows) if r["name"] == "größe.txt")
    raw = env.stdout.raw.encode()
    size = engine.explain_result(env.review.result_id, f"/entries/{i}/size_bytes")
    assert size.ok and size.value == os.lstat(tmp_path / "größe.txt").st_size == 1234
    assert size.source_kind == "derived" and size.transform == "parseInt"
    span = size.source_spans[0]  # type: ignore[index]
    assert raw[span.start:span.end] == b"1234" and span.source == "stdout"
    assert raw.split(b"\n")[span.line - 1].endswith("größe.txt".encode())
    name = engine.explain_result(env.review.result_id, f"/entries/{i}/name")
    assert name.source_kind == "verbatim" and name.transform is None
    assert raw[name.source_spans[0].start:name.source_spans[0].end].decode() == "größe.txt"  # type: ignore[index]
    owner = engine.explain_result(env.review.result_id, f"/entries/{i}/owner")
    assert owner.value == pwd.getpwuid(os.getuid()).pw_name or owner.value == "nobody"
    assert 0 <= (owner.age_ms or 0) < 60_000
    computed = engine.explain_result(env.review.result_id, f"/entries/{i}/type")
    assert computed.ok and computed.source_kind == "none" and computed.warnings
    row = engine.explain_result(env.review.result_id, f"/entries/{i}")
    assert row.source_kind == "derived" and row.transform == "parsed_row"


@pytest.mark.parametrize("pointer,reason", [
    ("entries/0", "invalid_pointer"), ("/entries/~2", "invalid_pointer"),
    ("/entries/99999/name", "pointer_not_found"), ("/entries/01/name", "pointer_not_found"),
    ("/nope", "pointer_not_found"),
])
def test_explain_refuses_bad_pointers(make_engine, tmp_path: Path, pointer: str, reason: str) -> None:
    engine = make_engine()
    env = engine.run("ls", ["-la"], cwd=str(tmp_path), retain=True, evidence="fields")
    got = engine.explain_result(env.review.result_id, pointer)  # type: ignore[union-attr]
    assert not got.ok and got.reason == reason and got.message


def test_explain_root_and_escaped_pointers(make_engine, tmp_path: Path) -> None:
    engine = make_engine()
    env = engine.run("env", [], cwd=str(tmp_path), retain=True, evidence="fields")
    assert env.ok
    root = engine.explain_result(env.review.result_id, "")  # type: ignore[union-attr]
    assert root.ok and root.value == env.stdout.parsed
    lang = engine.explain_result(env.review.result_id, "#/vars/LANG")  # type: ignore[union-attr]
    assert lang.value == "C.UTF-8" and lang.source_kind == "verbatim"
    span = lang.source_spans[0]  # type: ignore[index]
    assert env.stdout.raw.encode()[span.start - 5:span.end] == b"LANG=C.UTF-8"


def test_store_misses_are_distinct_and_nothing_reruns(make_engine, tmp_path: Path) -> None:
    engine = make_engine(store={"ttl_ms": 1})
    kept = engine.run("ls", ["-la"], cwd=str(tmp_path), retain=True)
    shown = engine.run("ls", ["-la"], cwd=str(tmp_path), contract_version="next")
    import time
    time.sleep(0.01)
    got = {
        "expired": engine.explain_result(kept.review.result_id, ""),  # type: ignore[union-attr]
        "not_retained": engine.explain_result(shown.review.result_id, ""),  # type: ignore[union-attr]
        "unknown_id": engine.explain_result("r_" + "0" * 24, ""),
    }
    for reason, res in got.items():
        assert not res.ok and res.reason == reason and "nothing is re-executed" in (res.message or "")


def test_stable_calls_keep_their_shape(make_engine, tmp_path: Path) -> None:
    engine = make_engine()
    plain = engine.run("ls", ["-la"], cwd=str(tmp_path)).to_wire()
    assert "review" not in plain and "continuation" not in plain
    for opts in ({"retain": True}, {"evidence": "rows"}, {"contract_version": "next"}):
        wire = engine.run("ls", ["-la"], cwd=str(tmp_path), **opts).to_wire()
        review = wire["review"]
        assert review["result_id"].startswith("r_") and len(review["result_id"]) == 26
        assert review["retained"] is bool(opts.get("retain"))
        assert review["parser_id"] == "ls" and review["schema_version"] == "parism/1.1"
        assert review["source_complete"] is True and review["parse_complete"] is True
        assert review["privacy_transform"] in ("none", "masked") and review["sandbox"]["level"]
        assert set(plain) - {"view"} <= set(wire)  # evidence turns the lean view off


def test_evidence_turns_adaptive_compact_off(make_engine, tmp_path: Path) -> None:
    for n in range(80):
        (tmp_path / f"f{n:03d}").write_text("")
    engine = make_engine()
    adaptive = engine.run("ls", ["-la"], cwd=str(tmp_path))
    assert "schema" in adaptive.stdout.parsed["entries"]  # 80 rows: compacted by default
    ev = engine.run("ls", ["-la"], cwd=str(tmp_path), retain=True, evidence="fields")
    assert isinstance(ev.stdout.parsed["entries"], list) and ev.stdout.raw


def test_only_masked_text_is_stored(make_engine, tmp_path: Path) -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    (tmp_path / "conf.txt").write_text(f"user=me\ntoken={secret}\n")
    engine = make_engine(guard={"secrets": {"output_redaction_enabled": True}})
    env = engine.run("grep", ["-n", "token", str(tmp_path / "conf.txt")], cwd=str(tmp_path),
                     retain=True, evidence="fields")
    assert env.ok and secret not in env.stdout.raw
    item = engine.results.store.get(env.review.result_id)  # type: ignore[union-attr]
    assert isinstance(item, StoredResult)
    assert secret not in item.stdout and secret.encode() not in (item.parsed_json or b"")
    assert env.review.privacy_transform == "masked"  # type: ignore[union-attr]
    text = engine.explain_result(item.result_id, "/matches/0/text")
    span = text.source_spans[0]  # type: ignore[index]
    assert item.stdout.encode()[span.start:span.end].decode() == text.value


def test_a_run_without_evidence_never_locates(make_engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*a: Any, **k: Any) -> None:
        raise AssertionError("locate called without evidence")

    monkeypatch.setattr(service, "locate", boom)
    engine = make_engine()
    env = engine.run("ls", ["-la"], cwd=str(tmp_path), retain=True)
    assert env.ok and env.review.retained  # type: ignore[union-attr]
    miss = engine.explain_result(env.review.result_id, "/entries/0/name")  # type: ignore[union-attr]
    assert miss.ok and miss.source_kind == "none" and "evidence_not_recorded" in miss.warnings[0]  # type: ignore[index]
