"""Envelope builders: the few fixed shapes of contract §5 and §7, in one place.

The engine decides *which* shape applies; this module only spells them, so the golden §5.4
envelope and the "no process ran" envelopes cannot drift between ``run``, ``run_paged`` and
the failure paths. ``exitCode`` is ``-1`` whenever no process ran (guard block, spawn failure,
sandbox unavailable, configuration or request error) — the shared model keeps it an int.
"""

from __future__ import annotations

import signal as _signal
from parism.envelope import Envelope, Failure, GuardError, OutputField
from parism.executor import Capture

NO_PROCESS = -1

# exit codes that carry an answer rather than an error: stdout is still parsed (docs/envelope.md)
INFORMATIVE_EXITS: dict[str, dict[int, str]] = {
    "grep": {1: "no line matched"},
    "egrep": {1: "no line matched"},
    "fgrep": {1: "no line matched"},
    "rg": {1: "no line matched"},
    "diff": {1: "the inputs differ"},
    "cmp": {1: "the inputs differ"},
    "systemctl": {3: "the unit is not active"},
}


def informative_exit(cmd: str, code: int | None) -> str | None:
    """Why this non-zero exit still carries a parseable answer (None = it does not)."""
    if code is None:
        return None
    return INFORMATIVE_EXITS.get(cmd, {}).get(code)


def no_process(cmd: str, args: list[str], cwd: str, failure: Failure, *,
               stderr: str | None = None, guard: bool = False) -> Envelope:
    """Nothing ran. For a guard block this is exactly the §5.4 envelope (``guard_error`` too)."""
    return Envelope(
        ok=False, exitCode=NO_PROCESS, cmd=cmd, args=args, cwd=cwd, duration_ms=0,
        stdout=OutputField(raw=""), stderr=OutputField(raw=failure.message if stderr is None else stderr),
        diff=None,
        guard_error=GuardError(reason=failure.reason, message=failure.message) if guard else None,
        failure=failure,
    )


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


def exec_failure(cmd: str, cap: Capture, timeout_ms: int, cap_bytes: int) -> Failure | None:
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
    if cap.signal is not None:
        return Failure(kind="exec", reason="non_zero_exit", message=f"'{cmd}' was killed by {cap.signal}")
    if cap.exit_code not in (0, None):
        why = informative_exit(cmd, cap.exit_code)
        msg = f"'{cmd}' exited with code {cap.exit_code}" + (f" ({why}; stdout was parsed)" if why else "")
        return Failure(kind="exec", reason="non_zero_exit", message=msg)
    return None
