"""Envelope builders: the few fixed shapes of contract §5 and §7, in one place.

The engine decides *which* shape applies; this module only spells them, so the golden contract §5.4
envelope and the "no process ran" envelopes cannot drift between ``run``, ``run_paged`` and
the failure paths. ``exitCode`` is ``-1`` whenever no process ran (guard block, spawn failure,
sandbox unavailable, configuration or request error) — the shared model keeps it an int.
"""

from __future__ import annotations

import signal as _signal
from collections.abc import Mapping
from typing import Any

from parism.parsers import registry
from parism.wire.clip import ECHO_LIMIT, clip, clip_all, clip_opt
from parism.wire.envelope import DryRunResult, Envelope, Failure, GuardError, OutputField
from parism.run.executor import Capture
from parism.output.exact import display, has_lone

NO_PROCESS = -1

# exit codes that carry an answer rather than an error: stdout is still parsed (docs/envelope.md).
# A command with a parser declares them on it (``Parser.informative_exits``); these are the
# commands Parism has no parser for.
UNPARSED_INFORMATIVE_EXITS: dict[str, dict[int, str]] = {
    "egrep": {1: "no line matched"},
    "fgrep": {1: "no line matched"},
    "rg": {1: "no line matched"},
    "diff": {1: "the inputs differ"},
    "cmp": {1: "the inputs differ"},
}


def informative_exits(cmd: str) -> Mapping[int, str]:
    """The informative exits of one command: its parser's, else the table above."""
    parser = registry.get_parser(cmd)
    if parser is not None:
        return parser.informative_exits
    return UNPARSED_INFORMATIVE_EXITS.get(cmd, {})


def informative_exit(cmd: str, code: int | None) -> str | None:
    """Why this non-zero exit still carries a parseable answer (None = it does not)."""
    if code is None:
        return None
    return informative_exits(cmd).get(code)


def __getattr__(name: str) -> Any:
    """``INFORMATIVE_EXITS``: the whole table, derived from the registry (imports every parser)."""
    if name == "INFORMATIVE_EXITS":
        table = {cmd: dict(p.informative_exits) for cmd, p in registry.command_parsers() if p.informative_exits}
        return {**UNPARSED_INFORMATIVE_EXITS, **table}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def no_process(cmd: str, args: list[str], cwd: str, failure: Failure, *,
               stderr: str | None = None, guard: bool = False) -> Envelope:
    """Nothing ran. For a guard block this is exactly the contract §5.4 envelope (``guard_error`` too).
    Its echoes are shown text (``shown``): a lone surrogate of the request is never written."""
    return shown(Envelope(
        ok=False, exitCode=NO_PROCESS, cmd=cmd, args=args, cwd=cwd, duration_ms=0,
        stdout=OutputField(raw=""), stderr=OutputField(raw=failure.message if stderr is None else stderr),
        diff=None,
        guard_error=GuardError(reason=failure.reason, message=failure.message) if guard else None,
        failure=failure,
    ))


#: A failure message is a sentence plus echoes of the call: it may be longer than one echo.
MESSAGE_LIMIT = 4 * ECHO_LIMIT


def bounded(env: Envelope) -> Envelope:
    """Every echo of caller input in ``env`` cut with :func:`parism.wire.clip.clip` (``cmd``, each of
    ``args``, ``cwd``, ``failure.message``/``hint``, ``guard_error.message`` and a refusal's
    ``stderr.raw``), so a 10 MB argument comes back as 256 characters and a marker, not eight
    times whole.  Applied after masking (a cut must not split a secret before it is masked)."""
    env = shown(env)
    f, g = env.failure, env.guard_error
    update: dict[str, object] = {}
    for name, value in (("cmd", clip(env.cmd)), ("args", clip_all(env.args)), ("cwd", clip(env.cwd))):
        if value is not getattr(env, name):  # clip returns its argument when nothing is cut
            update[name] = value
    if f is not None and (len(f.message) > MESSAGE_LIMIT or len(f.hint or "") > MESSAGE_LIMIT):
        update["failure"] = f.model_copy(update={"message": clip(f.message, MESSAGE_LIMIT),
                                                 "hint": clip_opt(f.hint, MESSAGE_LIMIT)})
    if g is not None and len(g.message) > MESSAGE_LIMIT:
        update["guard_error"] = g.model_copy(update={"message": clip(g.message, MESSAGE_LIMIT)})
    if env.exitCode == NO_PROCESS and len(env.stderr.raw) > MESSAGE_LIMIT:
        update["stderr"] = env.stderr.model_copy(update={"raw": clip(env.stderr.raw, MESSAGE_LIMIT)})
    return env.model_copy(update=update) if update else env


