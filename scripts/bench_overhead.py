#!/usr/bin/env python3
"""What Parism costs per call, measured against what any MCP server costs.

One run, interleaved (every iteration calls every variant once, in a shuffled order, so load
drift and what one variant leaves running hit them all alike), for each command (`ls -la
/usr/bin`, `ps aux`, `git log --oneline -n 50` in a throwaway repo with 60 commits):

  bare        subprocess.run of the same argv (no MCP, no Parism)
  engine      Parism's engine in-process (`await engine.arun(...)`)
  parism      Parism over MCP stdio, one persistent ClientSession
  floor       a minimal MCPServer spawned the same way whose tool runs the argv and returns the
              raw text: the SDK's own cost, the floor any Python MCP server pays
  delivery    a minimal MCPServer that runs the argv like the floor, then returns the envelope
              Parism's engine produced for it at start-up (recorded), as structuredContent +
              the same JSON as text, under Parism's outputSchema: what the SDK alone costs to
              deliver an answer of that size. ``parism - delivery`` is Parism's own work
              (guard, sandbox, parse, shaping); ``delivery - floor`` is the price of the
              structured answer, paid mostly in the client's JSON decoding and validation
  shell-mcp   mcp-shell-server from PyPI in its own virtualenv (skipped, with the reason, when it
              cannot be installed or started)
  baseline    with ``--baseline DIR``: ``parism serve`` from another checkout (e.g. ``git archive
              main``), spawned like ``parism``: a before/after comparison inside one run

Then cold start: spawn → initialize → tools/list answered, `parism` against the floor server
and against the floor with the collector off during its imports (what `parism serve` does).
Targets: parism median ≤ floor + 3 ms per command, faster than mcp-shell-server, cold start ≤
floor + 100 ms.

Extra rows: call :func:`main` with ``extra_variants={"name": fn}`` where ``fn(argv, cwd)`` is an
async callable running one command (e.g. a sandboxed and an unsandboxed engine).

    .venv/bin/python scripts/bench_overhead.py [--iterations 30] [--cold 8] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psutil
from cpustat import CpuWindow
from mcp import ClientSession, StdioServerParameters, stdio_client

REPO_ROOT = Path(__file__).resolve().parent.parent
SHELL_VENV = Path("/tmp/bench-venvs/mcp-shell-server")

#: One benchmark variant: run argv in cwd once, raise if the call did not succeed.
Runner = Callable[[list[str], str], Awaitable[object]]

FLOOR_SERVER = textwrap.dedent(
    '''
    """The SDK floor: a minimal MCPServer whose tool runs argv and returns only the raw text."""
    import anyio
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("floor", version="0")

    @server.tool(structured_output=False)
    async def run(cmd: str, args: list[str], cwd: str) -> str:
        done = await anyio.run_process([cmd, *args], cwd=cwd, check=False)
        return done.stdout.decode("utf-8", "replace")

    server.run()
    '''
)
#: The floor with the import-time trick `parism serve` uses (collector off while the SDK's
#: models are built): against it, ``parism - floor-gc-off`` is Parism's own start-up work.
FLOOR_SERVER_GC_OFF = "import gc\ngc.disable()\n" + FLOOR_SERVER.replace("server.run()", "gc.enable()\nserver.run()")

DELIVERY_SERVER = textwrap.dedent(
    '''
    """Delivery floor: runs argv like the floor, answers with a recorded Parism envelope."""
    import json
    import sys
    from typing import Annotated

    import anyio
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult, TextContent
    from pydantic_core import to_json

    from parism.wire.envelope import Envelope
    from parism.server.tools import output_schema

    with open(sys.argv[1], encoding="utf-8") as fh:
        ANSWERS = json.load(fh)
    server = MCPServer("delivery", version="0")

    @server.tool()
    async def run(cmd: str, args: list[str], cwd: str) -> Annotated[CallToolResult, Envelope]:
        await anyio.run_process([cmd, *args], cwd=cwd, check=False)
        wire = ANSWERS["\\0".join([cmd, *args])]
        return CallToolResult(content=[TextContent(type="text", text=to_json(wire).decode())],
                              structured_content=wire)

    # the schema Parism publishes (its $defs inlined), which the client validates every answer with
    server._tool_manager.get_tool("run").fn_metadata.output_schema = output_schema(Envelope)
    server.run()
    '''
)


@dataclass
class Command:
    label: str
    argv: list[str]
    cwd: str


@dataclass
class Variant:
    """A runner plus where its Parism/server-side CPU time is read (None: not attributable)."""

    run: Runner
    cpu_s: Callable[[], float] | None


@dataclass
class Cell:
    samples_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)  # server (or in-process) CPU per call
    client_cpu_ms: list[float] = field(default_factory=list)  # this process: the MCP client side

    def median(self) -> float:
        return statistics.median(self.samples_ms)

    # CPU counters tick at 10 ms (psutil) and background work lands on some call: means of the
    # per-call deltas (their sum is exact) are meaningful where medians are not.
    def cpu(self) -> str:
        return f"{statistics.fmean(self.cpu_ms):.2f}" if self.cpu_ms else "-"

    def client_cpu(self) -> str:
        return f"{statistics.fmean(self.client_cpu_ms):.2f}" if self.client_cpu_ms else "-"

    def p95(self) -> float:
        ordered = sorted(self.samples_ms)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def make_repo(root: Path, commits: int = 60) -> Path:
    """A git repository with ``commits`` real commits, each changing one file."""
    repo = root / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q")
    for i in range(commits):
        (repo / "file.txt").write_text(f"line {i}\n")
        git("add", "file.txt")
        git("commit", "-q", "-m", f"commit {i}")
    return repo


def bench_commands(root: Path, repo: Path, only: str | None = None) -> list[Command]:
    """The three measured commands (``only``: the one whose program is named so)."""
    commands = [
        Command("ls -la /usr/bin", ["ls", "-la", "/usr/bin"], str(root)),
        Command("ps aux", ["ps", "aux"], str(root)),
        Command("git log --oneline -n 50", ["git", "log", "--oneline", "-n", "50"], str(repo)),
    ]
    return [c for c in commands if only is None or c.argv[0] == only]


def write_parism_config(root: Path, repo: Path) -> Path:
    """Allow the benchmark's paths and mcp-shell-server's 1 MiB output cap (a fair comparison:
    `ps aux` on a busy host exceeds the default 100 KiB); everything else stays the default."""
    cfg = root / "parism.toml"
    cfg.write_text(f'[guard]\nallowed_paths = ["{root}", "{repo}", "/usr/bin"]\nmax_output_bytes = 1048576\n')
    return cfg


def server_env(root: Path, checkout: Path = REPO_ROOT) -> dict[str, str]:
    """Same environment for every spawned server: a private HOME, the checkout importable."""
    return {"HOME": str(root), "PYTHONPATH": str(checkout), "PATH": os.environ.get("PATH", "")}


@asynccontextmanager
async def session_for(params: StdioServerParameters) -> AsyncIterator[ClientSession]:
    """A legacy-handshake session, as hosts open it; the server's stderr logs are discarded."""
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


