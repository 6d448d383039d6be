"""Date helpers shared by parsers: keep the printed text, add ISO only where it is unambiguous.

Tools print dates in a handful of shapes (``ls`` ``Mar  6 09:23`` / ``Apr 10  2018``, GNU
``2018-01-18 01:43:49.000000000 -0800``, BSD ``May 27 05:40:02 2020``).  Each helper returns an
ISO 8601 string or None; it never guesses a value that the text does not support, except the
year of a ``Mon DD HH:MM`` date, which ``ls`` itself defines (the file is younger than six months).
Append-only module: other parsers may rely on every function here.
"""

from __future__ import annotations

import datetime as _dt
import re
from functools import lru_cache

MONTHS: dict[str, int] = {
    m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))
}

_MDY_TIME = re.compile(r"([A-Za-z]{3})\s+(\d{1,2})\s+(\d{1,2}):(\d\d)(?::(\d\d))?(?:\s+(\d{4}))?")
_MDY_YEAR = re.compile(r"([A-Za-z]{3})\s+(\d{1,2})\s+(\d{4})")
_GNU_FULL = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d)(?::(\d\d)(\.\d+)?)?(?:\s*([+-])(\d\d):?(\d\d)|\s*(Z|UTC))?"
)
_MD_TIME = re.compile(r"(\d\d)-(\d\d) (\d\d):(\d\d)")
_YMD = re.compile(r"(\d{4})-(\d\d)-(\d\d)")


def _valid(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0) -> bool:
    try:
        _dt.datetime(y, mo, d, h, mi, s)
    except ValueError:
        return False
    return True


def _iso(y: int, mo: int, d: int, h: int | None = None, mi: int | None = None, s: int | None = None,
         frac: str = "", zone: str = "") -> str | None:
    if not _valid(y, mo, d, h or 0, mi or 0, s or 0):
        return None
    if h is None:
        return f"{y:04d}-{mo:02d}-{d:02d}"
    sec = f":{s:02d}{frac}" if s is not None else ":00"
    return f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi or 0:02d}{sec}{zone}"


def infer_year(month: int, day: int, now: _dt.datetime | None = None, now_year: int | None = None) -> int:
    """The year of a ``Mon DD HH:MM`` listing date (GNU/BSD ls: printed only for recent files).

    The date is the latest one not after ``now`` (+1 day of slack for time zones).  Tests pin
    ``now_year``: dates are then taken to be in that year."""
    if now_year is not None:
        return now_year
    now = now or _dt.datetime.now()
    year = now.year
    try:
        candidate = _dt.datetime(year, month, min(day, 28) if month == 2 and day == 29 else day)
    except ValueError:
        return year
    return year - 1 if candidate > now + _dt.timedelta(days=1) else year


def month_day_to_iso(text: str, now_year: int | None = None, now: _dt.datetime | None = None) -> str | None:
    """``Mar  6 09:23`` → ``2026-03-06T09:23:00`` (year inferred); ``Apr 10  2018`` →
    ``2018-04-10``; BSD ``Dec 12 00:13:15 2019`` → ``2019-12-12T00:13:15``."""
    if now is None:  # listings repeat dates: cache per text and day (the inference depends on today)
        return _month_day_cached(text, now_year, _dt.date.today())
    return _month_day(text, now_year, now)


@lru_cache(maxsize=4096)
def _month_day_cached(text: str, now_year: int | None, today: _dt.date) -> str | None:
    return _month_day(text, now_year, None)


def _month_day(text: str, now_year: int | None, now: _dt.datetime | None) -> str | None:
    t = text.strip()
    m = _MDY_TIME.fullmatch(t)
    if m:
        mo = MONTHS.get(m.group(1).lower())
        if mo is None:
            return None
        day = int(m.group(2))
        year = int(m.group(6)) if m.group(6) else infer_year(mo, day, now, now_year)
        s = int(m.group(5)) if m.group(5) else None
        return _iso(year, mo, day, int(m.group(3)), int(m.group(4)), s)
    m = _MDY_YEAR.fullmatch(t)
    if m:
        mo = MONTHS.get(m.group(1).lower())
        return _iso(int(m.group(3)), mo, int(m.group(2))) if mo else None
    return None


@lru_cache(maxsize=4096)
def gnu_to_iso(text: str) -> str | None:
    """``2018-01-18 01:43:49.000000000 -0800`` → ``2018-01-18T01:43:49.000000000-08:00``;
    also ``2018-01-18 01:43`` (long-iso) and a bare ``2018-01-18``."""
    t = text.strip()
    m = _GNU_FULL.fullmatch(t)
    if m:
        y, mo, d, h, mi = (int(m.group(i)) for i in range(1, 6))
        s = int(m.group(6)) if m.group(6) else None
        zone = ""
        if m.group(8):
            zone = f"{m.group(8)}{m.group(9)}:{m.group(10)}"
        elif m.group(11):
            zone = "Z"
        return _iso(y, mo, d, h, mi, s, m.group(7) or "", zone)
    m = _YMD.fullmatch(t)
    if m:
        return _iso(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    return None


def listing_date_to_iso(text: str, now_year: int | None = None, now: _dt.datetime | None = None) -> str | None:
    """Any date shape ``ls`` prints (default, ``-T``, ``--time-style=iso|long-iso|full-iso``)."""
    t = " ".join(text.split())
    if t[:1].isdigit():
        m = _MD_TIME.fullmatch(t)
        if m:  # --time-style=iso, recent file: MM-DD HH:MM
            mo, d = int(m.group(1)), int(m.group(2))
            return _iso(infer_year(mo, d, now, now_year), mo, d, int(m.group(3)), int(m.group(4)))
        return gnu_to_iso(t)
    return month_day_to_iso(t, now_year, now)


_CTIME_ZONE = re.compile(
    r"^[A-Za-z]{3} ([A-Za-z]{3}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4}) ([+-])(\d\d)(\d\d)$")


def ctime_zone_to_iso(text: str) -> str | None:
    """``Wed Apr 20 10:03:36 2022 -0400`` (git's default date format) → ISO with its offset."""
    m = _CTIME_ZONE.match(text.strip())
    if not m:
        return None
    mon = MONTHS.get(m.group(1).lower())
    if mon is None:
        return None
    zone = f"{m.group(7)}{m.group(8)}:{m.group(9)}"
    return _iso(int(m.group(6)), mon, int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)),
                zone=zone)


_DAY_MONTH = re.compile(r"(\d{1,2})\.? (\S+) (?:(\d{1,2}):(\d\d)|(\d{4}))")


def day_month_to_iso(text: str, now_year: int | None = None, now: _dt.datetime | None = None) -> str | None:
    """German/French ``ls`` dates, day first: ``1. Dez 21:12`` / ``20. Mai 2026`` / ``1 déc. 21:12``
    → ISO (the year of a recent date inferred as for ``Mar  6 09:23``); month names from
    ``parism.parsers.l10n``. None for anything else."""
    from parism.parsers.l10n import month  # l10n is data only; imported here to keep dates light

    m = _DAY_MONTH.fullmatch(" ".join(text.split()))
    if m is None or (mo := month(m.group(2))) is None:
        return None
    day = int(m.group(1))
    if m.group(5):
        return _iso(int(m.group(5)), mo, day)
    return _iso(infer_year(mo, day, now, now_year), mo, day, int(m.group(3)), int(m.group(4)))
