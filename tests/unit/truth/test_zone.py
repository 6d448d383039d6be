"""Times with their zone (docs/envelope.md, "Time rule"): the caller's ``TZ`` reaches the
command, and every parsed ``ls`` time says its offset, checked against ``os.stat`` — the instant
is the kernel's, whatever the zone. Zones with odd offsets: Asia/Kathmandu (+05:45),
Pacific/Chatham (+13:45 in summer), Etc/GMT+12 (-12:00)."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path

import pytest
import tomli_w

from parism.run.childenv import child_zone
from parism.engine import Engine, create_engine
from parism.output.zone import with_offset

ZONES = ["Asia/Kathmandu", "Pacific/Chatham", "Etc/GMT+12", "UTC"]


def _engine(tmp: Path, monkeypatch: pytest.MonkeyPatch, tz: str | None) -> Engine:
    if tz is None:
        monkeypatch.delenv("TZ", raising=False)
    else:
        monkeypatch.setenv("TZ", tz)
    cfg = tmp / "parism.toml"
    cfg.write_text(tomli_w.dumps({"guard": {"allowed_paths": [str(tmp)]}}))
    return create_engine(str(cfg))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, float]:
    """Two files with known times: a recent one (ls prints HH:MM) and a new year's eve one."""
    tmp_path.chmod(0o755)
    now = time.time()
    stamps = {"recent": now - 86400 * 3 - 1234.5, "old": dt.datetime(2023, 12, 31, 23, 30, tzinfo=dt.UTC).timestamp()}
    for name, t in stamps.items():
        p = tmp_path / name
        p.write_text("x")
        os.utime(p, (t - 7200, t))  # atime two hours before mtime: -u must not give the mtime
    return stamps


def _rows(engine: Engine, cwd: Path, *args: str) -> dict[str, dict]:
    env = json.loads(engine.run("ls", list(args), cwd=str(cwd), format="json").to_json())
    assert env["ok"] is True, env
    parsed = env["stdout"]["parsed"]
    return {r["name"]: {**r, "_zone": parsed.get("time_zone")} for r in parsed["entries"]}


@pytest.mark.parametrize("zone", ZONES)
def test_ls_times_carry_the_offset_of_the_callers_zone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      files: dict[str, float], zone: str) -> None:
    engine = _engine(tmp_path, monkeypatch, zone)
    assert engine.errors == []
    rows = _rows(engine, tmp_path, "-l")
    recent = rows["recent"]
    assert recent["_zone"] == zone
    at = dt.datetime.fromisoformat(recent["modified_at"])
    assert at.utcoffset() is not None, recent["modified_at"]  # says its offset
    mtime = os.stat(tmp_path / "recent").st_mtime
    assert at.timestamp() == (mtime // 60) * 60  # the minute ls printed, as an instant
    expected = dt.datetime.fromtimestamp(mtime, dt.timezone(at.utcoffset()))  # type: ignore[arg-type]
    assert at.utcoffset() == expected.astimezone(__import__("zoneinfo").ZoneInfo(zone)).utcoffset()
    # the old file's date alone cannot carry an offset: time_zone names the zone it was printed in
    old_local = dt.datetime.fromtimestamp(files["old"], __import__("zoneinfo").ZoneInfo(zone))
    assert rows["old"]["modified_at"] == old_local.date().isoformat()
    # --full-time prints the offset itself: the parse keeps it, and it is the same instant
    full = _rows(engine, tmp_path, "-l", "--full-time")["recent"]
    assert dt.datetime.fromisoformat(full["modified_at"]).timestamp() == pytest.approx(mtime, abs=1e-6)


def test_an_unknown_zone_is_refused_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = _engine(tmp_path, monkeypatch, "Mars/Olympus_Mons")
    env = engine.run("ls", ["-l"], cwd=str(tmp_path))
    assert env.failure is not None and env.failure.reason == "invalid_config"
    assert "Mars/Olympus_Mons" in env.failure.message and "TZ" in env.failure.message


@pytest.mark.parametrize("tz", ["UTC0", "CET-1CEST", "/etc/passwd", "../../etc/passwd", "Asia/Nowhere"])
def test_a_tz_that_names_no_zone_of_the_database_is_a_problem(tz: str) -> None:
    zone, problem = child_zone({"TZ": tz})
    assert zone == "UTC" and problem is not None and repr(tz) in problem


def test_unset_tz_is_utc_and_a_zone_link_is_its_name() -> None:
    assert child_zone({}) == ("UTC", None)
    assert child_zone({"TZ": ":Asia/Kathmandu"}) == ("Asia/Kathmandu", None)


def test_a_local_time_the_zone_had_twice_keeps_no_offset() -> None:
    """Pacific/Chatham leaves daylight saving on 2026-04-05 at 03:45 (back to 02:45): 03:00 was
    lived twice, 03:00 +13:45 and 03:00 +12:45 (tzdata). Which one ls meant is unknown."""
    assert with_offset("2026-04-05T03:00:00", "Pacific/Chatham") == "2026-04-05T03:00:00"
    assert with_offset("2026-04-05T05:00:00", "Pacific/Chatham") == "2026-04-05T05:00:00+12:45"
    assert with_offset("2026-12-03T16:34:00", "Asia/Kathmandu") == "2026-12-03T16:34:00+05:45"
    assert with_offset("2026-12-03T16:34:00", "Etc/GMT+12") == "2026-12-03T16:34:00-12:00"
    assert with_offset("2026-12-03", "Asia/Kathmandu") == "2026-12-03"
    assert with_offset("2026-12-03T16:34:00+00:00", "Asia/Kathmandu") == "2026-12-03T16:34:00+00:00"
