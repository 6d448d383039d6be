"""Row identity per domain (contract §15.3–15.4): what makes a row of one run *the same thing*
as a row of another run.

- git (``git status``): repository real path + file path; ``git log``: commit hash;
  ``git branch``: branch name — all within one repository (the fingerprint's context).
- kubernetes (``kubectl get -o json``): context + namespace + kind + ``metadata.uid``. A table
  row has no uid: a pod deleted and re-created under the same name is another resource, so
  table output never establishes identity (its rows are withheld, with the reason).
- ps: withheld — pids are reused, so a pid is not an identity.
- anything else: only with explicit ``keys`` (the caller names the identity fields).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

KeyFn = Callable[[Any, dict[str, Any]], "str | Withheld"]


@dataclass(frozen=True)
class Withheld:
    reason: str


@dataclass(frozen=True)
class Domain:
    name: str
    rows_key: str | None  # None: use the stored result's rows key
    key: KeyFn


def _field_key(fields: Sequence[str]) -> KeyFn:
    def key(row: Any, ctx: dict[str, Any]) -> str | Withheld:
        if not isinstance(row, dict):
            return Withheld("row is not an object")
        missing = [f for f in fields if row.get(f) in (None, "")]
        if missing:
            return Withheld(f"row has no {', '.join(missing)}")
        return json.dumps([row[f] for f in fields], ensure_ascii=False, separators=(",", ":"))
    return key


def _in_repo(field: str) -> KeyFn:
    def key(row: Any, ctx: dict[str, Any]) -> str | Withheld:
        repo = ctx.get("repository")
        if not repo:
            return Withheld("not inside a git repository (no .git above the working directory)")
        if not isinstance(row, dict) or not row.get(field):
            return Withheld(f"row has no {field}")
        return f"{repo}:{row[field]}"
    return key


def _kube(row: Any, ctx: dict[str, Any]) -> str | Withheld:
    meta = row.get("metadata") if isinstance(row, dict) else None
    uid = meta.get("uid") if isinstance(meta, dict) else None
    if not uid:
        return Withheld("row has no metadata.uid (table output never identifies the same resource; "
                        "use -o json)")
    ns = meta.get("namespace") or ctx.get("namespace") or ""
    return f"{ctx.get('kube_context', '(current)')}/{ns}/{row.get('kind') or ctx.get('list_kind', '')}/{uid}"


GIT: dict[str, Domain] = {
    "git-status": Domain("git", "entries", _in_repo("path")),
    "git-log": Domain("git", "commits", _in_repo("hash")),
    "git-branch": Domain("git", "branches", _in_repo("name")),
}
WITHHELD: dict[str, str] = {"ps": "ps rows have no identity: pids are reused, so a pid is not the same process"}


def domain_for(cmd: str, parser_id: str | None, parsed: Any, keys: Sequence[str] | None) -> Domain | str:
    """The domain rules for a result, or the refusal code (``domain_unsupported``,
    ``domain_withheld``)."""
    if cmd in WITHHELD:
        return "domain_withheld"
    if keys:
        return Domain("keys", None, _field_key(keys))
    if cmd == "git" and parser_id in GIT:
        return GIT[parser_id]
    if cmd == "kubectl":
        if isinstance(parsed, dict) and isinstance(parsed.get("items"), list):
            return Domain("kubernetes", "items", _kube)
        return Domain("kubernetes", None, _kube)  # table rows: every row is withheld
    return "domain_unsupported"
