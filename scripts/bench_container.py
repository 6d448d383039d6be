#!/usr/bin/env python3
"""The appliance against native: image size, cold start and per-call round trip, one run.

    .venv/bin/python scripts/bench_container.py [--image parism:dev] [--iterations 40] [--cold 5]

Native = ``python -m parism serve`` of this checkout (sandbox level full on the host); container
= ``docker run -i`` with the hardened line of ``parism policy run-line`` (sandbox level full in
the container). Both are driven by the MCP SDK's ``stdio_client``, as a client would:

  cold start   spawn → ``initialize`` answered (the container's includes ``docker run``)
  round trip   ``run ls -la`` in the same 40-file workspace, one persistent session each,
               interleaved in a shuffled order every iteration (load drift hits both alike)

Prints median / p95 of each and the container/native ratio. Size is what
``docker image inspect -f '{{.Size}}'`` reports (target ≤ 200,000,000 bytes).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from parism.appliance import run_line  # noqa: E402


def native_params(ws: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "parism", "serve"],
                                 env={"HOME": str(ws / ".home"), "PYTHONPATH": str(REPO_ROOT),
                                      "PATH": os.environ.get("PATH", "")}, cwd=str(ws))


def container_params(image: str, ws: Path, seccomp: Path) -> StdioServerParameters:
    argv = run_line(image=image, workspace=str(ws), seccomp=str(seccomp)).argv
    return StdioServerParameters(command="docker", args=argv, env=dict(os.environ))


async def cold(params: StdioServerParameters) -> float:
    t0 = time.perf_counter()
    async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        return (time.perf_counter() - t0) * 1000


def stats(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    return statistics.median(xs), xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))]


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--image", default=os.environ.get("PARISM_IMAGE", "parism:dev"))
    ap.add_argument("--iterations", type=int, default=40)
    ap.add_argument("--cold", type=int, default=5)
    ns = ap.parse_args()
    size = int(subprocess.run(["docker", "image", "inspect", "-f", "{{.Size}}", ns.image],
                              capture_output=True, text=True, check=True).stdout)
    ws = Path(tempfile.mkdtemp(prefix="parism-bench-ctr-"))
    try:
        ws.chmod(0o755)
        (ws / ".home").mkdir()
        for i in range(40):
            (ws / f"file-{i:02}.txt").write_text("x" * i)
            (ws / f"file-{i:02}.txt").chmod(0o644)
        seccomp = ws / ".home" / "seccomp.json"
        seccomp.write_text((REPO_ROOT / "policies" / "seccomp-bwrap.json").read_text())
        seccomp.chmod(0o644)
        variants = {"native": native_params(ws), "container": container_params(ns.image, ws, seccomp)}
        colds: dict[str, list[float]] = {k: [] for k in variants}
        for _ in range(ns.cold):
            for name in random.sample(list(variants), len(variants)):
                colds[name].append(await cold(variants[name]))
        trips: dict[str, list[float]] = {k: [] for k in variants}
        async with AsyncExitStack() as stack:
            sessions = {}
            for name, params in variants.items():
                r, w = await stack.enter_async_context(stdio_client(params))
                s = await stack.enter_async_context(ClientSession(r, w))
                await s.initialize()
                sandbox = (await s.call_tool("describe", {})).structured_content["sandbox"]
                assert sandbox["level"] == "full", (name, sandbox)
                await s.call_tool("run", {"cmd": "ls", "args": ["-la"]})  # warm the pool
                sessions[name] = s
            for _ in range(ns.iterations):
                for name in random.sample(list(sessions), len(sessions)):
                    t0 = time.perf_counter()
                    res = await sessions[name].call_tool("run", {"cmd": "ls", "args": ["-la"]})
                    trips[name].append((time.perf_counter() - t0) * 1000)
                    assert res.structured_content["ok"] is True, res.structured_content
                await asyncio.sleep(0.03)
    finally:
        shutil.rmtree(ws, ignore_errors=True)
    print(f"image {ns.image}: {size:,} bytes ({size / 1e6:.1f} MB; target ≤ 200,000,000)")
    print(f"{'':12} {'native':>18} {'container':>18} {'ratio':>7}")
    for label, data in (("cold start", colds), ("round trip", trips)):
        (nm, np95), (cm, cp95) = stats(data["native"]), stats(data["container"])
        print(f"{label:12} {nm:8.1f} / {np95:7.1f} {cm:8.1f} / {cp95:7.1f} {cm / nm:7.2f}   (ms, median / p95)")
    print(f"load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    asyncio.run(main())
