"""The golden token table: what the model reads of a default answer, in o200k tokens (npm
``gpt-tokenizer`` through node, pinned in ``scripts/tokenizer``), is at most the figures below and
never more than the raw text — for the MCP text block and for ``JSON.stringify(structuredContent)``.
Full table and the live commands: ``scripts/bench_tokens.py``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import parism
from parism.server.tools import tool_result

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
from bench_tokens import mixed_dir, stringify  # noqa: E402
from bench_overhead import make_repo  # noqa: E402
from tokenizer import o200k  # noqa: E402

#: case → (most tokens of the default answer, either reader) — measured 2026-12-02: 5,080 / 1,941 / 628;
#: df -h: 240 against 333 raw (its rows are this machine's mounts: only the raw bound is portable)
GOLDEN = {"ls -la, 200 mixed entries": 5250, "git log -n 50": 2050, "ls -la 500 entries, select+limit 50": 800,
          "df -h": None}


@pytest.fixture(scope="module")
def engine_and_dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, dict[str, tuple[list[str], str, dict]]]:
    root = tmp_path_factory.mktemp("golden")
    cfg = root / "parism.toml"
    cfg.write_text(f'[guard]\nallowed_paths = ["{root}"]\n')
    cases = {
        "ls -la, 200 mixed entries": (["ls", "-la"], str(mixed_dir(root / "mixed")), {}),
        "git log -n 50": (["git", "log", "-n", "50"], str(make_repo(root)), {}),
        "ls -la 500 entries, select+limit 50": (["ls", "-la"], str(mixed_dir(root / "big", n=500, seed=11)),
                                                {"select": ["name", "size_bytes"], "limit": 50}),
        "df -h": (["df", "-h"], str(root), {}),
    }
    return parism.create_engine(str(cfg)), cases


def test_o200k_is_available() -> None:
    assert o200k.available() is None, o200k.available()  # scripts/bootstrap --test runs npm ci


@pytest.mark.parametrize("case", list(GOLDEN))
def test_default_answer_costs_at_most_the_golden_figure_and_the_raw_text(engine_and_dirs: tuple, case: str) -> None:
    engine, cases = engine_and_dirs
    argv, cwd, extra = cases[case]
    env = engine.run(argv[0], argv[1:], cwd, **extra)
    assert env.ok, env.failure
    raw = engine.run(argv[0], argv[1:], cwd, format="json").stdout.raw
    result = tool_result(env, False)
    text, structured = result["content"][0]["text"], stringify(result["structuredContent"])
    assert json.loads(text) == json.loads(structured)  # the same answer for both readers
    n_raw, n_text, n_struct = o200k.count_many([raw, text, structured])
    golden = GOLDEN[case]
    assert golden is None or max(n_text, n_struct) <= golden, (case, n_text, n_struct)
    assert max(n_text, n_struct) <= n_raw, (case, n_text, n_struct, n_raw)
