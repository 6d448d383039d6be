"""Secret-looking argument values: ``--token=…``, ``--password …``, ``-u user:pass``, ``-p…``.

Why a rule set apart from the output patterns: a value passed after a flag has no shape of its
own (``--password hunter2``); only its position tells. The rules work on the argument list, so
they can mask the *next* argument after a bare flag, and they give the literal values back so a
caller can also mask them wherever they are echoed (guard messages, hints, the audit log).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from parism.output.redact.engine import compile_re2
from parism.output.exact import display

# The flag name (without leading dashes) ends in a word that names a secret.
_SECRET_FLAG = compile_re2(
    r"(?i)^(?:[a-z0-9]+[\-_])*(?:token|password|passwd|pass|passphrase|secret|api[\-_]?key"
    r"|apikey|auth|access[\-_]?key|private[\-_]?key|client[\-_]?secret|credentials?)$"
)
# What a name matching _SECRET_FLAG ends with, case-folded (RE2's (?i) also folds the Kelvin
# sign to k and the long s to s; casefold() does too). A name without one of these endings cannot
# match, so the common flag (`-la`, `--oneline`) costs no RE2 call.
_SECRET_ENDINGS = ("token", "pass", "passwd", "password", "passphrase", "secret", "key", "auth",
                   "credential", "credentials")
# `-u user:password` / `--user user:password` (curl, wget and friends).
_USER_FLAGS = frozenset({"-u", "--user", "--proxy-user"})
# Clients that take the password glued to `-p` (`-pSECRET`); elsewhere `-p` means other things.
_ATTACHED_PASSWORD_COMMANDS = frozenset(
    {"mysql", "mysqldump", "mysqladmin", "mysqlshow", "mysqlimport", "mariadb", "mariadb-dump"}
)


@dataclass(frozen=True)
class ArgSecret:
    """The secret part ``args[index][start:end]`` of one argument."""

    index: int
    start: int
    end: int


def _is_secret_flag(flag: str) -> bool:
    name = flag.lstrip("-")
    return (
        flag.startswith("-")
        and bool(name)
        and not name.lower().startswith("no-")
        and name.casefold().endswith(_SECRET_ENDINGS)
        and _SECRET_FLAG.search(display(name)) is not None
    )


def argv_secrets(args: Sequence[str], cmd: str | None = None) -> list[ArgSecret]:
    """Where the flag-positioned secret values are in ``args`` (shape-based tokens excluded)."""
    found: list[ArgSecret] = []
    attached_p = cmd is not None and cmd.rsplit("/", 1)[-1] in _ATTACHED_PASSWORD_COMMANDS
    for i, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        prev = args[i - 1] if i > 0 else ""
        if eq and value and _is_secret_flag(flag):
            found.append(ArgSecret(i, len(flag) + 1, len(arg)))
        elif prev and "=" not in prev and _is_secret_flag(prev) and not arg.startswith("--"):
            found.append(ArgSecret(i, 0, len(arg)))
        elif flag in _USER_FLAGS and eq and ":" in value:
            found.append(ArgSecret(i, len(flag) + 1 + value.index(":") + 1, len(arg)))
        elif prev in _USER_FLAGS and ":" in arg:
            found.append(ArgSecret(i, arg.index(":") + 1, len(arg)))
        elif attached_p and arg.startswith("-p") and len(arg) > 2 and not arg.startswith("--"):
            found.append(ArgSecret(i, 2, len(arg)))
    return [s for s in found if s.end > s.start]