def parism_params(root: Path, cfg: Path, checkout: Path = REPO_ROOT) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "parism", "serve", "--config", str(cfg)],
                                 env=server_env(root, checkout), cwd=str(root))


def baseline_config(cfg: Path) -> Path:
    """The same configuration under another name: the baseline server's command line differs."""
    copy = cfg.with_name("parism-baseline.toml")
    copy.write_text(cfg.read_text())
    return copy


def script_params(root: Path, name: str, source: str, *args: str) -> StdioServerParameters:
    """One of the benchmark's own servers: ``source`` written to ``root/name`` and run."""
    script = root / name
    if not script.exists():
        script.write_text(source)
    return StdioServerParameters(command=sys.executable, args=[str(script), *args], env=server_env(root),
                                 cwd=str(root))


def floor_params(root: Path, gc_off: bool = False) -> StdioServerParameters:
    if gc_off:
        return script_params(root, "floor_server_gc_off.py", FLOOR_SERVER_GC_OFF)
    return script_params(root, "floor_server.py", FLOOR_SERVER)


async def record_answers(engine: object, commands: list[Command], path: Path) -> None:
    """The envelope Parism answers each command with, as the delivery server will send it."""
    answers = {}
    for c in commands:
        env = await engine.arun(c.argv[0], c.argv[1:], c.cwd)  # type: ignore[attr-defined]
        answers["\0".join(c.argv)] = env.to_wire()
    path.write_text(json.dumps(answers), encoding="utf-8")


