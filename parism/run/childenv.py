"""The child's environment: an allowlist, minus secret-looking names, plus forced settings (contract §8.7).

Why an allowlist first: a deny-list alone passes ``OPENAI_API_KEY``, ``DATABASE_URL`` or
``SSH_AUTH_SOCK`` (verified weak points of v1). The deny patterns (upper-cased substring match)
are still applied as a second filter, so an allowlisted name that looks secret is dropped too.
The forced values make every tool non-interactive, pager-free, colour-free and UTF-8, which
is what the parsers were written against. Callers cannot add variables.

``TZ`` is the caller's (the server's environment), not forced: a listing's times are then the
caller's local times, and the parse gives each its offset (``parism/output/zone.py``;
docs/envelope.md, "Time rule"). It must name a zone of the system's time zone database, which
the commands read (``/usr/share/zoneinfo``); anything else — a POSIX rule string, a path, an
unknown name — is a configuration error naming it (:func:`child_zone`), never a silent UTC.
Unset or empty: ``UTC``.
"""

from __future__ import annotations

import os
import zoneinfo
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from parism.config import LoadedConfig

BASE_ALLOW: tuple[str, ...] = ("PATH", "HOME", "LANG", "TERM", "USER", "LOGNAME", "TZ")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
FORCED: dict[str, str] = {
    "LC_ALL": "C.UTF-8",
    "LANG": "C.UTF-8",
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


#: Where glibc (and so every command) reads a zone named by ``TZ``.
ZONE_DIR = "/usr/share/zoneinfo"
DEFAULT_ZONE = "UTC"


@dataclass(frozen=True)
class ChildEnv:
    env: dict[str, str]
    stripped: list[str]  # names dropped because they match a secret pattern (names only)
    zone: str = DEFAULT_ZONE  # the zone the commands print local times in (``TZ``)
    zone_problem: str | None = None  # the caller's TZ names no zone: a configuration error


def child_zone(source: Mapping[str, str]) -> tuple[str, str | None]:
    """(zone, problem): the caller's ``TZ`` (``:Zone`` as glibc allows; a path such as
    ``:/etc/localtime`` only when it resolves into the database, and then as that zone's name),
    checked against the system database the commands read and against ``zoneinfo`` (which the
    parse uses)."""
    raw = source.get("TZ", "")
    if not raw:
        return DEFAULT_ZONE, None
    name = raw[1:] if raw.startswith(":") else raw
    problem = (f"TZ: unknown time zone {raw!r} (the caller's TZ must be a zone name of "
               f"{ZONE_DIR}, such as Asia/Kathmandu or Etc/GMT+12; unset means UTC)")
    if name.startswith("/"):  # TZ=:/etc/localtime: the zone file it is (a link into the database)
        real = os.path.realpath(name)
        name = real[len(ZONE_DIR) + 1:] if real.startswith(ZONE_DIR + "/") else name
    parts = name.split("/")
    if not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return DEFAULT_ZONE, problem
    if not os.path.isfile(os.path.join(ZONE_DIR, name)):
        return DEFAULT_ZONE, problem
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return DEFAULT_ZONE, problem
    return name, None


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
    zone, problem = child_zone(source)
    env["TZ"] = zone
    return ChildEnv(env=env, stripped=stripped, zone=zone, zone_problem=problem)


def build_child_env(cfg: LoadedConfig, source: Mapping[str, str]) -> ChildEnv:
    """``cfg`` is a ``LoadedConfig``; names come from ``guard.secrets.{env_allow, env_patterns}``."""
    secrets = cfg.settings.guard.secrets
    return build_env(source, allow=secrets.env_allow or (), patterns=secrets.env_patterns or ())
