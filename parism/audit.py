"""Audit log: one JSON line per tool call, to a file or to stderr — never to stdout.

stdout is the MCP wire, so a stray audit line there would corrupt the protocol; the writer
therefore only ever holds a file opened for append or ``sys.stderr``. Arguments and messages are
masked by the caller (the redactor) before they reach this module. A write error never fails the
call: it is reported once on stderr and the log is switched off.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from datetime import UTC, datetime
from typing import Any, TextIO

from parism.output.exact import display

STDERR_PATHS = ("", "-", "stderr")


class AuditLog:
    def __init__(self, enabled: bool, path: str) -> None:
        self.enabled = enabled
        self.path = path
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, cfg: Any) -> AuditLog:
        audit = cfg.settings.audit
        return cls(bool(audit.enabled), str(audit.path or ""))

    def record(self, *, tool: str, cmd: str, args: list[str], cwd: str, decision: str,
               reason: str | None, exit_code: int | None, duration_ms: int) -> None:
        """Append one line; ``decision`` is ``allowed`` | ``blocked`` | ``error``."""
        if not self.enabled:
            return
        line = json.dumps({
            "ts": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "tool": tool, "cmd": display(cmd), "args": [display(a) for a in args], "cwd": display(cwd),
            "decision": decision,
            "reason": reason, "exitCode": exit_code, "duration_ms": duration_ms,
        }, ensure_ascii=False)
        with self._lock:
            try:
                self._write(line)
            except OSError as exc:
                self.enabled = False
                print(f"[parism] WARNING: audit log disabled, cannot write {self.path}: {exc}", file=sys.stderr)

    def _write(self, line: str) -> None:
        if self.path in STDERR_PATHS:
            _emit(sys.stderr, line)
            return
        path = os.path.expanduser(self.path)
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            _emit(fh, line)


def _emit(stream: TextIO, line: str) -> None:
    stream.write(line + "\n")
    stream.flush()
