"""The child's environment: an allowlist, minus secret-looking names, plus forced settings (contract §8.7).

Why an allowlist first: a deny-list alone passes ``OPENAI_API_KEY``, ``DATABASE_URL`` or
``SSH_AUTH_SOCK`` (verified weak points of v1). The deny patterns (upper-cased substring match)
are still applied as a second filter, so an allowlisted name that looks secret is dropped too.
The forced values make every tool non-interactive, pager-free, colour-free and UTC/UTF-8, which
is what the parsers were written against. Callers cannot add variables.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

BASE_ALLOW: tuple[str, ...] = ("PATH", "HOME", "LANG", "TERM", "USER", "LOGNAME", "TZ")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
FORCED: dict[str, str] = {
    "LC_ALL": "C.UTF-8",
    "LANG": "C.UTF-8",
    "TZ": "UTC",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    # git flushes after every line when stdout is a pipe; the whole output is read at once here
    "GIT_FLUSH": "0",
    "NO_COLOR": "1",
    "TERM": "dumb",
    # tools that would otherwise reach the network or change state on a query command
    "HOMEBREW_NO_AUTO_UPDATE": "1",
    "HOMEBREW_NO_ANALYTICS": "1",
    "NPM_CONFIG_UPDATE_NOTIFIER": "false",
}


@dataclass(frozen=True)
class ChildEnv:
    env: dict[str, str]
    stripped: list[str]  # names dropped because they match a secret pattern (names only)


def looks_secret(name: str, patterns: Iterable[str]) -> bool:
    upper = name.upper()
    return any(p and p.upper() in upper for p in patterns)


def build_env(source: Mapping[str, str], *, allow: Iterable[str] = (),
              patterns: Iterable[str] = ()) -> ChildEnv:
    """Allowlist (``BASE_ALLOW`` + ``allow``) → drop secret-looking names → force ``FORCED``."""
    pats = list(patterns)
    allowed = set(BASE_ALLOW) | set(allow)
    stripped = sorted(n for n in source if looks_secret(n, pats))
    env = {n: v for n, v in source.items() if n in allowed and n not in stripped}
    env.setdefault("PATH", DEFAULT_PATH)
    env.update(FORCED)
    return ChildEnv(env=env, stripped=stripped)


def build_child_env(cfg: Any, source: Mapping[str, str]) -> ChildEnv:
    """``cfg`` is a ``LoadedConfig``; names come from ``guard.secrets.{env_allow, env_patterns}``."""
    secrets = cfg.settings.guard.secrets
    return build_env(source, allow=secrets.env_allow or (), patterns=secrets.env_patterns or ())
