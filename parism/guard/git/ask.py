"""How the guard asks git about a repository: with the call's own identity, in its own view.

The repository is the agent's: its configuration can include any file (``/var/lib/dpkg/status``,
a root-only file, a FIFO, ``/proc/...``).  Asked on the host as the server, git would read what
the call's git never could (and fail where the call's git would not), so the guard's answer
would describe another repository than the one the call works on.  So every question runs
where the command will: ``ScriptAsker`` runs ``_ask.py`` (git's questions plus the checks of
every configuration file and include they read) through the executor, in a sandbox planned by
the sandbox stage with the call's mounts and uid/gid (``Sandbox.question_plan``: read-only, no
network) — or directly, when the call's command itself runs unsandboxed (``sandbox.mode = "off"``
or no usable sandbox), as the server that will run it.

Every answer is kept whole (exit code, output, git's message, the script's ``problem``): the
caller decides, and any failure refuses (``repo.read_repo``).
"""

from __future__ import annotations

import base64
import marshal
import os
import shutil
from importlib.util import MAGIC_NUMBER
import sys
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from parism.run.executor import ExecSpec, execute

IN_PROCESS = "parism:python"  # run/sandbox/_helper.py: the helper runs the source in a fork
QUESTION_TIMEOUT_S = 5.0  # each git question
SCRIPT_TIMEOUT_S = 20.0  # the whole batch (pre-check included)
ANSWER_CAP = 4 * 1024 * 1024  # bytes of one git answer (config listing, index listing)


@dataclass(frozen=True)
class Job:
    kind: str  # dirs | list | index (what _ask.py checks after git answered)
    args: tuple[str, ...]
    where: str


@dataclass(frozen=True)
class Answer:
    code: int | None  # git's exit code (None: it did not run, or did not end)
    out: bytes
    err: str  # git's own message (bounded)
    problem: str | None = None  # why this answer may not be used (names the file)
    holder: str | None = None  # dirs: the directory whose .git leads to git's answer
    origins: tuple[str, ...] = field(default_factory=tuple)  # list: every file git read (real paths)


class Asker(Protocol):
    #: what the answers depend on besides the files: the identity and the view (cache key)
    key: Hashable

    def ask(self, jobs: list[Job]) -> list[Answer] | str:
        """One answer per job, in order; a string: why there are none (refused)."""


@lru_cache(maxsize=1)
def script_source() -> str:
    return Path(__file__).with_name("_ask.py").read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def script_code() -> str:
    """The script compiled once per process, for the sandbox's helper (``<magic>:<marshal>``,
    base64): it runs it when its interpreter has the same bytecode magic, else compiles the
    source itself."""
    compiled = compile(script_source(), "<parism:python>", "exec")
    return f"{MAGIC_NUMBER.hex()}:{base64.b64encode(marshal.dumps(compiled)).decode('ascii')}"


LauncherFor = Callable[[ExecSpec], Any]  # the executor's launcher for one run (None: direct)


class ScriptAsker:
    """Run ``_ask.py`` with ``python`` in ``cwd`` — by the launcher ``launch`` makes for
    the run (a sandbox of the call's question plan), or directly when it makes none."""

    def __init__(self, *, key: Hashable, env: Mapping[str, str], python: str, cwd: str,
                 launch: LauncherFor | None = None, flags: list[str] | None = None) -> None:
        self.key = key
        self.env = dict(env)
        self.python = python
        self.cwd = cwd
        self.launch = launch
        self.flags = list(flags or [])

    def ask(self, jobs: list[Job]) -> list[Answer] | str:
        git = shutil.which("git", path=self.env.get("PATH"))
        if git is None:
            return "git is not installed on the command's PATH"
        args = [git, str(QUESTION_TIMEOUT_S), str(ANSWER_CAP), str(len(self.flags)), *self.flags, str(len(jobs))]
        for job in jobs:
            args += [job.kind, job.where, str(len(job.args)), *job.args]
        # in a sandbox, a fork of its waiting helper runs the script (no interpreter start: the
        # helper's IN_PROCESS); directly, python3 -I -S -c
        head = [IN_PROCESS, script_source(), script_code()] if self.launch is not None else \
            [self.python, "-I", "-S", "-c", script_source()]
        run = ExecSpec(argv=[*head, *args], cwd=self.cwd,
                       env=self.env, timeout_s=SCRIPT_TIMEOUT_S,
                       max_stdout=len(jobs) * (ANSWER_CAP + 64 * 1024) + 64 * 1024, max_stderr=64 * 1024)
        launcher = self.launch(run) if self.launch is not None else None
        if isinstance(launcher, str):
            return launcher
        try:
            cap = execute(run, launcher)
        except OSError as exc:  # the sandbox could not be started
            return f"git's questions could not be asked in the call's sandbox ({exc})"
        if cap.spawn_error or cap.timed_out or cap.output_limit or cap.exit_code != 0:
            why = (cap.spawn_error.message if cap.spawn_error else "timed out" if cap.timed_out
                   else "answered too much" if cap.output_limit else f"exit status {cap.exit_code}")
            tail = cap.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] if cap.stderr else []
            return f"git's questions could not be asked ({why}{': ' + tail[0][:300] if tail else ''})"
        return parse_answers(cap.stdout, len(jobs))


FIELDS = 6  # code, stdout, stderr, problem, holder, origins (guard/git/_ask.py)


def parse_answers(raw: bytes, count: int) -> list[Answer] | str:
    """The script's length-prefixed fields, checked (anything else is a refusal)."""
    fields: list[bytes] = []
    pos = 0
    try:
        while pos < len(raw):
            colon = raw.index(b":", pos, pos + 21)
            size = int(raw[pos:colon])
            end = colon + 1 + size
            if size < 0 or end > len(raw):
                raise ValueError("a field runs past the end")
            fields.append(raw[colon + 1:end])
            pos = end
        if len(fields) != count * FIELDS:
            raise ValueError(f"{len(fields)} fields for {count} questions")
        out = []
        for i in range(count):
            code, stdout, err, problem, holder, origins = fields[i * FIELDS:(i + 1) * FIELDS]
            out.append(Answer(int(code) if code else None, stdout, _text(err), _text(problem) or None,
                              _text(holder) or None, tuple(_text(o) for o in origins.split(b"\0")) if origins else ()))
        return out
    except ValueError as exc:
        return f"git's questions gave an unreadable answer ({exc})"


def _text(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def direct_asker(env: Mapping[str, str], flags: list[str]) -> ScriptAsker:
    """The questions asked as this process, on the host: only for calls whose command runs so
    (no sandbox), where this *is* the call's identity and view."""
    from parism.run.sandbox.probe import find_python  # the sandbox's own choice of system python

    return ScriptAsker(key=("direct", os.geteuid(), os.getegid()), env=env,
                       python=find_python() or sys.executable, cwd="/", flags=flags)
