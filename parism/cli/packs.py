"""The parser-author workflow (contract §18): ``capture``, ``init-parser``, ``test``, ``add``.

``capture`` runs through the same guard, sandbox and redaction as ``run`` and writes a contract §19.1
manifest with a ``redactions`` log; ``init-parser`` scaffolds a pack whose own fixture passes
``parism test``; ``test`` replays fixtures offline in the pack's isolated worker; ``add`` checks a
pack in its worker (its name is read there), copies it to ``~/.parism/parsers/<name>`` — a running
server picks it up at its next re-scan — and prints the guard policy the command would need,
never widening the guard itself.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from parism.cli.common import EXIT_NOT_OK, EXIT_OK, EXIT_USAGE, split_command

HOME_PACKS = "~/.parism/parsers"
HOME_FIXTURES = "~/.parism/fixtures"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("capture", parents=[common], help="run a command and save its output as a fixture manifest")
    p.add_argument("command", nargs="+", help='the command: "ls -la" or ls -la')
    p.add_argument("-o", "--output", metavar="DIR", default=HOME_FIXTURES)
    p.set_defaults(handler=capture)
    p = sub.add_parser("init-parser", parents=[common], help="scaffold a parser pack")
    p.add_argument("name")
    p.add_argument("-d", "--dir", default=".", help="parent directory (default: the current one)")
    p.set_defaults(handler=init_parser)
    p = sub.add_parser("test", parents=[common], help="replay a pack's fixtures offline")
    p.add_argument("dir", nargs="?", default=".")
    p.set_defaults(handler=test)
    p = sub.add_parser("add", parents=[common], help="register a pack in ~/.parism/parsers")
    p.add_argument("path")
    p.set_defaults(handler=add)


def _limits(ns: argparse.Namespace) -> Any:
    from parism.config import load_config
    from parism.run.sandbox.identity import readable_by_calls
    from parism.packs.worker import Limits

    cfg = load_config(ns.config, project_access=readable_by_calls)
    s = cfg.settings.parsers
    caps = s.external_capabilities
    return Limits(time_ms=max(s.external_time_limit_ms, 2000), memory_mb=s.external_memory_limit_mb,
                  isolation=s.external_isolation, fs_read=tuple(map(tuple, caps.fs_read)),
                  env=tuple(map(tuple, caps.env)))


# -- capture -----------------------------------------------------------------------------------

def capture(ns: argparse.Namespace) -> int:
    import parism
    from parism.output.redact.capture import sanitize_capture

    argv = split_command(ns.command)
    engine = parism.create_engine(ns.config)
    try:
        env = engine.run(argv[0], argv[1:], format="json")
        if env.failure is not None and env.failure.kind in ("guard", "config") or env.guard_error is not None:
            print(f"parism: not captured: {env.failure.message if env.failure else env.guard_error}", file=sys.stderr)
            return EXIT_NOT_OK
        san = sanitize_capture(argv[0], argv[1:], env.stdout.raw, env.stderr.raw, redactor=engine.redactor)
    finally:
        engine.close()
    if san.withheld_reason:
        print(f"parism: not captured: {san.withheld_reason}", file=sys.stderr)
        return EXIT_NOT_OK
    from parism import __version__
    from parism.packs.fixtures import content_hash

    now = dt.datetime.now(dt.timezone.utc)
    ident = f"{san.command}-{now:%Y%m%d-%H%M%S}"
    manifest = {
        "manifest_version": 1, "id": ident, "captured_at": now.isoformat(timespec="seconds"),
        "tool": {"command": san.command, "args": san.args, **({"args_redacted": True} if san.args_redacted else {})},
        "exit": {"code": env.exitCode, "signal": env.signal}, "stdout": san.stdout, "stderr": san.stderr,
        "content_hash": content_hash(san.stdout), "versions": {"parism": __version__, "platform": sys.platform},
        "redactions": [r.__dict__ if hasattr(r, "__dict__") else dict(r) for r in san.redactions],
    }
    out = Path(os.path.expanduser(ns.output))
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{ident}.json"
    path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"Fixture saved: {path}")
    return EXIT_OK


# -- init-parser --------------------------------------------------------------------------------

TEMPLATE = '''"""Parser pack for `{name}`: one row per non-empty output line (edit parse() and Row)."""

from pydantic import BaseModel

from parism.packs.types import ParserPack, UnrecognizedOutputError


class Row(BaseModel):
    line: int
    text: str


class Result(BaseModel):
    rows: list[Row]


def parse(raw: str, args: list[str], ctx) -> dict:
    rows = [{{"line": i, "text": t}} for i, t in enumerate(raw.splitlines(), 1) if t.strip()]
    if raw.strip() and not rows:
        raise UnrecognizedOutputError("no line could be read")
    return {{"rows": rows}}


PACK = ParserPack(name="{name}", parse=parse, schema=Result, rows_key="rows", row_fields=("line", "text"),
                  accepted_flags={{}}, accepted_positionals={{"max": 0}})
'''


def init_parser(ns: argparse.Namespace) -> int:
    from parism.packs.fixtures import content_hash

    name = ns.name
    if not name.replace("-", "").replace("_", "").isalnum():
        print(f"parism: a pack name is letters, digits, '-' and '_', not {name!r}", file=sys.stderr)
        return EXIT_USAGE
    target = Path(ns.dir) / name
    if target.exists():
        print(f"parism: {target} exists already; nothing was written", file=sys.stderr)
        return EXIT_USAGE
    (target / "fixtures").mkdir(parents=True)
    (target / "parser.py").write_text(TEMPLATE.format(name=name), encoding="utf-8")
    stdout = "first line\nsecond line\n"
    manifest = {"manifest_version": 1, "id": f"{name}-example", "captured_at": "1970-01-01T00:00:00+00:00",
                "tool": {"command": name, "args": []}, "exit": {"code": 0, "signal": None},
                "stdout": stdout, "stderr": "", "content_hash": content_hash(stdout), "versions": {},
                "redactions": [],
                "expected": {"parsed": {"rows": [{"line": 1, "text": "first line"}, {"line": 2, "text": "second line"}]},
                             "reviewed_by": "parism init-parser", "note": "the template's own example; replace it"}}
    (target / "fixtures" / f"{name}-example.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    (target / "README.md").write_text(f"# {name}\n\nA Parism parser pack. `parism test {target}` replays "
                                      "fixtures/*.json; `parism capture \"<command>\"` records new ones "
                                      "(review the expected value, then set reviewed_by); `parism add .` "
                                      "registers it.\n", encoding="utf-8")
    print(f"created {target}/ (parser.py, fixtures/{name}-example.json, README.md)")
    return EXIT_OK


# -- test ----------------------------------------------------------------------------------------

def _pack_dirs(root: Path) -> list[Path]:
    if (root / "parser.py").is_file() or (root / "__init__.py").is_file():
        return [root]
    return sorted(d for d in root.iterdir() if d.is_dir() and ((d / "parser.py").is_file() or (d / "__init__.py").is_file()))


def test(ns: argparse.Namespace) -> int:
    from parism.packs import fixtures as fx
    from parism.packs.worker import PackFailure, Worker

    root = Path(ns.dir)
    if not root.is_dir():
        print(f"parism: {root} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    dirs = _pack_dirs(root.resolve())
    if not dirs:
        print(f"parism: no pack (parser.py) in {root}", file=sys.stderr)
        return EXIT_NOT_OK
    limits = _limits(ns)
    counts = {"match": 0, "changed": 0, "unreviewed": 0, "error": 0, "suggestion_changed": 0}
    lines: list[str] = []
    for d in dirs:
        w = Worker(str(d), limits)
        try:
            desc = w.start()
        except PackFailure as exc:
            counts["error"] += 1
            lines.append(f"{d.name}  [pack] does not load: {exc.message}")
            continue
        try:
            cases = [(f"{desc['name']}#{i}", {"tool": {"command": desc["name"], "args": f["args"]}, "stdout": f["input"],
                      "expected": {"parsed": f["expected"], "reviewed_by": "PACK.fixtures"}})
                     for i, f in enumerate(w.call({"op": "fixtures"}).get("fixtures", []))]
            for path in sorted((d / "fixtures").glob("*.json")):
                data, problem = fx.load(path)
                if problem:
                    counts["error"] += 1
                    lines.append(f"{path.name}  [manifest] {problem}")
                    continue
                cases.append((path.stem, data))
            for ident, data in cases:
                _replay(w, desc, ident, data, counts, lines)
        finally:
            w.stop()
    reviewed = counts["match"] + counts["changed"]
    print(f"{sum(counts.values())} fixtures — of {reviewed} reviewed expectation(s): {counts['match']} match · "
          f"{counts['changed']} changed — {counts['unreviewed'] + counts['suggestion_changed']} unreviewed "
          f"({counts['suggestion_changed']} differ; a human must review them to make them a contract) — "
          f"{counts['error']} manifest or pack error(s)")
    for line in lines:
        print("  " + line)
    return EXIT_NOT_OK if counts["changed"] or counts["error"] else EXIT_OK


def _replay(w: Any, desc: dict[str, Any], ident: str, data: dict[str, Any], counts: dict[str, int],
            lines: list[str]) -> None:
    from parism.packs.fixtures import diff
    from parism.packs.worker import PackFailure

    exp = data.get("expected") or {}
    reviewed = bool(exp.get("reviewed_by"))
    try:
        ans = w.call({"op": "parse", "raw": data["stdout"], "args": data["tool"].get("args", []), "strict": True})
    except PackFailure as exc:
        ans = {"ok": False, "reason": exc.reason, "message": exc.message}
    if "parsed" in exp:
        problems = diff(exp["parsed"], ans["value"]) if ans.get("ok") else \
            [f"[parse] expected a value, got {ans.get('reason')}: {ans.get('message')}"]
    elif "failure" in exp:
        want = exp["failure"].get("reason")
        problems = [] if (not ans.get("ok") and ans.get("reason") == want) else [f"[failure] expected {want}, got {ans.get('reason', 'a value')}"]
    else:
        counts["unreviewed"] += 1
        lines.append(f"{ident} ({desc['name']})  no expectation yet: {json.dumps(ans.get('value'))[:80]}")
        return
    if not problems:
        counts["match" if reviewed else "unreviewed"] += 1
        return
    counts["changed" if reviewed else "suggestion_changed"] += 1
    tag = "" if reviewed else "  (unreviewed: not a failure)"
    lines.append(f"{ident} ({desc['name']}){tag}")
    lines += [f"    {p}" for p in problems[:20]]


# -- add -----------------------------------------------------------------------------------------

def add(ns: argparse.Namespace) -> int:
    from parism.packs.worker import PackFailure, Worker

    src = Path(ns.path).resolve()
    if not src.is_dir():
        print(f"parism: {src} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    w = Worker(str(src), _limits(ns))
    try:
        desc = w.start()
    except PackFailure as exc:
        print(f"parism: the pack does not load: {exc.message}", file=sys.stderr)
        return EXIT_NOT_OK
    finally:
        w.stop()
    name = desc["name"]
    dest = Path(os.path.expanduser(HOME_PACKS)) / name
    if dest.resolve() != src:
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    print(f"added pack '{name}' → {dest} (a running server picks it up within a second)")
    print(policy_needed(name, desc))
    return EXIT_OK


def policy_needed(name: str, desc: dict[str, Any]) -> str:
    """The configuration the guard would need to run the command; printed, never written."""
    flags = ", ".join(f'"{k}" = "{v}"' for k, v in sorted((desc.get("accepted_flags") or {}).items()))
    max_pos = (desc.get("accepted_positionals") or {}).get("max", 0)
    sdl = "single_dash_long = true\n" if desc.get("single_dash_long") else ""
    return ("The guard does not allow this command by itself. To let agents run it, add to your global "
            "~/.parism/config.toml (review it first):\n\n"
            f"[guard]\nallowed_commands = [..., \"{name}\"]\n\n[guard.command_policies.{name}]\n"
            f"positionals = \"{'any' if max_pos else 'none'}\"\nflags = {{ {flags} }}\n{sdl}")
