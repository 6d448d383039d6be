#!/usr/bin/env python3
"""What the model reads, in tokens, against the raw text of the same command.

Every answer is fetched over MCP stdio from a real ``parism serve`` through the SDK client: the
text block (``content[0].text``, what most clients hand the model) and ``structuredContent`` as
Claude Code hands it over (``JSON.stringify``: compact JSON).  Counted with o200k_base (npm
``gpt-tokenizer`` through node, ``scripts/tokenizer``) and ``parism/approx``; ratios are to the
raw text of the same execution (``format: "json"``'s ``stdout.raw``).

Commands: ``ls -la`` of a directory of 200 mixed entries (built here: files, directories,
symlinks, fifos, hidden files, sizes and modification times spread over two years), ``ls -la
/usr/bin``, ``ps aux``, ``git log -n 50`` of a throwaway repository and of this project's own
history, ``df -h``.  Targets: the default answer ≤ 1.0× raw for both readers; 500 entries with
``select: ["name", "size_bytes"], limit: 50`` ≤ 800 tokens.

    .venv/bin/python scripts/bench_tokens.py          (scripts/bootstrap --test installs node's part)
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_overhead import make_repo, parism_params, session_for  # noqa: E402
from tokenizer import o200k  # noqa: E402

from parism.output.shape.tokens import approx  # noqa: E402

WORDS = ["report", "build", "main", "config", "notes", "data", "index", "util", "test", "server", "client",
         "draft", "final", "backup", "image", "module", "schema", "readme", "changelog", "release"]
EXTS = [".py", ".txt", ".json", ".md", ".tar.gz", ".log", ".csv", "", ".sh", ".toml"]
FORMS = {"default": {}, "json": {"format": "json"}, "compact": {"format": "compact"},
         "json-no-raw": {"format": "json-no-raw"}}


def mixed_dir(root: Path, n: int = 200, seed: int = 7) -> Path:
    """``n`` entries like a working directory: mostly files of many sizes, directories, symlinks,
    a few fifos and hidden files, modification times over two years (old ones print a year)."""
    rnd = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    now = time.time()
    for i in range(n):
        name = f"{rnd.choice(WORDS)}{rnd.choice(['_', '-', ''])}{rnd.choice(WORDS)}{i}{rnd.choice(EXTS)}"
        if i % 25 == 0:
            name = "." + name
        path = root / name
        kind = rnd.random()
        if kind < 0.68:
            path.write_bytes(b"x" * rnd.choice([0, 17, 512, 1834, 4096, 9000, 65536, 250_000, 1_300_000]))
            path.chmod(rnd.choice([0o644, 0o644, 0o755, 0o600, 0o664, 0o640]))
        elif kind < 0.88:
            path.mkdir()
        elif kind < 0.97:
            path.symlink_to(f"../shared/{rnd.choice(WORDS)}{rnd.choice(EXTS)}")
        else:
            os.mkfifo(path)
        if not path.is_symlink():
            stamp = now - rnd.choice([rnd.uniform(0, 3e5), rnd.uniform(0, 1.5e7), rnd.uniform(1.6e7, 6e7)])
            os.utime(path, (stamp, stamp))
    return root


def clone_self(root: Path) -> Path | None:
    """A clone of this project (real commit messages), or None outside a git checkout."""
    repo = root / "self"
    done = subprocess.run(["git", "clone", "-q", "--no-local", str(HERE.parent), str(repo)], capture_output=True)
    return repo if done.returncode == 0 else None


def stringify(value: Any) -> str:
    """``JSON.stringify(structuredContent)``: compact, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