def shell_params(root: Path) -> StdioServerParameters | str:
    """mcp-shell-server in its own venv (pinned to the mcp 1.x it was written for), or why not."""
    exe = SHELL_VENV / "bin" / "mcp-shell-server"
    if not exe.exists():
        made = subprocess.run(
            f"python3 -m venv {SHELL_VENV} && {SHELL_VENV}/bin/pip install -q mcp-shell-server 'mcp<2'",
            shell=True, capture_output=True, text=True,
        )
        if made.returncode != 0 or not exe.exists():
            return f"could not install mcp-shell-server: {made.stderr.strip()[-300:]}"
    env = {**server_env(root), "ALLOW_COMMANDS": "ls,ps,git"}
    return StdioServerParameters(command=str(exe), args=[], env=env, cwd=str(root))


def checked(result: object) -> object:
    """A variant that silently failed would look fast: refuse to time an error."""
    if getattr(result, "is_error", False):
        raise RuntimeError(f"tool call failed: {getattr(result, 'content', result)}")
    return result


def own_cpu() -> float:
    """CPU seconds of this process, all threads (the in-process engine runs in worker threads)."""
    return time.process_time()


def server_cpu(marker: str) -> Callable[[], float] | None:
    """CPU seconds (user + system, children excluded) of the server we spawned whose command line
    contains ``marker``: a load-independent measure of what the server itself spends per call."""
    for child in psutil.Process().children(recursive=True):
        try:
            if marker in " ".join(child.cmdline()):
                def read(proc: psutil.Process = child) -> float:
                    times = proc.cpu_times()
                    return float(times.user + times.system)
                return read
        except psutil.NoSuchProcess:
            continue
    return None


async def open_variants(stack: AsyncExitStack, root: Path, cfg: Path, commands: list[Command],
                        baseline: Path | None = None) -> tuple[dict[str, Variant], list[str]]:
    """Start every variant once; return them and the reasons for the ones skipped."""
    import parism

    engine = parism.create_engine(str(cfg))
    sandbox = engine.describe().sandbox or {}
    print(f"engine sandbox: level {sandbox.get('level')} ({sandbox.get('reason') or 'ok'})")
    parism_s = await stack.enter_async_context(session_for(parism_params(root, cfg)))
    floor_s = await stack.enter_async_context(session_for(floor_params(root)))
    # recorded once the other servers run: `ps aux` then lists about the processes it will list
    # during the calls (recorded before them, its answer was 40 % smaller than parism's)
    answers = root / "answers.json"
    await record_answers(engine, commands, answers)
    delivery_s = await stack.enter_async_context(
        session_for(script_params(root, "delivery_server.py", DELIVERY_SERVER, str(answers))))

    async def bare(argv: list[str], cwd: str) -> object:
        return subprocess.run(argv, cwd=cwd, capture_output=True, check=True)

    async def via_engine(argv: list[str], cwd: str) -> object:
        env = await engine.arun(argv[0], argv[1:], cwd)
        if not env.ok:
            raise RuntimeError(f"engine: {env.failure}")
        return env

    def via(session: ClientSession) -> Runner:
        """The ``run`` tool of a server that takes Parism's parameters (Parism, floor, delivery)."""
        async def call(argv: list[str], cwd: str) -> object:
            return checked(await session.call_tool("run", {"cmd": argv[0], "args": argv[1:], "cwd": cwd}))
        return call

    variants = {
        "bare": Variant(bare, None),
        "engine": Variant(via_engine, own_cpu),
        "parism": Variant(via(parism_s), server_cpu(f"--config {cfg}")),
        "floor": Variant(via(floor_s), server_cpu("floor_server.py")),
        "delivery": Variant(via(delivery_s), server_cpu("delivery_server.py")),
    }
    if baseline is not None:
        base_cfg = baseline_config(cfg)
        base_s = await stack.enter_async_context(session_for(parism_params(root, base_cfg, baseline)))
        variants["baseline"] = Variant(via(base_s), server_cpu(f"--config {base_cfg}"))
    skipped: list[str] = []
    shell = shell_params(root)
    if isinstance(shell, str):
        skipped.append(f"shell-mcp: {shell}")
    else:
        try:
            shell_s = await stack.enter_async_context(session_for(shell))

            async def via_shell(argv: list[str], cwd: str) -> object:
                return checked(await shell_s.call_tool("shell_execute", {"command": argv, "directory": cwd}))

            variants["shell-mcp"] = Variant(via_shell, server_cpu("mcp-shell-server"))
        except Exception as exc:  # report and continue: the comparison is optional
            skipped.append(f"shell-mcp: could not start: {type(exc).__name__}: {exc}")
    return variants, skipped


