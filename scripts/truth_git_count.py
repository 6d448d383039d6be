#!/usr/bin/env python3
"""Count the live truth cases of issue #25's git/find parts — right / wrong / refused — for the
Parism tree on PYTHONPATH (run it once with this tree, once with an old one).

Each case is one command run through the real engine, judged against the system's own
interfaces, never against Parism: ``git for-each-ref`` (branch upstreams), plain git (status,
diff, log with ``git submodule add`` submodules, populated and not), ``os.lstat``/``os.walk``
(``find -printf``, ``find -ls``).  ``refused`` is any failure or parse error; ``wrong`` a
parsed answer that differs from the truth.

    PYTHONPATH=. .venv/bin/python scripts/truth_git_count.py
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import parism

ENV = {"LC_ALL": "C.UTF-8", "TZ": "UTC", "PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1",
       "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": "/nonexistent", "GIT_AUTHOR_NAME": "A",
       "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@x"}


def sh(cwd: Path, *args: str) -> str:
    return subprocess.run(list(args), cwd=cwd, env=ENV, capture_output=True, check=True).stdout.decode()


def commit(work: Path, subject: str) -> None:
    (work / "f.txt").write_text(subject + "\n")
    sh(work, "git", "add", "f.txt")
    sh(work, "git", "commit", "-q", "-m", subject)


def branches_repo(root: Path) -> Path:
    origin, work = root / "origin.git", root / "work"
    sh(root, "git", "init", "-q", "--bare", "-b", "main", str(origin))
    sh(root, "git", "init", "-q", "-b", "main", str(work))
    commit(work, "base")
    sh(work, "git", "remote", "add", "origin", str(origin))
    sh(work, "git", "push", "-q", "-u", "origin", "main")
    commit(work, "[origin/main: behind 7] own")
    for name, subject in (("fake", "[fake: ahead 5] subject"), ("imitate", "[origin/main] imitation"),
                          ("slash", "[origin/x: gone] looks gone"),
                          ("sneaky", "[ahead 2] imitates -v")):
        sh(work, "git", "checkout", "-q", "-b", name, "main")
        commit(work, subject)
    sh(work, "git", "checkout", "-q", "-b", "local", "main")
    sh(work, "git", "branch", "-q", "--set-upstream-to=main", "local")
    commit(work, "[main: ahead 3] on local")
    sh(work, "git", "checkout", "-q", "-b", "feat", "main")
    commit(work, "[origin/main: ahead 9] trick")
    sh(work, "git", "push", "-q", "-u", "origin", "feat")
    sh(work, "git", "checkout", "-q", "main")
    return work


def track(t: str) -> dict[str, Any]:
    if t == "[gone]":
        return {"gone": True}
    t = t.strip("[]")
    out = {"ahead": 0, "behind": 0}
    for part in filter(None, t.split(", ")):
        word, n = part.split()
        out[word] = int(n)
    return out


def judge_branches(env: Any, work: Path, very: bool) -> str:
    rows = {b["name"]: b for b in env.stdout.parsed["branches"]}
    truth = sh(work, "git", "for-each-ref", "--format=%(refname:lstrip=2)%00%(upstream:short)%00%(upstream:track)"
               "%00%(contents:subject)", "refs/heads/")
    for line in truth.splitlines():
        name, up, tr, subject = line.split("\0")
        row = rows.get(name, {})
        if row.get("message") != subject or (very and row.get("upstream") != (up or None)):
            return "wrong"
        if not up and any(k in row for k in ("ahead", "behind", "gone")):
            return "wrong"
        if up and (tr or very) and any(row.get(k) != v for k, v in track(tr).items()):
            return "wrong"
    return "right"


def submodule_repos(root: Path) -> tuple[Path, Path]:
    lib, top = root / "lib", root / "top"
    for repo in (lib, top):
        sh(root, "git", "init", "-q", "-b", "main", str(repo))
        (repo / "data.txt").write_text("one\n")
        sh(repo, "git", "add", ".")
        sh(repo, "git", "commit", "-q", "-m", "first")
    sh(top, "git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", "../lib", "sub")
    sh(top, "git", "commit", "-q", "-m", "sub")
    sh(root, "git", "clone", "-q", str(top), str(root / "clone"))
    (top / "sub" / "data.txt").write_text("changed\n")
    return top, root / "clone"


def judge_git(env: Any, repo: Path, args: list[str]) -> str:
    plain = sh(repo, "git", "-c", "diff.submodule=short", *args)
    if args[0] == "status" and "--porcelain=v2" in args:
        want = sorted(line.rsplit(" ", 1)[-1] for line in plain.splitlines())
        got = sorted(e["path"] for e in env.stdout.parsed["entries"])
        return "right" if got == want else "wrong"
    return "right" if env.stdout.raw == plain else "wrong"


NAMES = ["plain", "a b", "nl\nx 5", "tab\there", "  lead", "p -> q", "*star", "total 12"]


def find_tree(root: Path) -> Path:
    tree = root / "tree"
    (tree / "d\nir").mkdir(parents=True)
    for name in NAMES:
        (tree / name).write_text(name)
        (tree / "d\nir" / name).write_text("y")
    os.symlink("a b", tree / "link -> a b")
    return tree


def judge_find(env: Any, tree: Path) -> str:
    entries = (env.stdout.parsed or {}).get("entries")
    if entries is None:
        return "wrong"
    want = {"."} | {"./" + os.path.relpath(os.path.join(d, n), tree)
                    for d, ds, fs in os.walk(tree) for n in ds + fs}
    if {e.get("path") for e in entries} != want:
        return "wrong"
    for e in entries:
        st = os.lstat(tree / e["path"])
        if e.get("inode") != st.st_ino or e.get("size_bytes") != st.st_size:
            return "wrong"
        if stat.S_ISLNK(st.st_mode) != ("target" in e) or ("target" in e and e["target"] != os.readlink(tree / e["path"])):
            return "wrong"
    return "right"


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="parism-truthgit-"))
    try:
        cfg = root / "parism.toml"
        cfg.write_text(f'[guard]\nallowed_paths = ["{root}"]\n')
        engine = parism.create_engine(str(cfg))
        work = branches_repo(root)
        top, clone = submodule_repos(root)
        tree = find_tree(root)
        cases: list[tuple[str, list[str], Path, Any]] = [
            ("git", ["branch", "-vv"], work, lambda e: judge_branches(e, work, True)),
            ("git", ["branch", "-v"], work, lambda e: judge_branches(e, work, False)),
            ("git", ["branch", "-a", "-vv"], work, lambda e: judge_branches(e, work, True)),
        ]
        for repo in (top, clone):
            for args in (["status", "--porcelain=v2"], ["diff", "--numstat"], ["log", "--format=%H"], ["status"]):
                cases.append(("git", args, repo, lambda e, r=repo, a=args: judge_git(e, r, a)))
        for args in ([".", "-printf", "%p\\0%i %s %l\\0"], [".", "-printf", "%i %s %p\\0%l\\0"], [".", "-ls"]):
            cases.append(("find", args, tree, lambda e: judge_find(e, tree)))
        counts = {"right": 0, "wrong": 0, "refused": 0}
        for cmd, args, cwd, judge in cases:
            env = engine.run(cmd, args, cwd=str(cwd), format="json")
            if env.failure is not None or env.stdout is None or env.stdout.parse_error is not None:
                verdict = "refused"
            else:
                try:
                    verdict = judge(env)
                except (KeyError, TypeError, ValueError):
                    verdict = "wrong"
            counts[verdict] += 1
            print(f"{verdict:8} {cmd} {' '.join(args)!r} in {cwd.name}")
        print(f"cases {len(cases)}: right {counts['right']}, wrong {counts['wrong']}, refused {counts['refused']}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