async def answers(cases: list[tuple[str, list[str], str]], cfg: Path, root: Path) -> dict[str, dict[str, str]]:
    """Per case: raw, and the text block / structuredContent of each form over MCP."""
    out: dict[str, dict[str, str]] = {}
    async with session_for(parism_params(root, cfg)) as session:
        for label, argv, cwd in cases:
            row: dict[str, str] = {}
            for form, extra in FORMS.items():
                res = await session.call_tool("run", {"cmd": argv[0], "args": argv[1:], "cwd": cwd, **extra})
                if res.is_error:
                    raise RuntimeError(f"{label} {form}: {res.content}")
                row[f"{form}:text"] = res.content[0].text  # type: ignore[union-attr]
                row[f"{form}:structured"] = stringify(res.structured_content)
                if form == "json":
                    row["raw"] = res.structured_content["stdout"]["raw"]  # type: ignore[index]
            if argv[0] == "ls":
                res = await session.call_tool("run", {"cmd": argv[0], "args": argv[1:], "cwd": cwd,
                                                      "select": ["name", "size_bytes"], "limit": 50})
                row["select+limit:text"] = res.content[0].text  # type: ignore[union-attr]
                row["select+limit:structured"] = stringify(res.structured_content)
            out[label] = row
    return out


def table(rows: dict[str, dict[str, str]]) -> list[str]:
    keys = [(label, k) for label, row in rows.items() for k in row]
    counts = dict(zip(keys, o200k.count_many([rows[label][k] for label, k in keys])))
    cols = ["raw", "default:text", "default:structured", "json:structured", "compact:structured",
            "json-no-raw:structured", "select+limit:structured"]
    lines = ["| command | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for label, row in rows.items():
        raw = counts[(label, "raw")]
        cells = []
        for c in cols:
            if c not in row:
                cells.append("-")
                continue
            n = counts[(label, c)]
            cells.append(f"{n:,} / {approx(row[c]):,}" + ("" if c == "raw" else f" ({n / raw:.2f}×)"))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("cells: o200k / parism-approx tokens (ratio to raw, o200k); text = MCP text block, "
                 "structured = JSON.stringify(structuredContent)")
    verdicts = []
    for label, row in rows.items():
        raw = counts[(label, "raw")]
        worst = max(counts[(label, "default:text")], counts[(label, "default:structured")])
        verdicts.append(f"{label}: default ≤ raw: {'yes' if worst <= raw else 'NO'} ({worst / raw:.2f}×)")
    return lines + verdicts


def main() -> None:
    why = o200k.available()
    if why is not None:
        sys.exit(f"bench_tokens: {why}")
    with tempfile.TemporaryDirectory(prefix="bench-tokens-") as tmp:
        root = Path(tmp)
        mixed = mixed_dir(root / "mixed")
        big = mixed_dir(root / "five-hundred", n=500, seed=11)
        repo = make_repo(root)
        own = clone_self(root)
        cfg = root / "parism.toml"
        paths = [str(p) for p in (root, repo, "/usr/bin")]
        cfg.write_text(f"[guard]\nallowed_paths = {json.dumps(paths)}\nmax_output_bytes = 1048576\n")
        cases = [("ls -la (200 mixed)", ["ls", "-la"], str(mixed)), ("ls -la (500 mixed)", ["ls", "-la"], str(big)),
                 ("ls -la /usr/bin", ["ls", "-la", "/usr/bin"], str(root)), ("ps aux", ["ps", "aux"], str(root)),
                 ("git log -n 50 (bench repo)", ["git", "log", "-n", "50"], str(repo)),
                 ("df -h", ["df", "-h"], str(root))]
        if own is not None:
            cases.insert(5, ("git log -n 50 (this project)", ["git", "log", "-n", "50"], str(own)))
        rows = asyncio.run(answers(cases, cfg, root))
        print("\n".join(table(rows)))
        sel = o200k.count(rows["ls -la (500 mixed)"]["select+limit:structured"])
        print(f"500 entries, select name,size_bytes + limit 50: {sel} tokens (target ≤ 800: "
              f"{'met' if sel <= 800 else 'MISSED'})")


if __name__ == "__main__":
    main()
