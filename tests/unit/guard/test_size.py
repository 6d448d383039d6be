"""Oversize calls are refused first, at once, with ``arg_not_allowed`` — and the limits are the
kernel's: the per-argument cap and the byte budget are checked against real ``execve`` calls
(one byte more and the kernel says ``E2BIG``), not against Parism's own numbers."""

from __future__ import annotations

import errno
import os
import subprocess
import time
from pathlib import Path

import pytest

from parism.run.childenv import build_child_env
from parism.wire.clip import ECHO_LIMIT
from parism.config import LoadedConfig, load_config
from parism.guard import Setup, check
from parism.guard.size import MAX_ARG_STRLEN, exec_cost


def _load(tmp_path: Path, global_toml: str = "") -> LoadedConfig:
    home = tmp_path / "home"
    (home / ".parism").mkdir(parents=True, exist_ok=True)
    (home / ".parism" / "config.toml").write_text(global_toml)
    cfg = load_config(cwd=str(tmp_path), environ={"HOME": str(home)})
    assert cfg.errors == [], cfg.errors
    return cfg


def _execs(args: list[str], env: dict[str, str]) -> bool:
    """Whether the kernel accepts this argv with this environment (``/bin/true`` runs it)."""
    try:
        subprocess.run(["/bin/true", *args], env=env, check=True, timeout=30)
    except OSError as exc:
        assert exc.errno == errno.E2BIG, exc
        return False
    return True


def test_per_argument_cap_is_the_kernels(tmp_path: Path) -> None:
    cfg = _load(tmp_path)
    longest = "a" * (MAX_ARG_STRLEN - 1)
    assert _execs([longest], {}) and not _execs([longest + "a"], {})  # reality: MAX_ARG_STRLEN
    assert check("echo", [longest], None, cfg).allowed
    d = check("echo", [longest + "a"], None, cfg)
    assert d.failure is not None and d.failure.reason == "arg_not_allowed"
    assert "131071" in d.failure.message
    assert len(d.failure.message) < 2 * ECHO_LIMIT + 300  # the argument is echoed clipped
    multibyte = "é" * (MAX_ARG_STRLEN // 2)  # 131,072 UTF-8 bytes in 65,536 characters
    assert check("echo", [multibyte], None, cfg).failure is not None


def test_byte_budget_fits_the_kernel_with_the_child_environment(tmp_path: Path) -> None:
    cfg = _load(tmp_path)
    budget = Setup(cfg).arg_budget
    env = build_child_env(cfg, os.environ).env
    chunk = "b" * 100_000
    per = exec_cost(chunk)
    fits = [chunk] * ((budget.max_bytes - exec_cost("echo")) // per)
    assert check("echo", fits, None, cfg).allowed
    assert _execs(fits, env)  # what the guard lets through, the kernel runs
    over = fits + [chunk] * 2
    d = check("echo", over, None, cfg)
    assert d.failure is not None and d.failure.reason == "arg_not_allowed"
    assert "guard.max_arg_bytes" in d.failure.message
    too_big = [chunk] * (os.sysconf("SC_ARG_MAX") // per + 1)
    assert not _execs(too_big, env)  # control: this would have been a late E2BIG
    assert check("echo", too_big, None, cfg).failure is not None


def test_max_args_and_configured_bytes(tmp_path: Path) -> None:
    cfg = _load(tmp_path, "[guard]\nmax_args = 10\nmax_arg_bytes = 1000\n")
    assert check("echo", ["x"] * 10, None, cfg).allowed
    d = check("echo", ["x"] * 11, None, cfg)
    assert d.failure is not None and d.failure.reason == "arg_not_allowed"
    assert "guard.max_args is 10" in d.failure.message
    d = check("echo", ["y" * 200] * 5, None, cfg)
    assert d.failure is not None and "at most 1000" in d.failure.message
    effective = cfg.effective()
    assert effective["guard.max_args"]["value"] == 10 and effective["guard.max_arg_bytes"]["value"] == 1000


@pytest.mark.parametrize("cmd", ["rm", "ls", "git"])
def test_size_is_refused_before_every_other_step(tmp_path: Path, cmd: str) -> None:
    """Not command_not_allowed (rm), not path_not_allowed (/etc), not injection (;)."""
    cfg = _load(tmp_path)
    d = check(cmd, ["/etc/passwd;", "z" * MAX_ARG_STRLEN], "/", cfg)
    assert d.failure is not None and d.failure.reason == "arg_not_allowed", d.failure


def test_oversize_refusal_is_immediate(tmp_path: Path) -> None:
    """300,000 arguments and a 20 MB argv: refused without tokenising (generous bound: the
    point is that nothing scans the argv more than once)."""
    cfg = _load(tmp_path)
    setup = Setup(cfg)
    started = time.perf_counter()
    many = check("echo", ["x"] * 300_000, None, cfg, setup)
    huge = check("echo", ["w" * 100_000] * 200, None, cfg, setup)
    assert time.perf_counter() - started < 5
    assert many.failure is not None and "guard.max_args" in many.failure.message
    assert huge.failure is not None and huge.failure.reason == "arg_not_allowed"
    assert many.tokens is None and huge.tokens is None  # refused before the tokenizer ran


def test_project_layer_may_only_lower_the_limits(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "parism.toml").write_text("[guard]\nmax_args = 100000\n")
    cfg = load_config(cwd=str(tmp_path), environ={"HOME": str(home)})
    assert any(p.key == "guard.max_args" for p in cfg.errors), cfg.errors
    (tmp_path / "parism.toml").write_text("[guard]\nmax_args = 100\nmax_arg_bytes = 5000\n")
    cfg = load_config(cwd=str(tmp_path), environ={"HOME": str(home)})
    assert cfg.errors == [] and cfg.settings.guard.max_args == 100
