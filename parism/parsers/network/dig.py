"""``dig`` — DNS answers from BIND's dig, one entry per query, records of every section.

Schema::

    {query, query_type, status?, query_time_ms?: int, server?, when?, msg_size?: int,
     answers: [{name, ttl?: int, class?, type, value, query?}],
     authority?: [...], additional?: [...],
     queries: [{query, query_type, query_class?, status?, opcode?, id?: int, flags?: [str],
                answer_count?: int, query_time_ms?, server?, when?, msg_size?}],
     unparsed?: [str]}
    +short:  {values: [str]}

Why: ``dig a b`` prints one block per query, so the top-level fields describe the first query
(the v1 shape) and ``queries`` lists them all; ``answers`` holds the answer records of every
query, each tagged with the question it answers.  AXFR and ``+noall +answer`` print records with
no section header: they are answers.  Record values keep their printed text (TXT quotes and inner
spacing included); trailing dots are removed from names and from single-name values.
``+multiline`` records spanning ``( … )`` are joined.  ``+short`` prints bare values: its own
shape, never an empty result.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from parism.parsers.contract import UNIX_OS, Contract, ParseInput, Parser, Unrecognized

_RECORD = re.compile(
    r"^(?P<name>\S+)\s+(?:(?P<ttl>\d+)\s+)?(?:(?P<cls>IN|CH|HS|CS|ANY|NONE|CLASS\d+)\s+)?"
    r"(?P<type>[A-Z][A-Z0-9-]*|TYPE\d+)(?:\s+(?P<value>.*))?$")
_QUESTION = re.compile(r"^;(?P<name>\S+)\s+(?:(?P<cls>IN|CH|HS|CS|ANY|NONE|CLASS\d+)\s+)?(?P<type>[A-Z][A-Z0-9-]*)\s*$")
_HEADER = re.compile(r"opcode:\s*(?P<opcode>\w+),\s*status:\s*(?P<status>\w+),\s*id:\s*(?P<id>\d+)")
_FLAGS = re.compile(r"^;; flags:(?P<flags>[^;]*);.*?ANSWER:\s*(?P<answers>\d+)")
_SECTION = re.compile(r"^;; (?P<name>[A-Z]+) SECTION:")
_NAME_VALUE = re.compile(r"^\S+\.$")
_RDATA_HINT = re.compile(r'[0-9.:"]')
_SECTION_KEYS = {"ANSWER": "answers", "AUTHORITY": "authority", "ADDITIONAL": "additional"}


class Record(BaseModel):
    name: str
    ttl: int | None = None
    type: str
    value: str
    query: str | None = None
    model_config = {"extra": "allow"}


class Query(BaseModel):
    query: str | None = None
    query_type: str | None = None
    status: str | None = None
    query_time_ms: int | None = None
    server: str | None = None
    model_config = {"extra": "allow"}


class DigResult(BaseModel):
    query: str | None = None
    query_type: str | None = None
    answers: list[Record] | None = None
    queries: list[Query] | None = None
    values: list[str] | None = None
    model_config = {"extra": "allow"}


def _undot(name: str) -> str:
    return name[:-1] if name.endswith(".") and len(name) > 1 else name


def _record(line: str, query: str | None) -> dict[str, object] | None:
    m = _RECORD.match(line)
    if m is None:
        return None
    name, ttl, cls, rtype, value = m.group("name", "ttl", "cls", "type", "value")
    value = (value or "").strip()
    rec: dict[str, object] = {"name": _undot(name)}
    if ttl is not None:
        rec["ttl"] = int(ttl)
    if cls:
        rec["class"] = cls
    rec["type"] = rtype
    # a single name loses its trailing dot (the endswith test only skips the regex on most values)
    rec["value"] = value[:-1] if value.endswith(".") and _NAME_VALUE.match(value) else value
    if query is not None:
        rec["query"] = query
    return rec


def _logical_lines(text: str) -> list[str]:
    """Lines with ``+multiline`` records joined: a record line ending in ``(`` continues until the
    line holding the closing ``)``; ``; comments`` on continuation lines are dropped."""
    if "(" not in text:  # nothing to join (the common case, one C-speed scan)
        return text.splitlines()
    out: list[str] = []
    buf: list[str] | None = None
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if buf is not None:
            code = line.split(";", 1)[0]
            if ")" in code:
                buf.append(code[: code.rindex(")")].strip())
                out.append(" ".join(p for p in buf if p))
                buf = None
            else:
                buf.append(code.strip())
            continue
        stripped = line.rstrip()
        if not line.startswith(";") and stripped.endswith("(") and line.count("(") > line.count(")"):
            buf = [stripped[:-1].rstrip()]
            continue
        out.append(line)
    if buf is not None:
        out.append(" ".join(p for p in buf if p))
    return out


def _short(text: str) -> dict[str, object]:
    """``+short``: one rdata per line.  Every record type's rdata has a digit, a dot, a colon or a
    quote (addresses, names ending in ``.``, TXT strings, MX/SRV numbers), so a line with none of
    them is not a value; it is reported, not returned as one."""
    values: list[str] = []
    unparsed: list[str] = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith(";"):
            continue
        (values if _RDATA_HINT.search(s) else unparsed).append(s)
    if unparsed and not values:
        raise Unrecognized("dig +short: no line looks like record data")
    out: dict[str, object] = {"values": values}
    if unparsed:
        out["unparsed"] = unparsed
    return out


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    if pin.tokens.has("+short"):
        return _short(text)
    queries: list[dict[str, object]] = []
    records: dict[str, list[dict[str, object]]] = {"answers": [], "authority": [], "additional": []}
    current: dict[str, object] | None = None
    section = "answers"
    unparsed: list[str] = []

    def new_query() -> dict[str, object]:
        q: dict[str, object] = {}
        queries.append(q)
        return q

    for line in _logical_lines(text):
        s = line.strip()
        if not s:
            continue
        if s.startswith((";; Got answer:", ";; Sending:")):
            current = new_query()
            if s.startswith(";; Sending:"):
                current["sent"] = True
            section = "answers"
            continue
        if current is None:
            current = new_query()
        if s.startswith(";"):
            _meta(s, current)
            sm = _SECTION.match(s)
            if sm:
                section = _SECTION_KEYS.get(sm.group("name"), "")
            continue
        asked = current.get("query")
        rec = _record(s, asked if isinstance(asked, str) else None)
        if rec is None or not section:
            unparsed.append(s)
            continue
        records[section].append(rec)
    queries = [q for q in queries if q and not q.get("sent")]
    if not queries and not records["answers"]:
        if unparsed:
            raise Unrecognized("dig: no DNS record or query header was recognised")
        return {"answers": [], "queries": []}
    out: dict[str, object] = {}
    if queries:
        first = queries[0]
        for key in ("query", "query_type", "status", "query_time_ms", "server", "when", "msg_size"):
            if key in first:
                out[key] = first[key]
    out["answers"] = records["answers"]
    for key in ("authority", "additional"):
        if records[key]:
            out[key] = records[key]
    out["queries"] = queries
    if unparsed:
        out["unparsed"] = unparsed
    return out


def _meta(s: str, q: dict[str, object]) -> None:
    """Read one ``;``-comment line of a dig block into the query summary."""
    if m := _QUESTION.match(s):
        if not s.startswith(";;"):
            q["query"] = _undot(m.group("name"))
            q["query_type"] = m.group("type")
            if m.group("cls"):
                q["query_class"] = m.group("cls")
        return
    if m := _HEADER.search(s):
        q["opcode"], q["status"], q["id"] = m.group("opcode"), m.group("status"), int(m.group("id"))
    elif m := _FLAGS.match(s):
        q["flags"] = m.group("flags").split()
        q["answer_count"] = int(m.group("answers"))
    elif s.startswith(";; Query time:"):
        num = re.search(r"(\d+)\s*msec", s)
        if num:
            q["query_time_ms"] = int(num.group(1))
    elif s.startswith(";; SERVER:"):
        q["server"] = s.split(":", 1)[1].strip()
    elif s.startswith(";; WHEN:"):
        q["when"] = s.split(":", 1)[1].strip()
    elif s.startswith(";; MSG SIZE"):
        num = re.search(r"rcvd:\s*(\d+)", s)
        if num:
            q["msg_size"] = int(num.group(1))


_FLAG_KINDS: dict[str, str] = {
    "+tcp": "bool", "+notcp": "bool", "+stats": "bool", "+nostats": "bool", "+cmd": "bool",
    "+nocmd": "bool", "+question": "bool", "+noquestion": "bool", "+multi": "bool",
    "+multiline": "bool", "+nomultiline": "bool", "+noall": "bool", "+all": "bool",
    "+answer": "bool", "+noanswer": "bool", "+authority": "bool", "+noauthority": "bool",
    "+additional": "bool", "+noadditional": "bool", "+comments": "bool", "+nocomments": "bool",
    "+short": "bool", "+dnssec": "bool", "+nsid": "bool", "+qr": "bool", "+noqr": "bool",
    "+cookie": "bool", "+nocookie": "bool", "+recurse": "bool", "+norecurse": "bool",
    "+edns": "attached", "+noedns": "bool", "+time": "attached", "+tries": "attached",
    "+retry": "attached", "+search": "bool", "+nosearch": "bool", "+ttlid": "bool",
    "+identify": "bool", "+noidentify": "bool", "+nottlid": "bool", "+notrace": "bool", "+vc": "bool", "+ignore": "bool", "+bufsize": "attached",
    "-4": "bool", "-6": "bool", "-m": "bool", "-r": "bool", "-u": "bool",
    "-x": "value", "-t": "value", "-c": "value", "-p": "number", "-q": "value", "-b": "value",
    "-k": "path", "-y": "value", "-f": "path",
}


def _hint(args: list[str]) -> list[str]:
    """Drop the ``+`` options this parser does not know; ``+noall`` needs ``+answer``."""
    kept = [a for a in args if not a.startswith("+") or a.split("=")[0] in _FLAG_KINDS]
    if "+noall" in kept and "+answer" not in kept and "+short" not in kept:
        kept.append("+answer")
    return kept


PARSER = Parser(
    id="dig",
    packages={"apt": "dnsutils", "dnf": "bind-utils", "yum": "bind-utils", "apk": "bind-tools", "pacman": "bind", "zypper": "bind-utils", "brew": "bind"},
    contract=Contract(
        flags=_FLAG_KINDS,
        plus_flags=True,
        positional_pattern=r"@?[A-Za-z0-9._:%*-]+",
        supports=lambda t: ("+noall without +answer prints nothing to parse"
                            if t.has("+noall") and not t.has("+answer", "+short") else None),
        hint=_hint,
    ),
    parse=parse,
    schema=DigResult,
    rows_key="answers",
    row_fields=("name", "ttl", "class", "type", "value", "query"),
    noise=r"^;",
    os=UNIX_OS | {"windows"},
    examples=(("example.com",), ("example.com", "MX"), ("+short", "example.com"),
              ("+noall", "+answer", "example.com")),
)
