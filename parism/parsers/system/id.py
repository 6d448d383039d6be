"""id — user and group identity.

Schema::

    {"uid": int, "user": str, "gid": int, "group": str, "euid"?: int, "euser"?: str,
     "egid"?: int, "egroup"?: str, "groups": [{"id": int, "name": str|None}],
     "context"?: {"user", "role", "type", "level"} | str}

Accepted: the default line (optionally a user name), and the single-value forms
``-u``/``-g``/``-G`` with ``-n`` (names) and ``-r`` (real ids): ``id -u`` → ``{"uid": 0}``,
``id -un`` → ``{"user": "root"}``, ``id -G`` → ``{"groups": [{"id": 0}, …]}``.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized

_PAIR = re.compile(r"(\d+)(?:\(([^)]*)\))?")
_KEY = re.compile(r"(?:^|\s)(uid|gid|euid|egid|groups|context)=")


class Group(BaseModel):
    id: int | None = None
    name: str | None = None


class Id(BaseModel):
    uid: int | None = None
    user: str | None = None
    gid: int | None = None
    group: str | None = None
    euid: int | None = None
    euser: str | None = None
    egid: int | None = None
    egroup: str | None = None
    groups: list[Group] | None = None
    context: dict[str, str] | str | None = None


def _full(line: str) -> dict:
    keys = list(_KEY.finditer(line))
    if not keys:
        raise Unrecognized("no uid=/gid= fields in id output")
    out: dict = {}
    for i, m in enumerate(keys):
        key = m.group(1)
        end = keys[i + 1].start() if i + 1 < len(keys) else len(line)
        value = line[m.end():end].strip()
        if key == "context":
            parts = value.split(":", 3)
            out["context"] = dict(zip(("user", "role", "type", "level"), parts)) if len(parts) == 4 else value
        elif key == "groups":
            out["groups"] = [{"id": int(g.group(1)), "name": g.group(2)} for g in _PAIR.finditer(value)
                             if g.group(0)]
        else:
            pm = _PAIR.match(value)
            if not pm:
                raise Unrecognized(f"unreadable {key}= value")
            name_key = {"uid": "user", "gid": "group", "euid": "euser", "egid": "egroup"}[key]
            out[key] = int(pm.group(1))
            if pm.group(2) is not None:
                out[name_key] = pm.group(2)
    return out


def parse(text: str, pin: ParseInput) -> dict:
    line = text.strip()
    if not line:
        raise Unrecognized("id printed nothing")
    t = pin.tokens
    names = t.has("-n", "--name")
    if t.has("-G", "--groups"):
        words = line.split()
        return {"groups": [{"name": w} if names else {"id": int(w)} for w in words]} if (
            names or all(w.isdigit() for w in words)) else _bad(line)
    for flags, num_key, name_key in ((("-u", "--user"), "uid", "user"), (("-g", "--group"), "gid", "group")):
        if t.has(*flags):
            if names:
                return {name_key: line}
            if not line.isdigit():
                return _bad(line)
            return {num_key: int(line)}
    return _full(line)


def _bad(line: str) -> dict:
    raise Unrecognized(f"unexpected id output: {line[:60]!r}")


PARSER = Parser(
    id="id",
    evidence=True,
    contract=Contract(
        flags={f: "bool" for f in ("-u", "--user", "-g", "--group", "-G", "--groups", "-n", "--name",
                                   "-r", "--real", "-z", "--zero")},
        max_positionals=1,
        exclusive=(("-u", "--user", "-g", "--group", "-G", "--groups"),),
        supports=lambda tk: "-n/-r need -u, -g or -G" if (
            tk.has("-n", "--name", "-r", "--real") and not tk.has("-u", "--user", "-g", "--group", "-G", "--groups")
        ) else ("-z output is NUL-separated; use plain id" if tk.has("-z", "--zero") else None),
        hint=lambda a: [x for x in a if not x.startswith("-")],
    ),
    parse=parse,
    schema=Id,
    row_fields=("uid", "user", "gid", "group", "groups"),
    examples=((), ("-u",), ("-un",), ("-G",)),
)
