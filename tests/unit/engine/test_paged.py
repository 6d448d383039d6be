"""``run_paged``: line pages of one cached execution (§4.1, §14)."""

from __future__ import annotations

from pathlib import Path

from parism.engine import Engine
from parism.output.paging import PageCache, page_of, split_lines
from tests.unit.engine.conftest import MakeEngine


def test_pages_split_lines_as_specified(engine: Engine, tmp_path: Path) -> None:
    first = engine.run_paged("seq", ["1", "250"], cwd=str(tmp_path), page=1, page_size=100)
    assert first.ok and first.stdout.parsed is None
    assert first.stdout.raw == "".join(f"{i}\n" for i in range(101, 201))
    info = first.page_info
    assert info is not None and (info.page, info.page_size, info.total_lines, info.has_next) == (1, 100, 250, True)
    last = engine.run_paged("seq", ["1", "250"], cwd=str(tmp_path), page=2, page_size=100)
    assert last.stdout.raw == "".join(f"{i}\n" for i in range(201, 251))
    assert last.page_info is not None and last.page_info.has_next is False
    beyond = engine.run_paged("seq", ["1", "250"], cwd=str(tmp_path), page=9, page_size=100)
    assert beyond.stdout.raw == "" and beyond.page_info is not None and beyond.page_info.has_next is False


def test_second_page_comes_from_the_same_execution(engine: Engine, tmp_path: Path) -> None:
    # every execution prints a fresh random uuid: equal pages prove the cache served them
    args = ["-c", "cat /proc/sys/kernel/random/uuid; seq 1 5"]
    a = engine.run_paged("sh", args, cwd=str(tmp_path), page=0, page_size=3)
    b = engine.run_paged("sh", args, cwd=str(tmp_path), page=0, page_size=3)
    assert a.page_info is not None and a.page_info.cache is not None and a.page_info.cache.hit is False
    assert b.page_info is not None and b.page_info.cache is not None and b.page_info.cache.hit is True
    assert b.page_info.cache.age_ms >= 0
    assert a.stdout.raw == b.stdout.raw
    fresh = engine.run("sh", args, cwd=str(tmp_path))
    assert fresh.stdout.raw.splitlines()[0] != a.stdout.raw.splitlines()[0]


def test_failed_execution_is_not_cached(engine: Engine, tmp_path: Path) -> None:
    args = ["-c", "cat /proc/sys/kernel/random/uuid; exit 1"]
    a = engine.run_paged("sh", args, cwd=str(tmp_path))
    b = engine.run_paged("sh", args, cwd=str(tmp_path))
    assert a.ok is False and a.failure is not None and a.failure.reason == "non_zero_exit"
    assert b.page_info is not None and b.page_info.cache is not None
    assert b.page_info.cache.hit is False and b.page_info.cache.reason == "not_cached:non_zero_exit"
    assert a.stdout.raw != b.stdout.raw


def test_page_byte_cap_cuts_on_a_line(make_engine: MakeEngine, tmp_path: Path) -> None:
    engine = make_engine(guard={"max_output_bytes": 50})
    env = engine.run_paged("seq", ["1", "1000"], cwd=str(tmp_path), page=0, page_size=100)
    assert env.truncated is True and env.stdout.raw.endswith("\n")
    assert len(env.stdout.raw.encode()) <= 50 and env.stdout.raw.startswith("1\n2\n")


def test_page_size_out_of_range_is_a_request_error(engine: Engine, tmp_path: Path) -> None:
    env = engine.run_paged("seq", ["3"], cwd=str(tmp_path), page_size=100000)
    assert env.ok is False and env.failure is not None and env.failure.reason == "invalid_request"


def test_split_lines_keeps_cr_and_drops_one_trailing_empty() -> None:
    assert split_lines("a\r\nb\n") == ["a\r", "b"]
    assert split_lines("a\n\n") == ["a", ""]
    assert page_of("", 0, 10, 0).raw == ""


def test_cache_is_bounded_by_entries_bytes_and_ttl() -> None:
    now = [0.0]
    cache = PageCache(ttl_s=30, max_entries=2, max_bytes=100, clock=lambda: now[0])
    k = [("c", (str(i),), "/", "h") for i in range(4)]
    assert cache.put(k[0], "a", 10) and cache.put(k[1], "b", 10)
    assert cache.get(k[0]) == ("a", 0)
    cache.put(k[2], "c", 10)  # evicts the least recently used: k[1]
    assert cache.get(k[1]) is None and cache.get(k[0]) is not None
    assert cache.put(k[3], "big", 101) is False
    cache.put(k[3], "d", 95)  # byte bound: older entries go
    assert cache.get(k[0]) is None and cache.get(k[2]) is None and cache.get(k[3]) == ("d", 0)
    now[0] = 31.0
    assert cache.get(k[3]) is None