async def measure_calls(variants: Mapping[str, Variant], commands: list[Command], iterations: int) -> dict[tuple[str, str], Cell]:
    cells = {(c.label, name): Cell() for c in commands for name in variants}
    for c in commands:  # one warm-up call each (page cache, imports, parser registry)
        for v in variants.values():
            await v.run(c.argv, c.cwd)
    order = list(variants.items())
    shuffler = random.Random(1)
    for _ in range(iterations):
        for c in commands:
            # A fresh order every round: what one variant leaves running (the sandbox pool's
            # refill starts 25 ms after a call) must not always land on the same next variant.
            shuffler.shuffle(order)
            for name, v in order:
                cell = cells[(c.label, name)]
                cpu0 = v.cpu_s() if v.cpu_s else 0.0
                own0 = time.process_time()
                start = time.perf_counter()
                await v.run(c.argv, c.cwd)
                cell.samples_ms.append((time.perf_counter() - start) * 1000)
                if v.cpu_s:
                    cell.cpu_ms.append((v.cpu_s() - cpu0) * 1000)
                    if v.cpu_s is not own_cpu:
                        cell.client_cpu_ms.append((time.process_time() - own0) * 1000)
    return cells


async def cold_start_once(params: StdioServerParameters, marker: str) -> tuple[float, float]:
    """Wall ms from spawn to the tools/list answer, and the CPU ms the server had used by then
    (the load-independent part: imports, configuration, tool schemas)."""
    start = time.perf_counter()
    async with session_for(params) as session:
        await session.list_tools()
        elapsed = (time.perf_counter() - start) * 1000
        read = server_cpu(marker)
        cpu = read() * 1000 if read else float("nan")
    return elapsed, cpu


async def measure_cold(variants: Mapping[str, tuple[StdioServerParameters, str]], rounds: int) -> dict[str, Cell]:
    cells = {name: Cell() for name in variants}
    for _ in range(rounds):
        for name, (params, marker) in variants.items():
            wall, cpu = await cold_start_once(params, marker)
            cells[name].samples_ms.append(wall)
            cells[name].cpu_ms.append(cpu)
    return cells


def report_calls(cells: dict[tuple[str, str], Cell], commands: list[Command], names: list[str]) -> None:
    print("\nwall ms: median/p95 per call; srv CPU: mean CPU ms the server process (engine: this"
          " process) spent per call, the command itself excluded; cli CPU: the MCP client side")
    print(f"\n{'command':<26}{'variant':<14}{'median':>8}{'p95':>8}{'x bare':>8}{'- floor':>9}"
          f"{'x floor':>8}{'srv CPU':>9}{'cli CPU':>9}")
    for c in commands:
        bare = cells[(c.label, "bare")].median()
        floor = cells[(c.label, "floor")].median()
        for name in names:
            cell = cells[(c.label, name)]
            med = cell.median()
            print(f"{c.label:<26}{name:<14}{med:>8.2f}{cell.p95():>8.2f}{med / bare:>8.2f}"
                  f"{med - floor:>+9.2f}{med / floor:>8.2f}{cell.cpu():>9}{cell.client_cpu():>9}")
        parism = cells[(c.label, "parism")].median()
        layer = (parism - cells[(c.label, "engine")].median()) - (floor - bare)
        verdicts = [f"parism - floor = {parism - floor:+.2f} ms (target ≤ +3)",
                    f"MCP layer beyond the SDK floor = {layer:+.2f} ms wall"]
        srv = [cells[(c.label, n)].cpu_ms for n in ("parism", "engine", "floor")]
        delivery = cells[(c.label, "delivery")].median()
        verdicts.append(f"parism - delivery = {parism - delivery:+.2f} ms (Parism's own work); "
                        f"delivery - floor = {delivery - floor:+.2f} ms (the structured answer's price)")
        if all(srv):
            p_cpu, e_cpu, f_cpu = (statistics.fmean(x) for x in srv)
            verdicts.append(f"server CPU: parism {p_cpu:.2f} = engine {e_cpu:.2f} + MCP layer "
                            f"{p_cpu - e_cpu:.2f} (floor server {f_cpu:.2f}) ms")
        if (c.label, "shell-mcp") in cells:
            shell = cells[(c.label, "shell-mcp")].median()
            verdicts.append(f"parism/shell-mcp = {parism / shell:.2f} (target < 1)")
        if (c.label, "baseline") in cells:
            base = cells[(c.label, "baseline")].median()
            verdicts.append(f"baseline - floor = {base - floor:+.2f} ms → parism - floor = {parism - floor:+.2f} ms; "
                            f"parism/baseline = {parism / base:.2f}")
        print(f"{'':<26}" + "; ".join(verdicts))


