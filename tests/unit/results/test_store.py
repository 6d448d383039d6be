"""The result store's invariants (parism/results/store.py docstring), one test each, plus a flood
of concurrent retained runs through a real engine."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from parism.results.pack import pack_json
from parism.results.store import MISS_MEMORY, ResultStore, StoredResult, StoreLimits


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def item(rid: str, size: int) -> StoredResult:
    return StoredResult(result_id=rid, stdout="x" * size, stderr="", parsed_json=None, rows_key=None,
                        row_fields=(), parser_id=None, evidence=None, evidence_mode="none", review={},
                        cmd="ls", args=[], cwd="/", exit_code=0, ok=True, fingerprint={}, query={},
                        qhash="", size=size)


def test_ids_are_unguessable_and_distinct() -> None:
    ids = {ResultStore.new_id() for _ in range(2000)}
    assert len(ids) == 2000
    assert all(i.startswith("r_") and len(i) == 26 for i in ids)


def test_reasons_are_distinct() -> None:
    clock = Clock()
    store = ResultStore(StoreLimits(max_result_bytes=100, max_total_bytes=1000, max_items=2, ttl_ms=60_000), clock)
    store.decline("r_declined", "not_retained", "was not retained")
    assert store.put(item("r_big", 101)).reason == "evicted"
    assert store.put(item("r_a", 10)).retained
    assert store.put(item("r_b", 10)).retained
    assert store.put(item("r_c", 10)).retained  # pushes out r_a (least recently used)
    clock.now += 61
    got = {rid: store.get(rid) for rid in ("r_declined", "r_big", "r_a", "r_b", "r_never")}
    reasons = {rid: getattr(g, "reason", None) for rid, g in got.items()}
    assert reasons == {"r_declined": "not_retained", "r_big": "evicted", "r_a": "evicted",
                       "r_b": "expired", "r_never": "unknown_id"}
    assert "101 bytes, over the 100 byte per-result limit" in got["r_big"].message  # type: ignore[union-attr]
    assert all("nothing is re-executed" in g.message for g in got.values())  # type: ignore[union-attr]


def test_ttl_is_an_idle_time_renewed_by_each_read() -> None:
    """Issue #26: a fetch 62 s after the run was refused (60 s from creation).  Reads renew it;
    an unread result expires one TTL after its last read, and ``age_ms`` still counts from
    creation."""
    clock = Clock()
    store = ResultStore(StoreLimits(ttl_ms=1000), clock)
    store.put(item("r_a", 1))
    store.put(item("r_b", 1))
    for _ in range(5):  # 4 s in all, each read within the TTL of the one before
        clock.now += 0.8
        got = store.get("r_a")
        assert isinstance(got, StoredResult)
    assert 3990 <= store.age_ms(got) <= 4000  # float clock
    assert getattr(store.get("r_b"), "reason", None) == "expired"  # never read: gone after 1 s idle
    clock.now += 0.999
    assert isinstance(store.get("r_a"), StoredResult)
    clock.now += 1.0
    miss = store.get("r_a")
    assert getattr(miss, "reason", None) == "expired" and "after their last read" in miss.message  # type: ignore[union-attr]


def test_the_default_ttl_is_fifteen_minutes() -> None:
    from parism.config.model import Settings

    assert StoreLimits().ttl_ms == Settings().store.ttl_ms == 15 * 60 * 1000


def test_reads_refresh_lru_order() -> None:
    store = ResultStore(StoreLimits(max_items=2))
    store.put(item("r_a", 1))
    store.put(item("r_b", 1))
    assert isinstance(store.get("r_a"), StoredResult)  # r_a is now the most recent
    store.put(item("r_c", 1))
    assert isinstance(store.get("r_a"), StoredResult)
    assert getattr(store.get("r_b"), "reason", None) == "evicted"


def test_total_bytes_bound_evicts_oldest_first() -> None:
    store = ResultStore(StoreLimits(max_result_bytes=100, max_total_bytes=250, max_items=16))
    for n in range(5):
        assert store.put(item(f"r_{n}", 100)).retained
        assert store.stats()["bytes"] <= 250
    assert [getattr(store.get(f"r_{n}"), "reason", "kept") for n in range(5)] == \
        ["evicted", "evicted", "evicted", "kept", "kept"]


def test_miss_memory_is_bounded() -> None:
    store = ResultStore()
    for n in range(MISS_MEMORY + 500):
        store.decline(f"r_{n}", "not_retained", "no")
    assert store.stats()["misses"] == MISS_MEMORY
    assert store.get("r_0").reason == "unknown_id"  # type: ignore[union-attr]
    assert store.get(f"r_{MISS_MEMORY + 499}").reason == "not_retained"  # type: ignore[union-attr]


def test_packing_stops_at_the_limit_without_building_the_rest() -> None:
    value = {"rows": [{"name": "x" * 100, "n": i} for i in range(100_000)]}  # ~12 MB as JSON
    got = pack_json(value, 4096)
    assert isinstance(got, int) and 4096 < got < 4096 + 200
    assert pack_json({"a": [1, 2]}, 100) == b'{"a":[1,2]}'


def test_disabled_store_keeps_nothing() -> None:
    store = ResultStore(StoreLimits(max_items=0))
    assert store.put(item("r_a", 1)).reason == "not_retained"
    assert store.get("r_a").reason == "not_retained"  # type: ignore[union-attr]


def _rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_flood_of_concurrent_retained_runs_stays_bounded(make_engine, tmp_path: Path) -> None:
    """64 concurrent retained runs of a ~0.9 MB output (~1.9 MB stored: text + parsed lines)
    against a 4-item, 8 MiB store: at most 4 kept, the others evicted (oldest first), RSS grows
    far less than the 120 MB that 64 kept results would take."""
    big = tmp_path / "big.txt"
    big.write_text("".join(f"line {n:07d} " + "y" * 80 + "\n" for n in range(10_000)))
    engine = make_engine(guard={"max_output_bytes": 4 * 1024 * 1024},
                         store={"max_items": 4, "max_total_bytes": 8 * 1024 * 1024})
    engine.run("cat", [str(big)], cwd=str(tmp_path))  # warm the sandbox pool and the imports
    before = _rss_kib()
    ids: list[str] = []
    lock = threading.Lock()

    def one(_: int) -> None:
        env = engine.run("cat", [str(big)], cwd=str(tmp_path), retain=True)
        assert env.ok, env.failure
        assert env.review is not None
        with lock:
            ids.append(env.review.result_id)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(64)))
    store = engine.results.store
    stats = store.stats()
    assert 1 <= stats["items"] <= 4 and stats["bytes"] <= 8 * 1024 * 1024
    kept = [i for i in ids if isinstance(store.get(i), StoredResult)]
    assert len(kept) == stats["items"]
    assert {store.get(i).reason for i in ids if i not in kept} == {"evicted"}  # type: ignore[union-attr]
    grown_mib = (_rss_kib() - before) / 1024
    assert grown_mib < 60, f"RSS grew {grown_mib:.0f} MiB for an 8 MiB store (64 results are ~120 MB)"


def test_result_over_the_per_result_limit_is_evicted_with_its_size(make_engine, tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text("z" * 5000 + "\n")
    engine = make_engine(store={"max_result_bytes": 4000})
    env = engine.run("cat", [str(big)], cwd=str(tmp_path), retain=True)
    assert env.review is not None and env.review.retained is False
    assert any("per-result limit" in w for w in env.review.warnings)
    miss = engine.explain_result(env.review.result_id, "")
    assert miss.reason == "evicted" and "5001 bytes, over the 4000 byte per-result limit" in (miss.message or "")
