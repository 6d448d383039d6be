#!/usr/bin/env python3
"""What the model reads, in tokens, against the raw text of the same command.

Every answer is fetched over MCP stdio from a real ``parism serve`` through the SDK client: the
text block (``content[0].text``, what most clients hand the model) and ``structuredContent`` as
Claude Code hands it over (``JSON.stringify``: compact JSON).  Counted with o200k_base (npm
``gpt-tokenizer`` through node, ``scripts/tokenizer``) and ``parism/approx``; ratios are to the
raw text of the same execution (``format: "json"``'s ``stdout.raw``).

The eleven commands of issue #26 (:func:`eleven`): ``ls -la`` of a directory of 200 mixed
entries (files, directories, symlinks, fifos, hidden files, sizes and modification times spread
over two years, built here), ``ps aux``, ``git log -n 20``, ``git status`` and ``git diff`` of a
generated project with changes, ``df -h``, ``free -m``, ``find . -name '*.py'``, ``grep -rn``,
``cat`` and ``wc -l`` of its files.  Then the older cases (``ls -la`` of 500 entries with ``select``
+ ``limit``, ``ls -la /usr/bin``, ``git log -n 50`` of this project) and the paging count: how
many calls (``run`` with ``budget: {max_tokens: 2000}, retain: true``, then ``fetch_result``
until no cursor) page ``ls -la /usr/bin``, and their tokens.
Targets: the default answer ≤ raw + 80 tokens, and ≤ 1.0× raw once raw ≥ 1,000 tokens, for both
readers; select+limit ≤ 800 tokens; /usr/bin in ≤ 20 calls.
``--checkout DIR`` serves another checkout (e.g. ``git worktree add /tmp/old main``): the
"before" column of a change.

    .venv/bin/python scripts/bench_tokens.py          (scripts/bootstrap --test installs node's part)
"""

from __future__ import annotations

import argparse
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


