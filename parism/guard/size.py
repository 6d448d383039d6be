"""How big a call may be, checked before anything else reads the argv (issue 9, item 5).

The kernel refuses an ``execve`` whose argument strings and pointers together with the
environment exceed ``ARG_MAX`` (``E2BIG``), and any single string longer than
``MAX_ARG_STRLEN`` (32 pages: 131,072 bytes with its NUL).  Found out only at spawn time, that
is a late, confusing failure — and every guard step before it would have paid for reading a
megabyte of argv.  So the guard counts once, in one pass over the bytes, and refuses
``arg_not_allowed`` first: ``guard.max_args`` arguments, ``guard.max_arg_bytes`` bytes in all
(0 = ``ARG_MAX`` less the child environment and a reserve for the forced rewrites and the
sandbox's own argv), and 131,071 bytes per argument.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from collections.abc import Mapping
from typing import TYPE_CHECKING

from parism.wire.clip import clip

if TYPE_CHECKING:
    from parism.config import LoadedConfig

MAX_ARG_STRLEN = 131072  # include/uapi/linux/binfmts.h: 32 * PAGE_SIZE, the NUL included
POINTER = 8  # each argv/envp entry also costs its pointer (fs/exec.c counts both)
RESERVE = 64 * 1024  # forced rewrites (git -c …), the program path, bwrap's and the helper's argv
_FALLBACK_ARG_MAX = 2 * 1024 * 1024


def _arg_max() -> int:
    try:
        value = os.sysconf("SC_ARG_MAX")
    except (ValueError, OSError):
        return _FALLBACK_ARG_MAX
    return value if value > 0 else _FALLBACK_ARG_MAX


def exec_cost(text: str) -> int:
    """Bytes ``execve`` charges for one string: its UTF-8 bytes, the NUL and the pointer."""
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return size + 1 + POINTER


@dataclass(frozen=True)
class ArgBudget:
    max_args: int
    max_bytes: int  # argv bytes the call may use (already min'ed with the kernel's room)
    configured_bytes: int  # guard.max_arg_bytes as configured (0 = the kernel's room)

    @classmethod
    def from_config(cls, cfg: LoadedConfig, env: Mapping[str, str]) -> ArgBudget:
        """The budget of a configuration; ``env`` is the child environment ``execve`` gets too."""
        guard = cfg.settings.guard
        room = _arg_max() - sum(exec_cost(f"{k}={v}") for k, v in env.items()) - RESERVE
        configured = guard.max_arg_bytes
        return cls(max_args=guard.max_args, max_bytes=min(room, configured) if configured else room,
                   configured_bytes=configured)


def size_problem(cmd: str, args: list[str] | tuple[str, ...], budget: ArgBudget) -> tuple[str, str] | None:
    """(message, hint) when the call is too big to check or to run; one pass, no copies."""
    if len(args) > budget.max_args:
        return (f"Too many arguments for '{clip(cmd)}': {len(args)} (guard.max_args is {budget.max_args})",
                "pass fewer arguments per call, or raise guard.max_args")
    total = exec_cost(cmd)
    for index, arg in enumerate(args):
        cost = exec_cost(arg)
        if cost - POINTER > MAX_ARG_STRLEN:
            return (f"Argument {index} '{clip(arg)}' of '{clip(cmd)}' is {cost - POINTER - 1} bytes; one "
                    f"argument may hold at most {MAX_ARG_STRLEN - 1} bytes (the kernel's MAX_ARG_STRLEN)",
                    "pass the data in a file inside the allowed paths and name the file")
        total += cost
    if total > budget.max_bytes:
        return (f"Arguments of '{clip(cmd)}' take {total} bytes; at most {budget.max_bytes} fit "
                "(guard.max_arg_bytes, or ARG_MAX less the child environment)",
                "pass fewer or shorter arguments per call")
    return None
