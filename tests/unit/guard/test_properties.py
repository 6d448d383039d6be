"""Properties of ``check`` over generated argv: it never raises, and what it lets through keeps
the invariants the later stages rely on."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parism.config import LoadedConfig, load_config
from parism.guard import check

ALPHABET = st.sampled_from(list("ab./-~;|&<>$`()\n\0 =@*") + ["..", "/etc", "--", "-r", "-f", "-e", "-exec"])
ARG = st.lists(ALPHABET, min_size=0, max_size=6).map("".join)
ARGS = st.lists(ARG, max_size=6)
PATTERNS = [";", "$(", "`", "&&", "||", ">", ">>", "<", "|"]
_CFG: dict[str, LoadedConfig] = {}


def _cfg(tmp: Path) -> LoadedConfig:
    if "cfg" not in _CFG:
        (tmp / "proj" / "a").mkdir(parents=True, exist_ok=True)
        _CFG["cfg"] = load_config(cwd=str(tmp / "proj"), environ={"HOME": str(tmp)})
    return _CFG["cfg"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cmd=st.sampled_from(["ls", "cat", "wc", "head", "du", "stat"]), args=ARGS)
def test_path_commands_never_pass_shell_syntax_or_outside_paths(tmp_path_factory, cmd: str, args: list[str]) -> None:
    cfg = _cfg(tmp_path_factory.getbasetemp())
    d = check(cmd, args, None, cfg)
    if not d.allowed:
        assert d.failure is not None and d.failure.kind == "guard" and d.exec_args == []
        return
    assert d.exec_args == args
    names = {p.text for p in d.tokens.positionals} if d.tokens is not None else set()
    for arg in args:
        # in a file operand (typed path) '>', '>>' and newline are characters of the name (no
        # shell runs: docs/guard.md, "Injection patterns"); every other pattern, and NUL, never pass
        shell = [p for p in PATTERNS if p not in (">", ">>")] if arg in names else PATTERNS
        assert not any(p in arg for p in shell), arg
        assert "\0" not in arg
        assert arg in names or "\n" not in arg, arg
        if not arg.startswith("-"):  # a file operand: lexically inside the project
            target = os.path.normpath(os.path.join(cfg.cwd, os.path.expanduser(arg)))
            assert os.path.commonpath([target, cfg.cwd]) == cfg.cwd, arg


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cmd=st.sampled_from(["grep", "find", "git", "curl", "echo", "env", "date", "kubectl", "docker"]), args=ARGS)
def test_check_never_raises_and_refusals_are_complete(tmp_path_factory, cmd: str, args: list[str]) -> None:
    cfg = _cfg(tmp_path_factory.getbasetemp())
    d = check(cmd, args, None, cfg)
    assert d.allowed is (d.failure is None)
    if d.allowed:
        assert all("\0" not in a for a in args)
        assert d.cwd == cfg.cwd
    else:
        assert d.failure is not None
        assert d.failure.reason in {"command_not_allowed", "path_not_allowed", "injection_pattern", "arg_not_allowed"}
        assert d.failure.message