def source_tree(root: Path, files: int = 24, seed: int = 5) -> Path:
    """A small generated Python project, committed, then changed: three files edited (one staged),
    two added untracked — what ``git status``/``git diff``/``find``/``grep``/``cat``/``wc`` read."""
    rnd = random.Random(seed)
    repo = root / "project"
    (repo / "src" / "app").mkdir(parents=True)
    (repo / "tests").mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    def body(n: int) -> str:
        out = [f'"""The {rnd.choice(WORDS)} {rnd.choice(WORDS)} module."""', "", "import os", ""]
        for _ in range(n):
            name, arg = f"{rnd.choice(WORDS)}_{rnd.choice(WORDS)}", rnd.choice(WORDS)
            out += [f"def {name}({arg}, limit=10):", f'    """Return the {rnd.choice(WORDS)} of {arg}."""',
                    f"    value = os.environ.get('{arg.upper()}', '{rnd.choice(WORDS)}')",
                    f"    return [value] * min(limit, {rnd.randint(1, 99)})", ""]
        return "\n".join(out) + "\n"

    paths = [repo / ("src/app" if i % 3 else "tests") / f"{rnd.choice(WORDS)}_{i}.py" for i in range(files)]
    for path in paths:
        path.write_text(body(rnd.randint(2, 6)))
    (repo / "README.md").write_text("# project\n\nA generated project for the token benchmark.\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "initial import")
    for path in paths[:3]:
        lines = path.read_text().splitlines(keepends=True)
        lines[1:1] = ["# changed by the benchmark\n"]
        lines[-3] = lines[-3].replace("limit", "count")
        path.write_text("".join(lines))
    git("add", str(paths[0]))
    (repo / "src" / "app" / "new_module.py").write_text(body(2))
    (repo / "NOTES.txt").write_text("todo\n")
    return repo


def eleven(mixed: Path, repo: Path, project: Path) -> list[tuple[str, list[str], str]]:
    """The eleven commands of issue #26: (label, argv, cwd)."""
    files = sorted(str(p.relative_to(project)) for p in (project / "src" / "app").glob("*.py"))
    first = files[0]
    return [
        ("ls -la", ["ls", "-la"], str(mixed)),
        ("ps aux", ["ps", "aux"], str(mixed)),
        ("git log -n 20", ["git", "log", "-n", "20"], str(repo)),
        ("git status", ["git", "status"], str(project)),
        ("git diff", ["git", "diff"], str(project)),
        ("df -h", ["df", "-h"], str(mixed)),
        ("free -m", ["free", "-m"], str(mixed)),
        ("find -name", ["find", ".", "-name", "*.py"], str(project)),
        ("grep -rn", ["grep", "-rn", "def ", "src"], str(project)),
        ("cat", ["cat", first], str(project)),
        ("wc -l", ["wc", "-l", *files[:8]], str(project)),
    ]


def stringify(value: Any) -> str:
    """``JSON.stringify(structuredContent)``: compact, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


async def answers(cases: list[tuple[str, list[str], str]], cfg: Path, root: Path,
                  checkout: Path) -> tuple[dict[str, dict[str, str]], dict[str, Any]]:
    """Per case: raw, and the text block / structuredContent of each form over MCP; then the
    /usr/bin paging (calls and every answer's text)."""
    out: dict[str, dict[str, str]] = {}
    async with session_for(parism_params(root, cfg, checkout)) as session:
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
            if argv[0] == "ls" and "500" in label:
                res = await session.call_tool("run", {"cmd": argv[0], "args": argv[1:], "cwd": cwd,
                                                      "select": ["name", "size_bytes"], "limit": 50})
                row["select+limit:text"] = res.content[0].text  # type: ignore[union-attr]
                row["select+limit:structured"] = stringify(res.structured_content)
            out[label] = row
        paging = await page_usr_bin(session, str(root))
    return out, paging


async def page_usr_bin(session: Any, cwd: str, max_tokens: int = 2000) -> dict[str, Any]:
    """``ls -la /usr/bin`` under ``budget.max_tokens``: run, then fetch_result until no cursor."""
    res = await session.call_tool("run", {"cmd": "ls", "args": ["-la", "/usr/bin"], "cwd": cwd, "retain": True,
                                          "budget": {"max_tokens": max_tokens}})
    texts = [res.content[0].text]
    env = res.structured_content
    if res.is_error:
        return {"calls": 1, "texts": texts, "rows": 0, "refused": env.get("failure") if env else texts[0]}
    rows = _page_rows(env)
    while (cont := env.get("continuation")) and cont.get("cursor") and len(texts) < 1000:
        res = await session.call_tool("fetch_result", {"result_id": cont["result_id"], "cursor": cont["cursor"]})
        texts.append(res.content[0].text)
        env = res.structured_content
        rows += _page_rows(env)
    return {"calls": len(texts), "texts": texts, "rows": rows, "refused": None}


def _page_rows(env: dict[str, Any]) -> int:
    entries = (env.get("stdout", {}).get("parsed") or {}).get("entries")
    return len(entries["rows"]) if isinstance(entries, dict) else len(entries or [])


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
            cells.append(f"{n:,} / {approx(row[c]):,}" + ("" if c == "raw" else f" ({n / max(raw, 1):.2f}×)"))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("cells: o200k / parism-approx tokens (ratio to raw, o200k); text = MCP text block, "
                 "structured = JSON.stringify(structuredContent)")
    for label, row in rows.items():
        raw = counts[(label, "raw")]
        worst = max(counts[(label, "default:text")], counts[(label, "default:structured")])
        bound = raw if raw >= 1000 else raw + 80
        lines.append(f"{label}: default {worst} ≤ {'raw' if raw >= 1000 else 'raw + 80'} ({bound}): "
                     f"{'yes' if worst <= bound else 'NO'}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkout", type=Path, default=HERE.parent, help="serve this checkout (default: this one)")
    parser.add_argument("--only-eleven", action="store_true", help="the eleven commands and the paging only")
    ns = parser.parse_args()
    why = o200k.available()
    if why is not None:
        sys.exit(f"bench_tokens: {why}")
    with tempfile.TemporaryDirectory(prefix="bench-tokens-") as tmp:
        root = Path(tmp)
        mixed = mixed_dir(root / "mixed")
        repo = make_repo(root)
        project = source_tree(root)
        cfg = root / "parism.toml"
        paths = [str(p) for p in (root, repo, "/usr/bin")]
        cfg.write_text(f"[guard]\nallowed_paths = {json.dumps(paths)}\nmax_output_bytes = 1048576\n")
        cases = eleven(mixed, repo, project)
        if not ns.only_eleven:
            big = mixed_dir(root / "five-hundred", n=500, seed=11)
            cases += [("ls -la (500 mixed)", ["ls", "-la"], str(big)),
                      ("ls -la /usr/bin", ["ls", "-la", "/usr/bin"], str(root)),
                      ("git log -n 50 (bench repo)", ["git", "log", "-n", "50"], str(repo))]
            own = clone_self(root)
            if own is not None:
                cases.append(("git log -n 50 (this project)", ["git", "log", "-n", "50"], str(own)))
        rows, paging = asyncio.run(answers(cases, cfg, root, ns.checkout.resolve()))
        print(f"checkout: {ns.checkout.resolve()}")
        print("\n".join(table(rows)))
        if "ls -la (500 mixed)" in rows:
            sel = o200k.count(rows["ls -la (500 mixed)"]["select+limit:structured"])
            print(f"500 entries, select name,size_bytes + limit 50: {sel} tokens (target ≤ 800: "
                  f"{'met' if sel <= 800 else 'MISSED'})")
        total = sum(o200k.count_many(paging["texts"]))
        print(f"paging ls -la /usr/bin, budget 2000: {paging['calls']} call(s), {paging['rows']} rows, "
              f"{total:,} o200k tokens in all (target ≤ 20 calls: {'met' if paging['calls'] <= 20 else 'MISSED'})"
              + (f"; refused: {paging['refused']}" if paging["refused"] else ""))


if __name__ == "__main__":
    main()
