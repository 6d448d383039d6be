"""Every engine entry builds its options model: an unknown or mistyped parameter is refused with
its name before anything runs, and ``call``/``acall`` serve the same models the surfaces build."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from parism.engine import Engine, create_engine
from parism.wire.options import PagedOptions, RunOptions, build


def _refused(env: object, *words: str) -> str:
    failure = env.failure  # type: ignore[attr-defined]
    assert env.ok is False and env.exitCode == -1  # type: ignore[attr-defined]
    assert failure is not None and (failure.kind, failure.reason) == ("config", "invalid_request")
    for word in words:
        assert word in failure.message, (word, failure.message)
    return failure.message


@pytest.mark.parametrize("options, words", [
    ({"bogus": 1}, ("'bogus'", "valid: cmd, args, cwd, includeDiff, format, select")),
    ({"includeDiff": 0}, ("'includeDiff'", "a boolean")),
    ({"contract_version": "bogus"}, ("'contract_version'", "'stable'", "'next'")),
    ({"format": "yaml"}, ("'format'", "'json'", "'compact'", "'json-no-raw'")),
    ({"limit": "5"}, ("'limit'", "an integer")),
    ({"limit": True}, ("'limit'", "an integer")),
    ({"budget": {"max_tokens": 2000, "tokens": 1}}, ("'budget.tokens'", "max_tokens, tokenizer")),
    ({"where": [{"field": "name", "op": "like", "value": "a"}]}, ("'where.0.op'", "'contains'")),
])
def test_run_refuses_before_running(engine: Engine, tmp_path: Path, options: dict, words: tuple[str, ...]) -> None:
    env = engine.run("sh", ["-c", "touch ran"], cwd=str(tmp_path), **options)
    _refused(env, *words)
    assert not (tmp_path / "ran").exists()  # nothing ran
    assert env.cmd == "sh" and env.args == ["-c", "touch ran"]


def test_run_paged_refuses_projection_with_the_reason(engine: Engine, tmp_path: Path) -> None:
    for key, value in (("select", ["name"]), ("limit", 5), ("format", "compact"), ("budget", {"max_tokens": 9})):
        env = engine.run_paged("sh", ["-c", "touch ran"], cwd=str(tmp_path), **{key: value})
        _refused(env, f"unknown parameter '{key}'", "parameters of run", "valid: cmd, args, cwd, includeDiff, page")
    env = engine.run_paged("seq", ["3"], cwd=str(tmp_path), page=True)
    _refused(env, "'page'", "an integer")
    assert not (tmp_path / "ran").exists()


def test_wrong_cmd_and_args_types_are_refused_with_their_names(engine: Engine, tmp_path: Path) -> None:
    _refused(engine.run("", cwd=str(tmp_path)), "'cmd'")
    _refused(engine.run("echo", [1, 2], cwd=str(tmp_path)), "'args.0'", "a string")  # type: ignore[list-item]
    _refused(engine.run("echo", "x", cwd=str(tmp_path)), "'args'", "a list")  # type: ignore[arg-type]


def test_call_and_acall_serve_the_options_models(engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("alpha\nbeta\n")
    opts = build(RunOptions, {"cmd": "grep", "args": ["-n", "beta", "f.txt"], "cwd": str(tmp_path)})
    assert isinstance(opts, RunOptions)
    direct = engine.call(opts)
    assert direct.ok and direct.stdout.parsed == {"matches": [{"line": 2, "text": "beta"}]}
    assert anyio.run(engine.acall, opts).stdout.parsed == direct.stdout.parsed
    paged = build(PagedOptions, {"cmd": "seq", "args": ["5"], "cwd": str(tmp_path), "page": 1, "page_size": 2})
    assert isinstance(paged, PagedOptions)
    env = anyio.run(engine.acall, paged)
    assert env.stdout.raw == "3\n4\n" and env.page_info is not None and env.page_info.has_next
    with pytest.raises(TypeError, match="RunOptions, PagedOptions"):
        engine.call({"cmd": "ls"})  # type: ignore[arg-type]


def test_async_entries_refuse_like_the_sync_ones(engine: Engine, tmp_path: Path) -> None:
    env = anyio.run(lambda: engine.arun("ls", [], str(tmp_path), retain="yes"))
    _refused(env, "'retain'", "a boolean")
    env = anyio.run(lambda: engine.arun_paged("ls", [], str(tmp_path), where=[]))
    _refused(env, "'where'", "parameters of run")


def test_invalid_config_wins_over_a_bad_parameter(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[guard]\nno_such_key = 1\n")
    env = create_engine(str(cfg)).run("ls", [], cwd=str(tmp_path), bogus=1)
    assert env.failure is not None and env.failure.reason == "invalid_config"
