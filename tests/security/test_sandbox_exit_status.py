"""Exit codes and signals are the same inside and outside the sandbox (issue 11 item 3).

Every case runs one real command through two real engines — sandbox ``required`` and
``off`` — and compares ``exitCode``/``signal``/``failure.reason``. The expected value is not
taken from Parism: it comes from running the same argv with ``subprocess`` (the kernel's wait
status) or, for the stops Parism itself makes (timeout, output cap), from the rule the
executor applies to a direct child (SIGTERM to the group, SIGKILL after the grace).
Both namespace classes run: with a pid namespace (``isolated``) and without (``host_procs``,
where the helper alone ends the tree).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomli_w

from parism.engine import Engine, create_engine

ENGINE_PROFILE = Path(__file__).parents[1] / "unit" / "engine" / "profile.toml"
SH = "/bin/sh"
# Signals whose default action ends the process (the others stop, continue or are ignored).
NOT_FATAL = {signal.SIGCHLD, signal.SIGCONT, signal.SIGSTOP, signal.SIGTSTP, signal.SIGTTIN,
             signal.SIGTTOU, signal.SIGURG, signal.SIGWINCH}
FATAL = [s for s in signal.Signals if s not in NOT_FATAL and s <= 31] + [signal.SIGRTMIN, signal.SIGRTMAX]
EXIT_CODES = [0, 1, 2, 42, 126, 127, 128, 129, 143, 255, 256, 300]  # 256 and 300 wrap
TIMEOUT_MS = 600  # the commands stopped by the timeout never end by themselves
CAP_BYTES = 4096


def _profile(tmp: Path, namespace: str) -> Path:
    """The engine tests' profile with ``sh`` moved to ``namespace``."""
    text = ENGINE_PROFILE.read_text()
    anchor = '[commands.sh]\nflags = { "-c" = "data" }\npositionals = "any"\n'
    assert anchor in text
    path = tmp / f"profile-{namespace}.toml"
    path.write_text(text.replace(anchor, anchor + f'sandbox = {{ namespace = "{namespace}" }}\n'))
    return path


def _engine(tmp: Path, mode: str, namespace: str, timeout_ms: int) -> Engine:
    work = tmp / "work"
    work.mkdir(exist_ok=True)
    os.chmod(tmp, 0o755)
    os.chmod(work, 0o755)
    doc = {"guard": {"profile": str(_profile(tmp, namespace)), "allowed_paths": [str(work)],
                     "timeout_ms": timeout_ms, "max_output_bytes": CAP_BYTES},
           "sandbox": {"mode": mode}}
    cfg = tmp / f"parism-{mode}-{namespace}-{timeout_ms}.toml"
    cfg.write_text(tomli_w.dumps(doc))
    engine = create_engine(str(cfg))
    assert engine.errors == []
    return engine


class Pair:
    """A sandboxed and a direct engine with the same configuration, and the workspace."""

    def __init__(self, tmp: Path, namespace: str, timeout_ms: int) -> None:
        self.on = _engine(tmp, "required", namespace, timeout_ms)
        self.off = _engine(tmp, "off", namespace, timeout_ms)
        self.cwd = str(tmp / "work")

    def both(self, script: str) -> tuple[tuple, tuple]:
        """(sandboxed, direct) outcome of ``sh -c script``: exitCode, signal, failure reason."""
        time.sleep(0.05)  # let the pool refill: the case is about status, not cold starts
        got = []
        for engine in (self.on, self.off):
            env = engine.run("sh", ["-c", script], cwd=self.cwd, contract_version="next")
            got.append((env.exitCode, env.signal, env.failure.reason if env.failure else None))
            if engine is self.on:
                assert env.review is not None and env.review.sandbox is not None
                assert env.review.sandbox.level == "full", env.review.sandbox
        return got[0], got[1]

    def close(self) -> None:
        self.on.close()
        self.off.close()


@pytest.fixture(scope="module", params=["isolated", "host_procs"])
def namespace(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="module")
def pair(namespace: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """Engines with a long timeout: the commands end by themselves."""
    p = Pair(tmp_path_factory.mktemp(f"exit-{namespace}"), namespace, 20_000)
    yield p
    p.close()


@pytest.fixture(scope="module")
def short(namespace: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pair]:
    """Engines whose timeout Parism enforces in these tests."""
    p = Pair(tmp_path_factory.mktemp(f"timeout-{namespace}"), namespace, TIMEOUT_MS)
    yield p
    p.close()


def _truth(script: str) -> tuple[int, str | None]:
    """What the kernel reports for the same argv run directly (no Parism)."""
    code = subprocess.run([SH, "-c", script], stdin=subprocess.DEVNULL, capture_output=True).returncode
    if code < 0:
        return 128 - code, signal.Signals(-code).name
    return code, None


@pytest.mark.parametrize("code", EXIT_CODES)
def test_exit_code_passes_through(pair: Pair, code: int) -> None:
    script = f"exit {code}"
    truth = _truth(script)
    inside, outside = pair.both(script)
    assert inside == outside
    assert inside[:2] == truth
    assert inside[2] == (None if truth[0] == 0 else "non_zero_exit")  # sh has no parser: no failure (raw)


@pytest.mark.parametrize("sig", FATAL, ids=lambda s: signal.Signals(s).name)
def test_death_by_each_signal_is_reported_as_such(pair: Pair, sig: signal.Signals) -> None:
    script = f"kill -{int(sig)} $$"
    truth = _truth(script)
    assert truth == (128 + int(sig), signal.Signals(sig).name)  # the armed control: it does die of it
    inside, outside = pair.both(script)
    assert inside == outside == (*truth, "non_zero_exit")


@pytest.mark.parametrize(("script", "expected"), [
    ("sleep 30", (143, "SIGTERM")),  # dies of the SIGTERM the stop sends
    ("trap '' TERM; sleep 30", (137, "SIGKILL")),  # ignores it: SIGKILL after the grace
    ("trap 'exit 7' TERM; sleep 30 & wait", (7, None)),  # the code it chose on SIGTERM
], ids=["sigterm", "sigkill", "trapped"])
def test_timeout_reports_how_the_command_ended(short: Pair, script: str, expected: tuple) -> None:
    inside, outside = short.both(script)
    assert inside == outside == (*expected, "timeout")


@pytest.mark.parametrize(("script", "expected"), [
    ("yes", (143, "SIGTERM")),
    ("trap '' TERM; yes", (137, "SIGKILL")),  # yes inherits the ignored SIGTERM
], ids=["sigterm", "sigkill"])
def test_output_cap_reports_how_the_command_ended(pair: Pair, script: str, expected: tuple) -> None:
    inside, outside = pair.both(script)
    assert inside == outside == (*expected, "output_limit")
