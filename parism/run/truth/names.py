"""How the commands print an id: a name from passwd/group, or the number when there is none."""

from __future__ import annotations

import grp
import pwd
from functools import lru_cache

OVERFLOW_ID = 65534  # /proc/sys/kernel/overflowuid and overflowgid
PS_USER_WIDTH = 8  # procps: a longer user name is cut to 7 characters and "+"


@lru_cache(maxsize=1)
def overflow_names() -> frozenset[str]:
    """Every spelling of the overflow id: ``nobody``/``nogroup`` (or this host's names) and 65534."""
    return frozenset({str(OVERFLOW_ID), user_name(OVERFLOW_ID), group_name(OVERFLOW_ID)})


def user_name(uid: int, missing: str | None = None) -> str:
    """passwd's name; without an entry ``missing`` (GNU stat: UNKNOWN) or the number (ls, ps)."""
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid) if missing is None else missing


def group_name(gid: int, missing: str | None = None) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid) if missing is None else missing


def like(printed: str, value: int, name: str) -> str:
    """The id as the command printed its overflow value: a number stays a number."""
    return str(value) if printed.isdigit() else name


def ps_name(printed: str, value: int, group: bool) -> str:
    """procps cuts a user or group name longer than its column to 7 characters and "+"."""
    name = like(printed, value, (group_name if group else user_name)(value))
    return name if len(name) <= PS_USER_WIDTH else name[: PS_USER_WIDTH - 1] + "+"
