"""scripts/cpustat.py: the CPU shares the benchmarks print beside their figures."""

import importlib.util
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("cpustat", ROOT / "scripts" / "cpustat.py")
assert _spec is not None and _spec.loader is not None
cpustat = importlib.util.module_from_spec(_spec)
sys.modules["cpustat"] = cpustat
_spec.loader.exec_module(cpustat)

# /proc/stat layout (proc(5)): user nice system idle iowait irq softirq steal guest guest_nice
BEFORE = "cpu  100 5 50 800 20 3 2 20 7 0\ncpu0 50 2 25 400 10 1 1 10 3 0\nintr 1 2 3\n"
AFTER = "cpu  200 5 100 1480 40 3 2 170 9 0\ncpu0 100 2 50 740 20 1 1 85 4 0\nintr 4 5 6\n"


def test_the_aggregate_line_is_read_and_guest_time_not_counted_twice() -> None:
    t = cpustat.parse(BEFORE)
    # busy = user + nice + system + irq + softirq (guest is already inside user)
    assert (t.busy, t.idle, t.steal, t.total) == (160, 820, 20, 1000)


def test_shares_between_two_readings() -> None:
    got = cpustat.share(cpustat.parse(BEFORE), cpustat.parse(AFTER))
    # deltas: busy 150, idle 680 + 20 iowait, steal 150 — of 1000 ticks
    assert got == cpustat.Share(busy_pct=15.0, steal_pct=15.0)


def test_no_ticks_between_readings_is_no_share() -> None:
    t = cpustat.parse(BEFORE)
    assert cpustat.share(t, t) is None


def test_a_text_without_the_cpu_line_is_none() -> None:
    assert cpustat.parse("cpu0 1 2 3 4\n\nintr 1\n") is None  # a blank line is skipped, not an error


def test_a_window_without_a_tick_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    same = cpustat.parse(BEFORE)
    monkeypatch.setattr(cpustat, "read", lambda: same)
    assert "no clock tick between the readings" in cpustat.CpuWindow().summary()


def test_old_kernels_with_fewer_columns() -> None:
    t = cpustat.parse("cpu 10 0 5 100\n")  # before iowait existed
    assert (t.busy, t.idle, t.steal) == (15, 100, 0)


@pytest.mark.skipif(not Path("/proc/stat").exists(), reason="needs /proc/stat")
def test_the_summary_on_this_machine_names_its_shares() -> None:
    window = cpustat.CpuWindow()
    time.sleep(0.05)  # a few clock ticks (10 ms each) between the readings
    line = window.summary()
    assert line.startswith("CPU during the calls: ") and "stolen by the hypervisor" in line


def test_heavy_steal_says_the_figures_are_inflated(monkeypatch: pytest.MonkeyPatch) -> None:
    readings = iter([cpustat.parse(BEFORE), cpustat.parse(AFTER)])
    monkeypatch.setattr(cpustat, "read", lambda: next(readings))
    assert "inflated" in cpustat.CpuWindow().summary()  # 15 % > STEAL_WARN_PCT
