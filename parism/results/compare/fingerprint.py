"""What a retained result was an observation *of* (contract §15.1), stored with it for compare.

Privacy rules: the argv is kept as a keyed hash (HMAC under a per-process key, so a short
secret typed as an argument cannot be recovered by hashing guesses) plus its masked echo;
environment variables are recorded by name only; every value shown is already masked.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import platform
import secrets
import sys
from collections.abc import Mapping, Sequence
from typing import Any

_KEY = secrets.token_bytes(32)
LOCALE_NAMES = ("LC_ALL", "LANG", "LC_CTYPE", "LC_TIME", "LC_NUMERIC", "TZ")


def argv_hash(cmd: str, args: Sequence[str]) -> str:
    data = "\0".join([cmd, *args]).encode("utf-8", "surrogatepass")
    return hmac.new(_KEY, data, hashlib.sha256).hexdigest()[:16]


def repository_of(path: str) -> str | None:
    """The real path of the git work tree holding ``path`` (found by reading the file system
    for ``.git``, nothing executed), or None."""
    cur = os.path.realpath(path)
    while True:
        if os.path.lexists(os.path.join(cur, ".git")):
            return cur
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def _flag_value(args: Sequence[str], *names: str) -> str | None:
    for i, a in enumerate(args):
        for n in names:
            if a == n and i + 1 < len(args):
                return args[i + 1]
            if n.startswith("--") and a.startswith(n + "="):
                return a[len(n) + 1:]
    return None


def context_of(cmd: str, masked_args: Sequence[str], cwd_real: str) -> dict[str, Any]:
    """The user context a result depends on beyond argv and cwd (kubectl's context/namespace,
    git's repository)."""
    if cmd == "kubectl":
        return {"kube_context": _flag_value(masked_args, "--context") or "(current)",
                "namespace": _flag_value(masked_args, "-n", "--namespace") or "(default)"}
    if cmd == "git":
        return {"repository": repository_of(cwd_real)}
    return {}


def fingerprint(*, cmd: str, args: Sequence[str], masked_args: Sequence[str], cwd: str, policy_hash: str,
                parser_id: str | None, schema_version: str | None, content_hash: str,
                child_env: Mapping[str, str], os_name: str) -> dict[str, Any]:
    cwd_real = os.path.realpath(cwd) if cwd else ""
    return {
        "cmd": cmd,
        "argv_hash": argv_hash(cmd, args),
        "argv_masked": [a if len(a) <= 40 else a[:37] + "..." for a in masked_args],
        "cwd_real": cwd_real,
        "policy_hash": policy_hash,
        "parser_id": parser_id,
        "schema_version": schema_version,
        "content_hash": content_hash,
        "platform": {"os": os_name, "arch": platform.machine(), "python": "%d.%d" % sys.version_info[:2]},
        "tools": {},
        "locale": [f"{n}={child_env[n]}" for n in LOCALE_NAMES if n in child_env],
        "context": context_of(cmd, masked_args, cwd_real),
        "observation": {"env_names": sorted(child_env)},
    }
