"""``curl -I`` — HTTP response headers, one entry per response (redirects with ``-L``).

Schema::

    {http_version, status_code: int, status_text?: str, headers: {lower-case name: str},
     responses: [{http_version, status_code: int, status_text?, headers: {..},
                  header_list: [{name, value}]}],
     write_out?: str, unparsed?: [str]}

Why: ``-L`` prints one header block per hop, so every block is kept in ``responses`` and the
top-level fields describe the last one (where the redirects ended) instead of merging them.
HTTP/2 and HTTP/3 status lines have no reason phrase: ``status_text`` is then absent, not "".
``headers`` joins repeated headers with ", " (RFC 9110 field combination); ``header_list`` keeps
every line in order with its original case (``Set-Cookie`` must not be combined).  With ``-v``
merged into the text, ``< `` marks response lines and ``>``/``*`` lines are the request and curl's
notes; both prefixed and plain forms are read.  Only header output is parsed: without
``-I``/``--head`` the body is arbitrary and the contract refuses it.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from parism.parsers.contract import ALL_OS, Contract, ParseInput, Parser, Unrecognized

_STATUS = re.compile(r"^(?P<proto>HTTP/\d(?:\.\d)?)\s+(?P<code>\d{3})(?:\s+(?P<text>.*))?$")
_HEADER = re.compile(r"^(?P<name>[!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(?P<value>.*)$")


class HeaderLine(BaseModel):
    name: str
    value: str


class Response(BaseModel):
    http_version: str
    status_code: int
    status_text: str | None = None
    headers: dict[str, str]
    header_list: list[HeaderLine]


class CurlResult(BaseModel):
    http_version: str | None = None
    status_code: int | None = None
    status_text: str | None = None
    headers: dict[str, str] | None = None
    responses: list[Response]
    write_out: str | None = None
    unparsed: list[str] | None = None


def _add_header(resp: dict[str, Any], name: str, value: str) -> None:
    resp["header_list"].append({"name": name, "value": value})
    key = name.lower()
    headers = resp["headers"]
    headers[key] = f"{headers[key]}, {value}" if key in headers else value


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    responses: list[dict[str, Any]] = []
    unparsed: list[str] = []
    current: dict[str, Any] | None = None
    for raw in text.splitlines():
        line = raw.rstrip("\r")
        if line.startswith(("* ", "*\t", "> ", ">\t")) or line in ("*", ">", "{", "}") or line.startswith(("{ ", "} ")):
            continue  # verbose notes and the request
        if line.startswith("<"):
            line = line[1:].lstrip(" ")
        if not line.strip():
            current = None  # a blank line ends a header block
            continue
        if m := _STATUS.match(line):
            current = {"http_version": m.group("proto").split("/", 1)[1], "status_code": int(m.group("code")),
                       "headers": {}, "header_list": []}
            if m.group("text") and m.group("text").strip():
                current["status_text"] = m.group("text").strip()
            responses.append(current)
            continue
        if current is not None and (h := _HEADER.match(line)):
            _add_header(current, h.group("name"), h.group("value").strip())
            continue
        if current is not None and line[:1] in (" ", "\t") and current["header_list"]:
            last = current["header_list"][-1]  # obsolete line folding: continuation of the value
            last["value"] += " " + line.strip()
            current["headers"][last["name"].lower()] += " " + line.strip()
            continue
        unparsed.append(line)
    if not responses:
        if unparsed:
            raise Unrecognized("curl: no HTTP status line was found (is this header output?)")
        return {"responses": []}
    last = responses[-1]
    out: dict[str, object] = {k: last[k] for k in ("http_version", "status_code", "status_text", "headers") if k in last}
    out["responses"] = responses
    if unparsed and pin.tokens.has("-w", "--write-out"):
        out["write_out"] = "\n".join(unparsed)  # -w text follows the headers
    elif unparsed:
        out["unparsed"] = unparsed
    return out


def _hint(args: list[str]) -> list[str]:
    return ["-sI", *[a for a in args if a not in ("-i", "--include")]]


PARSER = Parser(
    id="curl",
    contract=Contract(
        flags={"-I": "bool", "--head": "bool", "-i": "bool", "--include": "bool", "-w": "data",
               "--write-out": "data", "-s": "bool", "--silent": "bool", "-S": "bool",
               "--show-error": "bool", "-k": "bool", "--insecure": "bool", "-f": "bool", "--fail": "bool",
               "-L": "bool", "--location": "bool", "-v": "bool", "--verbose": "bool",
               "--compressed": "bool", "-4": "bool", "-6": "bool", "--http1.0": "bool",
               "--http1.1": "bool", "--http2": "bool", "--http3": "bool", "-g": "bool", "--globoff": "bool",
               "-H": "data", "--header": "data", "-m": "value", "--max-time": "value",
               "--connect-timeout": "value", "-A": "data", "--user-agent": "data", "--max-redirs": "number",
               "-e": "url", "--referer": "url", "--resolve": "value", "-x": "url", "--proxy": "url",
               "--retry": "number", "--noproxy": "value", "--ipv4": "bool", "--ipv6": "bool"},
        required=(("-I", "--head"),),
        max_positionals=1,
        hint=_hint,
    ),
    parse=parse,
    schema=CurlResult,
    rows_key="responses",
    row_fields=("http_version", "status_code", "status_text", "headers", "header_list"),
    noise=r"^(?:[*>{}]|<\s*$)",
    os=ALL_OS,
    examples=(("-sI", "https://example.com"), ("-sIL", "https://example.com")),
)