def report_cold(cells: dict[str, Cell]) -> None:
    floor, floor_cpu = cells["floor"].median(), statistics.median(cells["floor"].cpu_ms)
    print(f"\n{'cold start (spawn → tools/list)':<34}{'median ms':>10}{'p95 ms':>9}{'- floor':>9}"
          f"{'srv CPU':>9}{'- floor':>9}")
    for name, cell in cells.items():
        cpu = statistics.median(cell.cpu_ms)
        print(f"{name:<34}{cell.median():>10.1f}{cell.p95():>9.1f}{cell.median() - floor:>+9.1f}"
              f"{cpu:>9.1f}{cpu - floor_cpu:>+9.1f}")
    parism, parism_cpu = cells["parism"].median(), statistics.median(cells["parism"].cpu_ms)
    own, own_cpu_ms = cells["floor-gc-off"].median(), statistics.median(cells["floor-gc-off"].cpu_ms)
    if "baseline" in cells:
        base = cells["baseline"].median()
        print(f"baseline - floor = {base - floor:+.1f} ms wall (parism - baseline = {parism - base:+.1f} ms)")
    print(f"parism - floor = {parism - floor:+.1f} ms wall, {parism_cpu - floor_cpu:+.1f} ms server CPU "
          f"(target ≤ +100); parism - floor-gc-off = {parism - own:+.1f} ms wall, "
          f"{parism_cpu - own_cpu_ms:+.1f} ms CPU (Parism's own start-up work)")


async def run_bench(iterations: int, cold_rounds: int, extra_variants: Mapping[str, Runner] | None,
                    only: str | None = None, baseline: Path | None = None) -> None:
    with tempfile.TemporaryDirectory(prefix="parism-bench-") as tmp:
        root = Path(tmp).resolve()
        root.chmod(0o755)  # the sandbox runs commands as an unprivileged user: let it mount this
        repo = make_repo(root)
        cfg = write_parism_config(root, repo)
        commands = bench_commands(root, repo, only)
        async with AsyncExitStack() as stack:
            variants, skipped = await open_variants(stack, root, cfg, commands, baseline)
            variants.update({name: Variant(run, own_cpu) for name, run in (extra_variants or {}).items()})
            for reason in skipped:
                print(f"skipped {reason}")
            print(f"{iterations} interleaved calls per cell; Python {sys.version.split()[0]}; "
                  f"{os.cpu_count()} CPUs; load {os.getloadavg()[0]:.2f}")
            window = CpuWindow()
            cells = await measure_calls(variants, commands, iterations)
            cpu = window.summary()
        report_calls(cells, commands, list(variants))
        print(cpu)
        if cold_rounds < 1:
            return
        servers = {"parism": (parism_params(root, cfg), f"--config {cfg}"),
                   "floor": (floor_params(root), "floor_server.py"),
                   "floor-gc-off": (floor_params(root, gc_off=True), "floor_server_gc_off.py")}
        if baseline is not None:
            base_cfg = baseline_config(cfg)
            servers["baseline"] = (parism_params(root, base_cfg, baseline), f"--config {base_cfg}")
        cold = await measure_cold(servers, cold_rounds)
        report_cold(cold)


def main(extra_variants: Mapping[str, Runner] | None = None, argv: list[str] | None = None) -> None:
    """Run the benchmark; ``extra_variants`` adds rows (name → async fn(argv, cwd))."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--cold", type=int, default=8, help="cold-start rounds per server (0: skip)")
    ap.add_argument("--only", choices=["ls", "ps", "git"], help="measure one command (more iterations, less time)")
    ap.add_argument("--baseline", type=Path, help="another checkout whose parism serve runs beside this one")
    ns = ap.parse_args(argv)
    baseline = ns.baseline.resolve() if ns.baseline else None
    if baseline is not None and not (baseline / "parism" / "__init__.py").exists():
        ap.error(f"--baseline {baseline}: no parism package there")
    asyncio.run(run_bench(ns.iterations, ns.cold, extra_variants, ns.only, baseline))


if __name__ == "__main__":
    sys.path.insert(0, str(REPO_ROOT))
    main()
