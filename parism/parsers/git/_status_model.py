"""The result model shared by every ``git status`` form (see ``status`` for the schema)."""

from __future__ import annotations

from pydantic import BaseModel


class StatusEntry(BaseModel):
    xy: str
    index: str
    worktree: str
    path: str
    orig_path: str | None = None
    quoted: bool | None = None


class StatusResult(BaseModel):
    branch: str | None = None
    detached: bool | None = None
    detached_at: str | None = None
    detached_from: str | None = None
    no_commits: bool | None = None
    upstream: str | None = None
    ahead: int | None = None
    behind: int | None = None
    upstream_gone: bool | None = None
    entries: list[StatusEntry]
