"""scripts/bench_client.py: the client-side split of a call's CPU (decode, result, schema, rest)."""

import asyncio
import sys
import time
import types
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
import bench_client  # noqa: E402  (a script, importable once scripts/ is on the path)


def spin(seconds: float) -> None:
    """Burn this thread's CPU (the meter reads thread time, so sleeping would not count)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_the_steps_it_wraps_exist_in_this_sdk() -> None:
    # the script measures these three; an SDK that renamed one must fail here, not report zeros
    assert callable(bench_client.client_stdio._parse_line)
    assert callable(bench_client.client_session._methods.validate_server_result)
    assert asyncio.iscoroutinefunction(bench_client.ClientSession.validate_tool_result)


def test_a_missing_step_is_refused_with_its_name() -> None:
    with pytest.raises(SystemExit, match=r"no sdk_like\.gone"):
        bench_client.Meter().wrap(types.SimpleNamespace(__name__="sdk_like"), "gone", "decode")


def test_cpu_is_charged_to_the_call_in_flight_only() -> None:
    ns = types.SimpleNamespace(__name__="ns", parse=lambda line: spin(0.004), check=lambda: spin(0.002))
    meter = bench_client.Meter()
    meter.wrap(ns, "parse", "decode")
    meter.wrap(ns, "check", "result")
    ns.parse("x" * 10)  # no call in flight: not charged
    meter.begin("parism")
    ns.parse("y" * 25)
    ns.check()
    meter.end(0.010)
    (row,) = meter.calls["parism"]
    assert row["chars"] == 25
    assert 0.004 <= row["decode"] < 0.008
    assert 0.002 <= row["result"] < 0.006
    assert row["total"] == 0.010
    assert "floor" not in meter.calls


def test_an_async_step_is_timed_around_its_await() -> None:
    async def validate() -> str:
        spin(0.003)
        await asyncio.sleep(0)
        spin(0.002)
        return "ok"

    ns = types.SimpleNamespace(__name__="ns", validate=validate)
    meter = bench_client.Meter()
    meter.wrap(ns, "validate", "schema")
    meter.begin("delivery")
    assert asyncio.run(ns.validate()) == "ok"
    meter.end(0.01)
    assert 0.005 <= meter.calls["delivery"][0]["schema"] < 0.009


def test_summary_is_per_call_medians_in_ms_and_rest_is_what_the_steps_leave() -> None:
    rows = [
        {"total": 0.0030, "decode": 0.0010, "result": 0.0005, "schema": 0.0005, "chars": 100},  # rest 1.0
        {"total": 0.0050, "decode": 0.0020, "result": 0.0005, "schema": 0.0005, "chars": 300},  # rest 2.0
        {"total": 0.0090, "decode": 0.0010},                                                    # rest 8.0
    ]
    got = bench_client.summary(rows)
    assert got["total"] == pytest.approx(5.0)
    assert got["decode"] == pytest.approx(1.0)
    assert got["result"] == pytest.approx(0.5)
    assert got["schema"] == pytest.approx(0.5)
    # the median of each call's rest (1, 2, 8), not the total's median less the steps' (5 − 2 = 3)
    assert got["rest"] == pytest.approx(2.0)
    assert got["chars"] == 100
