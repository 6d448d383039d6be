"""Times with their zone (docs/envelope.md, "Time rule").

A command prints local times in the zone of its ``TZ`` — the caller's (``childenv.child_zone``),
``UTC`` when unset. ``ls -l`` prints them without an offset (``Dec  3 16:34``), so the parse
alone cannot say which instant they are. After the parse of a run, :func:`zoned` writes the
offset that the zone had at that local time into each such timestamp
(``2026-12-03T16:34:00`` → ``2026-12-03T16:34:00+05:45`` in Asia/Kathmandu) and names the zone
in the result (``time_zone``), so a timestamp that cannot carry an offset — a date alone
(``Apr 10  2018``), or a local time that a daylight-saving change made ambiguous or skipped —
still says the zone it was printed in. Timestamps the command printed with an offset
(``--full-time``, ``stat``) are left as they are.

Saved text (``parse``) is not zoned: the zone it was printed in is not known.
"""

from __future__ import annotations

import datetime as _dt
import re
import zoneinfo
from functools import lru_cache
from typing import Any, TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import JsonValue

#: parser id → the row fields that hold a local time printed without an offset.
ZONED: dict[str, tuple[str, ...]] = {
    "ls": ("modified_at", "accessed_at", "changed_at", "birth_at"),
}
ROWS_KEY = "entries"
ZONE_KEY = "time_zone"
_NAIVE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?")


@lru_cache(maxsize=4096)
def with_offset(value: str, zone: str) -> str:
    """``value`` with the offset ``zone`` had at that local time; unchanged when it already has
    one, is a date alone, or names a local time the zone had twice or never (DST)."""
    if not _NAIVE.fullmatch(value):
        return value
    head, dot, frac = value.partition(".")
    try:
        local = _dt.datetime.fromisoformat(head)
        tz = zoneinfo.ZoneInfo(zone)
    except (ValueError, zoneinfo.ZoneInfoNotFoundError):
        return value
    early, late = local.replace(tzinfo=tz, fold=0), local.replace(tzinfo=tz, fold=1)
    if early.utcoffset() != late.utcoffset():  # ambiguous or skipped: time_zone says the zone
        return value
    round_trip = early.astimezone(_dt.UTC).astimezone(tz)
    if round_trip.replace(tzinfo=None) != local:  # in a gap (fold cannot tell: belt and braces)
        return value
    offset = early.strftime("%z")  # +0545, -1200, or +054116 for an old local mean time
    sign, hh, mm, ss = offset[0], offset[1:3], offset[3:5], offset[5:]
    return f"{value}{sign}{hh}:{mm}" + (f":{ss}" if ss else "")


def zoned(parser_id: str | None, parsed: JsonValue, zone: str) -> Any:
    """``parsed`` with its local times' offsets and ``time_zone``, written in place (the value
    is the parse's own, fresh for this call); a parser not in :data:`ZONED`, or a value
    without its rows, is returned as it is."""
    fields = ZONED.get(parser_id or "")
    if not fields or not isinstance(parsed, dict) or not isinstance(parsed.get(ROWS_KEY), list):
        return parsed
    offsets: dict[str, str] = {}  # printed ISO → with its offset: a listing repeats its minutes
    timed = False
    for row in parsed[ROWS_KEY]:
        if type(row) is not dict:
            continue
        for f in fields:
            value = row.get(f)
            if type(value) is str:
                timed = True
                done = offsets.get(value)
                if done is None:
                    done = offsets[value] = with_offset(value, zone)
                row[f] = done
    if timed:  # a name list has no time to place
        parsed[ZONE_KEY] = zone
    return parsed
