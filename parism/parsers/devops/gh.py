"""gh (GitHub CLI) — ``pr list`` and ``issue list`` as printed when stdout is not a terminal
(tab-separated; Parism never gives gh a TTY); ``--json`` output passes through.

Schemas::

    pr list     {"resource": "pr_list", "pull_requests": [{"number": int, "title", "branch",
                 "state", "created_at"}]}
    issue list  {"resource": "issue_list", "issues": [{"number": int, "state", "title",
                 "labels": [str], "updated_at"}]}

The non-TTY column order is gh's (``pkg/cmd/pr/list``, ``pkg/cmd/issue/list``): the fifth pr
column is the creation timestamp, not an age (contract §10.3). Other subcommands get the hint
``--json <fields>``.
"""

from __future__ import annotations

from typing import Any

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.table import to_int

_FLAGS = {"--json": "value", "-L": "number", "--limit": "number", "-s": "value", "--state": "value",
          "-R": "value", "--repo": "value", "--author": "value", "--label": "value", "-l": "value",
          "-B": "value", "--base": "value", "-q": "data", "--jq": "data", "-S": "data", "--search": "data",
          "-A": "value", "--assignee": "value"}
_FIELDS = {"pr": "number,title,headRefName,state,createdAt,author,labels,updatedAt",
           "issue": "number,title,state,author,labels,updatedAt",
           "run": "databaseId,displayTitle,status,conclusion,workflowName,headBranch,createdAt",
           "repo": "name,description,visibility,updatedAt", "release": "tagName,name,isLatest,publishedAt"}


# subcommands read as JSON only (gh prints JSON for them with --json <fields>)
_JSON_VERBS = {"pr": ("view", "status", "checks"), "issue": ("view", "status"), "run": ("list", "view"),
               "repo": ("list", "view"), "release": ("list", "view")}


def _tsv(text: str, width: int) -> list[list[str]]:
    rows = []
    for ln in text.splitlines():
        if not ln.strip():
            continue
        cells = ln.rstrip("\r").split("\t")
        if len(cells) < width:
            raise Unrecognized(f"expected {width} tab-separated columns: {ln[:60]!r}")
        rows.append(cells)
    return rows


def parse_pr_list(text: str, pin: ParseInput) -> dict[str, Any]:
    prs = [{"number": to_int(c[0]), "title": c[1], "branch": c[2], "state": c[3], "created_at": c[4]}
           for c in _tsv(text, 5)]
    return {"resource": "pr_list", "pull_requests": prs}


def parse_issue_list(text: str, pin: ParseInput) -> dict[str, Any]:
    issues = [{"number": to_int(c[0]), "state": c[1], "title": c[2],
               "labels": [x.strip() for x in c[3].split(",") if x.strip()], "updated_at": c[4]}
              for c in _tsv(text, 5)]
    return {"resource": "issue_list", "issues": issues}


def _table(pid: str, fn: Any, rows_key: str, fields: tuple[str, ...], noun: str) -> Parser:
    return Parser(id=pid, parse=fn, rows_key=rows_key, row_fields=fields, json_output=lambda a: "--json" in " ".join(a),
                  contract=Contract(flags=_FLAGS, max_positionals=0,
                                    supports=lambda t: "--json/--jq print JSON (passed through as is)"
                                    if t.has("--json", "-q", "--jq") else None,
                                    hint=lambda a: [*a, "--json", _FIELDS[noun]]))


def _json_only(noun: str, verb: str) -> Parser:
    return Parser(id=f"gh-{noun}-{verb}", json_output=lambda a: "--json" in a, contract=Contract(
        flags=_FLAGS, supports=lambda t: f"gh {noun} {verb} is read as JSON: add --json",
        hint=lambda a: [*a, "--json", _FIELDS.get(noun, "number,title")]))


PARSER = Parser(
    id="gh",
    packages={"*": "gh", "winget": "GitHub.cli"},
    contract=Contract(),
    subcommands={
        "pr list": _table("gh-pr-list", parse_pr_list, "pull_requests",
                          ("number", "title", "branch", "state", "created_at"), "pr"),
        "issue list": _table("gh-issue-list", parse_issue_list, "issues",
                             ("number", "state", "title", "labels", "updated_at"), "issue"),
        **{f"{n} {v}": _json_only(n, v) for n, verbs in _JSON_VERBS.items() for v in verbs},
    },
    examples=(("pr", "list"), ("issue", "list", "--json", "number,title,state")),
)
