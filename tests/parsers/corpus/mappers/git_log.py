"""git log: jc commits ↔ Parism commits (README mapping).

commit → hash (prefix), author/author_email, date, commit_by/commit_by_email/commit_by_date →
committer/committer_email/commit_date, merge → merge, message → message, stats{files_changed,
insertions, deletions, files, file_stats{name, lines_changed}} → stats{…, files[{path, changes}]}.
jc turns an empty name or email into null; Parism leaves those keys absent (also null here).
jc keeps a rename as git prints it (``a => b``, ``dir/{a => b}/f``); Parism gives ``path`` (the
new name) and ``orig_path``: ``_renamed`` expands jc's text by git's rules to compare the two. A
path git shortened (``.../tail``) is kept as printed by both."""

from __future__ import annotations

import re

_BRACE = re.compile(r"^(.*)\{(.*) => (.*)\}(.*)$")


def _renamed(name: str) -> tuple[str, str | None]:
    """(path, orig_path) of a jc stat name."""
    if name.startswith("..."):
        return name, None
    if m := _BRACE.match(name):
        pre, old, new, post = m.groups()
        return (pre + new + post).replace("//", "/"), (pre + old + post).replace("//", "/")
    if " => " in name:
        old, _, new = name.partition(" => ")
        return new, old
    return name, None

_SIMPLE = {"author": "author", "author_email": "author_email", "date": "date",
           "commit_by": "committer", "commit_by_email": "committer_email", "commit_by_date": "commit_date",
           "merge": "merge", "message": "message"}


def _stats(got: dict | None, exp: dict) -> list[str]:
    got = got or {}
    out = []
    for k in ("files_changed", "insertions", "deletions"):
        if (got.get(k) or 0) != (exp.get(k) or 0):
            out.append(f"stats.{k}: {got.get(k)} != {exp.get(k)}")
    files = got.get("files") or []
    have_names = [(f["path"], f.get("orig_path")) for f in files]
    want_names = [_renamed(n) for n in exp.get("files") or []]
    if have_names != want_names:
        out.append(f"stats.files: {have_names[:3]} != {want_names[:3]}")
    want = [(_renamed(s["name"]), s["lines_changed"]) for s in exp.get("file_stats") or []]
    have = [((f["path"], f.get("orig_path")), f.get("changes")) for f in files]
    if want and have != want:
        diff = [(h, w) for h, w in zip(have, want) if h != w] or [(len(have), len(want))]
        out.append(f"stats.file_stats: {diff[:3]}")
    return out


def check(parsed: dict, expected: list[dict], entry: dict) -> list[str]:
    commits = parsed.get("commits", [])
    problems = []
    if len(commits) != len(expected):
        problems.append(f"{len(commits)} commits, jc has {len(expected)}")
    for i, (got, exp) in enumerate(zip(commits, expected)):
        where = f"commit {i} ({exp['commit'][:10]})"
        if not exp["commit"].startswith(got.get("hash", "")) or not got.get("hash"):
            problems.append(f"{where}: hash {got.get('hash')}")
        for jk, pk in _SIMPLE.items():
            have = " ".join(got["merge"]) if pk == "merge" and got.get("merge") else got.get(pk)
            if jk in exp and have != exp[jk]:
                problems.append(f"{where}: {pk} {have!r} != {exp[jk]!r}")
        if "stats" in exp:
            problems += [f"{where}: {p}" for p in _stats(got.get("stats"), exp["stats"])]
    return problems