def shown(env: Envelope) -> Envelope:
    """The echoes with an argument's bytes that are not UTF-8 (lone surrogates: a shell's argv,
    surrogateescaped) as U+FFFD, so the envelope can be written as JSON (docs/envelope.md,
    "Exact names"); the same envelope when there is none (the common case: one scan)."""
    f, g = env.failure, env.guard_error
    texts = [env.cmd, env.cwd, *env.args, env.stderr.raw, f.message if f else "", (f.hint or "") if f else "",
             g.message if g else ""]
    if not any(map(has_lone, texts)):
        return env
    update: dict[str, object] = {"cmd": display(env.cmd), "cwd": display(env.cwd),
                                 "args": [display(a) for a in env.args],
                                 "stderr": env.stderr.model_copy(update={"raw": display(env.stderr.raw)})}
    if f is not None:
        update["failure"] = f.model_copy(update={"message": display(f.message),
                                                 "hint": display(f.hint) if f.hint else f.hint})
    if g is not None:
        update["guard_error"] = g.model_copy(update={"message": display(g.message)})
    return env.model_copy(update=update)


def bounded_dry_run(res: DryRunResult) -> DryRunResult:
    """``dry_run``'s message and hint, cut like an envelope's."""
    message = clip_opt(display(res.message) if res.message else res.message, MESSAGE_LIMIT)
    hint = clip_opt(display(res.hint) if res.hint else res.hint, MESSAGE_LIMIT)
    if message == res.message and hint == res.hint:
        return res
    return res.model_copy(update={"message": message, "hint": hint})


def exit_code_of(cap: Capture) -> int:
    """Numeric exit; a signal death is reported like a shell does (128 + signal number)."""
    if cap.exit_code is not None:
        return cap.exit_code
    if cap.signal is not None:
        try:
            return 128 + int(getattr(_signal, cap.signal))
        except (AttributeError, TypeError):
            return 1
    return 1


def exec_failure(cmd: str, cap: Capture, timeout_ms: int, cap_bytes: int, stderr: str = "") -> Failure | None:
    """The ``exec`` failure of a process that ran (None when it exited 0 by itself)."""
    if cap.cancelled:
        return Failure(kind="exec", reason="cancelled",
                       message=f"'{cmd}' was cancelled by the caller; its process tree was killed")
    if cap.timed_out:
        return Failure(kind="exec", reason="timeout",
                       message=f"'{cmd}' timed out after {timeout_ms} ms; its process tree was killed")
    if cap.output_limit:
        which = "stdout" if cap.stdout_truncated else "stderr"
        return Failure(kind="exec", reason="output_limit",
                       message=f"'{cmd}' produced more than {cap_bytes} bytes on {which}; "
                               "reading stopped and the process tree was killed",
                       hint="narrow the command (filters, -n/--max-count) or use run_paged")
    said = _said(stderr)
    if cap.signal is not None:
        return Failure(kind="exec", reason="non_zero_exit", message=f"'{cmd}' was killed by {cap.signal}{said}")
    if cap.exit_code not in (0, None):
        why = informative_exit(cmd, cap.exit_code)
        msg = f"'{cmd}' exited with code {cap.exit_code}" + (f" ({why}; stdout was parsed)" if why else "")
        return Failure(kind="exec", reason="non_zero_exit", message=msg + said)
    return None


def _said(stderr: str) -> str:
    """What the command wrote on (masked) stderr, for the message (seed: "exec … message has
    stderr"), bounded like every echo; the whole of it stays in ``stderr.raw``."""
    text = " ".join(stderr.split())
    return f": {clip(text)}" if text else ""
