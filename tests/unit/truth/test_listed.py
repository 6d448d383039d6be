"""A name list cannot show a newline whose two parts keep the C order (``a\\nb`` alone, or beside
``a`` and ``b``): after a run the host says whether each listed name is real
(``parism/output/listed.py``). Live: the real ``ls`` through the engine, checked against
``os.listdir(b".")``; the armed trap is the same output parsed as saved text, where no host can
be asked — it invents the entries."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import tomli_w

from parism.engine import Engine, create_engine


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    tmp_path.chmod(0o755)
    cfg = tmp_path / "parism.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"allowed_paths": [str(tmp_path)]}}))
    e = create_engine(str(cfg))
    assert e.errors == []
    return e


def _run(engine: Engine, cwd: Path, *args: str) -> dict:
    return json.loads(engine.run("ls", list(args), cwd=str(cwd), format="json").to_json())


@pytest.mark.parametrize("names", [["a\nb"], ["a", "b", "a\nb"], ["x", "a\nb", "c"]], ids=["alone", "beside", "between"])
@pytest.mark.parametrize("args", [[], ["-1"], ["-a"], ["-r"]], ids=["plain", "-1", "-a", "-r"])
def test_a_split_name_is_never_an_entry(engine: Engine, tmp_path: Path, names: list[str], args: list[str]) -> None:
    d = tmp_path / "d"
    d.mkdir()
    d.chmod(0o755)
    for n in names:
        (d / n).write_text("")
    env = _run(engine, d, *args)
    parsed = env["stdout"]["parsed"]
    assert env["ok"] is True and parsed["entries"] == [], parsed
    assert parsed["unresolved"] and "-b" in parsed["hint_args"]
    # the armed trap: the same text as saved output (no host to ask) does invent entries
    # when both parts keep the order (alone, beside); "between" breaks it and the parser sees that alone
    saved = json.loads(engine.parse_output("ls", args, env["stdout"]["raw"]).to_json())["stdout"]["parsed"]
    shown = sorted(r["name"] for r in saved["entries"] if r["name"] not in (".", ".."))
    if "c" not in names and args != ["-r"]:  # reversed, the parts break the order: seen alone too
        assert shown and shown != sorted(names), saved
    # -b reads every name exactly
    exact = _run(engine, d, *args, "-b")["stdout"]["parsed"]["entries"]
    assert {r["name"].encode() for r in exact} - {b".", b".."} == set(os.listdir(os.fsencode(d)))


def test_real_names_are_kept(engine: Engine, tmp_path: Path) -> None:
    d = tmp_path / "ok"
    (d / "sub").mkdir(parents=True)
    for n in ("a", "b c", "  lead", "sub/inner"):
        (d / n).write_text("")
    d.chmod(0o755)
    got = _run(engine, d)["stdout"]["parsed"]
    assert {r["name"] for r in got["entries"]} == set(os.listdir(d)) and "time_zone" not in got
    rec = _run(engine, d, "-R")["stdout"]["parsed"]["entries"]
    assert {(r.get("directory"), r["name"]) for r in rec} == {(".", "a"), (".", "b c"), (".", "  lead"),
                                                               (".", "sub"), ("./sub", "inner")}
