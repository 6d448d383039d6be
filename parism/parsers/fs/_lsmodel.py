"""The schema of ``ls`` results (``parism.parsers.fs.ls`` documents each field)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Perms(BaseModel):
    owner: str
    group: str
    other: str


class LsEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    type: str | None = None
    file_kind: str | None = None
    target: str | None = None
    directory: str | None = None
    mode: str | None = None
    attr: str | None = None
    permissions: Perms | None = None
    mode_octal: str | None = None
    setuid: bool | None = None
    setgid: bool | None = None
    sticky: bool | None = None
    ambiguous_link: bool | None = None
    stat_failed: bool | None = None
    links: int | None = None
    owner: str | None = None
    group: str | None = None
    size_bytes: int | None = None
    size: str | None = None
    size_bytes_approx: int | None = None
    major: int | None = None
    minor: int | None = None
    device_id: str | None = None
    inode: int | None = None
    context: str | None = None
    blocks: str | None = None
    modified_raw: str | None = None
    modified_at: str | None = None
    accessed_raw: str | None = None  # -u, --time=atime: the time column is the access time
    accessed_at: str | None = None
    changed_raw: str | None = None  # -c, --time=ctime
    changed_at: str | None = None
    birth_raw: str | None = None  # --time=birth
    birth_at: str | None = None
    indicator: str | None = None


class LsTotal(BaseModel):
    directory: str | None = None
    total: str


class LsResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    entries: list[LsEntry]
    totals: list[LsTotal] | None = None
    warnings: list[str] | None = None
    unresolved: list[str] | None = None
    hint_args: list[str] | None = None
    time_zone: str | None = None
