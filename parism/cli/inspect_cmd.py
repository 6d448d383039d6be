"""``parism inspect <command> [args…]``: raw / parsed / compact side by side with token counts.

The command goes through the same engine, guard, sandbox and redaction as ``run`` (contract §18
[rec]: the seed's inspect bypassed all three). Token counts are what an agent would pay for the
wire text of each view: the contract's approx tokenizer always, o200k when node and the npm
``gpt-tokenizer`` package are installed under ``scripts/tokenizer`` (tiktoken cannot fetch its
vocabulary offline), otherwise ``"unavailable"`` rather than a guess.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from parism.cli.common import EXIT_USAGE, exit_status, split_command

_COUNTER = Path(__file__).resolve().parents[2] / "scripts" / "tokenizer" / "count.js"
UNAVAILABLE = "unavailable"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("inspect", parents=[common],
                       help="show raw / parsed / compact output with token counts")
    p.add_argument("--cwd", help="working directory (default: the current one)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    # REMAINDER: the command's own flags (ls -la) are its, not ours; our options come first
    p.add_argument("command", nargs=argparse.REMAINDER, help='the command: "ls -la" or ls -la')
    p.set_defaults(handler=main)


def approx_tokens(text: str) -> int:
    """``parism/approx`` (:func:`parism.output.shape.tokens.approx`: the budget's own count)."""
    from parism.output.shape.tokens import approx

    return approx(text)


def o200k_tokens(texts: list[str]) -> list[int] | None:
    """o200k_base counts from ``scripts/tokenizer/count.js``; ``None`` when it is not installed."""
    node = shutil.which("node")
    if node is None or not (_COUNTER.parent / "node_modules" / "gpt-tokenizer").is_dir():
        return None
    try:
        done = subprocess.run([node, str(_COUNTER)], input=json.dumps(texts), capture_output=True,
                              text=True, timeout=30, check=True)
        counts = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return counts if isinstance(counts, list) and len(counts) == len(texts) else None


def _wire(value: Any) -> str:
    """The text the agent receives for a parsed value (the envelope's own JSON layout)."""
    return json.dumps(value, ensure_ascii=False)


def main(ns: argparse.Namespace) -> int:
    import parism

    words = ns.command[1:] if ns.command[:1] == ["--"] else ns.command
    if not words:
        print("parism: inspect: a command is required", file=sys.stderr)
        return EXIT_USAGE
    argv = split_command(words)
    engine = parism.create_engine(ns.config)
    try:
        full = engine.run(argv[0], argv[1:], ns.cwd, format="json")
        compact = engine.run(argv[0], argv[1:], ns.cwd, format="compact")
    finally:
        engine.close()
    views = {"raw": (full.stdout.raw, full.stdout.raw),
             "parsed": (_wire(full.stdout.parsed), full.stdout.parsed),
             "compact": (_wire(compact.stdout.parsed), compact.stdout.parsed)}
    texts = [text for text, _ in views.values()]
    o200k = o200k_tokens(texts)
    report = {
        "cmd": full.cmd, "args": full.args, "ok": full.ok,
        "failure": full.failure.to_wire() if full.failure else None,
        "parse_error": full.stdout.parse_error.to_wire() if full.stdout.parse_error else None,
        "tokenizers": {"approx": "parism/approx 2.0.0",
                       "o200k": "gpt-tokenizer o200k_base" if o200k else UNAVAILABLE},
        "views": {name: {"value": value, "chars": len(text), "tokens": {
            "approx": approx_tokens(text), "o200k": o200k[i] if o200k else UNAVAILABLE}}
            for i, (name, (text, value)) in enumerate(views.items())},
    }
    sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=2) + "\n" if ns.json
                     else _table(report))
    return exit_status(full.ok, full.failure)


def _table(report: dict[str, Any]) -> str:
    """Counts first (one row per view), then each view's text under its own heading."""
    views = report["views"]
    lines = [f"$ {' '.join([report['cmd'], *report['args']])}"
             + ("" if report["failure"] is None else f"   [{report['failure']['kind']}: "
                f"{report['failure']['reason']}]"),
             f"{'view':<8} {'chars':>8} {'approx':>8} {'o200k':>12}"]
    for name, v in views.items():
        t = v["tokens"]
        lines.append(f"{name:<8} {v['chars']:>8} {t['approx']:>8} {t['o200k']!s:>12}")
    for name, v in views.items():
        body = v["value"] if name == "raw" else json.dumps(v["value"], ensure_ascii=False, indent=2)
        lines += ["", f"== {name.upper()} ==", body.rstrip("\n")]
    return "\n".join(lines) + "\n"
