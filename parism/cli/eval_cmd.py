"""``parism eval [scenario] [--verbose] [--scenarios FILE]``: the three layers of contract §18.

Each item is judged on its own per layer — **execution** (did it really run; the guard's
``blocked`` is told apart from an exec failure), **parse** (a structured read; a missing parser is
told apart from a parse failure), **task** (did it achieve what it was for) — and compared with
the expectation the scenario file declares. The seed counted only ``ok``, which scored a blocked
command and a broken parser the same. Scenarios are data (``parism/data/eval_scenarios.toml``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from parism.cli.common import EXIT_NOT_OK, EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from parism.wire.envelope import Envelope

SHIPPED = Path(__file__).resolve().parents[1] / "data" / "eval_scenarios.toml"
LAYERS = ("execution", "parse", "task")
_ITEM_KEYS = {"cmd", "args", "setup", "task", "expect"}


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("eval", parents=[common], help="score commands on execution / parse / task")
    p.add_argument("scenario", nargs="?", help="one scenario (default: all)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every item, not only misses")
    p.add_argument("--scenarios", metavar="FILE", type=Path, default=SHIPPED,
                   help="scenario file (TOML; default: the shipped one)")
    p.set_defaults(handler=main)


@dataclass
class Outcome:
    scenario: str
    label: str
    got: dict[str, Any]
    expect: dict[str, Any]
    misses: list[str] = field(default_factory=list)


def judge(env: Envelope, task: str | None) -> dict[str, Any]:
    """The three layers read from one envelope."""
    f = env.failure
    if f is not None and f.kind == "guard":
        execution = "blocked"
    elif f is not None and f.kind in ("exec", "config"):
        execution = f.reason
    else:
        execution = "ok"
    out = env.stdout
    if execution != "ok":
        parse = "skipped"
    elif out.parsed is not None:
        parse = "parsed"
    elif out.parse_error is not None and out.parse_error.reason != "parser_not_found":
        parse = "parse_failure"
    else:
        parse = "missing_parser"
    got: dict[str, Any] = {"execution": execution, "parse": parse}
    if task is not None:
        got["task"] = execution == "ok" and _task_done(task, out.raw, out.parsed)
    return got


def _task_done(task: str, raw: str, parsed: Any) -> bool:
    if task == "output":
        return bool(raw.strip())
    if task == "empty":  # looking for something absent: only an empty answer is a success
        return not raw.strip()
    if task.startswith("contains:"):
        return task.removeprefix("contains:") in raw
    raise ValueError(f"unknown task {task!r}; valid: output, empty, contains:TEXT")


def load(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Scenario name -> items, every item checked so a typo is an error, not a silent skip."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    scenarios: dict[str, list[dict[str, Any]]] = {}
    for name, body in data.items():
        items = body.get("items") if isinstance(body, dict) else None
        if not isinstance(items, list):
            raise ValueError(f"scenario {name!r}: needs an 'items' list")
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("cmd"), str):
                raise ValueError(f"scenario {name!r}: every item needs a 'cmd' string")
            if unknown := set(item) - _ITEM_KEYS:
                raise ValueError(f"scenario {name!r}: unknown keys {sorted(unknown)}; "
                                 f"valid: {sorted(_ITEM_KEYS)}")
            if bad := set(item.get("expect", {})) - set(LAYERS):
                raise ValueError(f"scenario {name!r}: unknown layers {sorted(bad)}; valid: {list(LAYERS)}")
            if item.get("setup") not in (None, "git"):
                raise ValueError(f"scenario {name!r}: unknown setup {item['setup']!r}; valid: git")
            if (task := item.get("task")) is not None:
                _task_done(task, "", None)  # raises on an unknown task
        scenarios[name] = items
    return scenarios


def _run_item(engine: Any, scenario: str, item: dict[str, Any]) -> Outcome:
    args = list(item.get("args", []))
    with tempfile.TemporaryDirectory(prefix="item-", dir=".") as rel:
        cwd = str(Path(rel).resolve())
        if item.get("setup") == "git":
            subprocess.run(["git", "init", "-q", cwd], check=True)
        env = engine.run(item["cmd"], args, cwd, format="json")
    expect = dict(item.get("expect", {}))
    got = judge(env, item.get("task"))
    out = Outcome(scenario, " ".join([item["cmd"], *args]), got, expect)
    out.misses = [layer for layer in LAYERS if layer in expect and got.get(layer) != expect[layer]]
    return out


def main(ns: argparse.Namespace) -> int:
    import parism

    try:
        scenarios = load(ns.scenarios)
    except (OSError, ValueError) as exc:
        print(f"parism: eval: {ns.scenarios}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if ns.scenario is not None:
        if ns.scenario not in scenarios:
            print(f"parism: eval: unknown scenario {ns.scenario!r}; valid: {', '.join(scenarios)}",
                  file=sys.stderr)
            return EXIT_USAGE
        scenarios = {ns.scenario: scenarios[ns.scenario]}
    here = os.getcwd()
    # the engine allows paths under the cwd it starts in: start it in a scratch directory so each
    # item's own fresh directory is inside, and nothing the user has is touched
    with tempfile.TemporaryDirectory(prefix="parism-eval-") as scratch:
        os.chdir(scratch)
        try:
            engine = parism.create_engine(ns.config)
            try:
                outcomes = [_run_item(engine, name, item)
                            for name, items in scenarios.items() for item in items]
            finally:
                engine.close()
        finally:
            os.chdir(here)
    sys.stdout.write(_report(outcomes, ns.verbose))
    return EXIT_NOT_OK if any(o.misses for o in outcomes) else EXIT_OK


def _report(outcomes: list[Outcome], verbose: bool) -> str:
    lines = []
    for o in outcomes:
        if verbose or o.misses:
            cells = "  ".join(f"{layer}={o.got.get(layer, '-')}"
                              + (f" (expected {o.expect[layer]})" if layer in o.misses else "")
                              for layer in LAYERS)
            lines.append(f"{'MISS' if o.misses else 'ok  '} {o.scenario}: {o.label}  {cells}")
    for name in dict.fromkeys(o.scenario for o in outcomes):
        mine = [o for o in outcomes if o.scenario == name]
        totals = []
        for layer in LAYERS:
            judged = [o for o in mine if layer in o.expect]
            met = sum(layer not in o.misses for o in judged)
            totals.append(f"{layer} {met}/{len(judged)}")
        lines.append(f"{name}: " + ", ".join(totals))
    misses = sum(bool(o.misses) for o in outcomes)
    lines.append(f"{len(outcomes)} items, {misses} differ from their expectation")
    return "\n".join(lines) + "\n"
