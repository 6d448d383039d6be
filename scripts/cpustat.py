"""What the machine's CPUs did while a benchmark ran, from ``/proc/stat``.

On a virtual machine the hypervisor can take CPU time from this guest ("steal"): every figure
measured then is slower for a reason no change in Parism can touch, and variants measured in
the same rounds are hit alike only on average. The benchmarks print this line beside their
figures so a reader can tell a quiet run from a crowded one (one morning here: 16–33 % steal,
`bare ps aux` 9.3 → 16 ms).

    window = CpuWindow()
    ...  # the measured work
    print(window.summary())   # "CPU during the calls: 41 % busy, 12.5 % stolen by the hypervisor (…)"
"""

from __future__ import annotations

import os
from dataclasses import dataclass

PROC_STAT = "/proc/stat"
STEAL_WARN_PCT = 5.0  # above this, say that the figures are inflated


@dataclass(frozen=True)
class Times:
    """The aggregate ``cpu`` line in clock ticks (guest time is already inside user and nice)."""

    busy: int
    idle: int  # idle + iowait
    steal: int

    @property
    def total(self) -> int:
        return self.busy + self.idle + self.steal


def parse(text: str) -> Times | None:
    """The ``cpu`` line of a ``/proc/stat`` text, or None when it has none."""
    for line in text.splitlines():
        fields = line.split()
        if fields[:1] != ["cpu"]:
            continue
        values = fields[1:]
        ticks = [int(v) for v in values] + [0] * (8 - len(values))
        user, nice, system, idle, iowait, irq, softirq, steal = ticks[:8]
        return Times(busy=user + nice + system + irq + softirq, idle=idle + iowait, steal=steal)
    return None


def read() -> Times | None:
    try:
        with open(PROC_STAT) as f:
            return parse(f.read())
    except OSError:
        return None


@dataclass(frozen=True)
class Share:
    busy_pct: float
    steal_pct: float


def share(before: Times, after: Times) -> Share | None:
    """Busy and stolen shares of all CPU time between two readings; None without ticks between."""
    total = after.total - before.total
    if total <= 0:
        return None
    return Share(busy_pct=100 * (after.busy - before.busy) / total,
                 steal_pct=100 * (after.steal - before.steal) / total)


class CpuWindow:
    """CPU shares from its creation to each ``summary()``."""

    def __init__(self) -> None:
        self.start = read()

    def summary(self) -> str:
        end = read()
        if self.start is None or end is None:
            return f"CPU during the calls: not known (no {PROC_STAT}); load {os.getloadavg()[0]:.2f}"
        got = share(self.start, end)
        if got is None:
            return f"CPU during the calls: not known (no clock tick between the readings); load {os.getloadavg()[0]:.2f}"
        note = (f" — above {STEAL_WARN_PCT:.0f} %: every figure above is inflated by the host"
                if got.steal_pct > STEAL_WARN_PCT else "")
        return (f"CPU during the calls: {got.busy_pct:.0f} % busy, {got.steal_pct:.1f} % stolen by the "
                f"hypervisor; load {os.getloadavg()[0]:.2f}{note}")
