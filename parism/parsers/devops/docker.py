"""docker — ``ps``, ``images`` and ``stats --no-stream`` tables; JSON forms pass through.

Schemas::

    ps      {"resource": "ps", "containers": [{"container_id", "image", "command", "created",
             "status", "ports": str|None, "names", "size"?}]}
    images  {"resource": "images", "images": [{"repository", "tag", "image_id", "created", "size"}]}
    stats   {"resource": "stats", "stats": [{"container_id", "name", "cpu_perc", "mem_usage",
             "mem_limit", "mem_perc", "net_io", "block_io", "pids": int|None}]}

Tables are sliced at the header's column starts (cells such as ``Up 2 hours`` and quoted
commands contain spaces; an empty PORTS cell stays empty). ``--format '{{json .}}'`` prints JSON
Lines and ``inspect`` prints JSON: both go straight to ``parsed`` (contract §22 #37). ``-q`` and other
``--format`` templates are out of range (hint: drop them).
"""

from __future__ import annotations

from typing import Any

from parism.parsers.contract import Contract, ParseInput, Parser
from parism.parsers.hints import drop_args
from parism.parsers.table import read_table, snake, to_int

_MULTI = ("CONTAINER ID", "IMAGE ID", "CPU %", "MEM USAGE / LIMIT", "MEM %", "NET I/O", "BLOCK I/O")
_PS_FLAGS = {"-a": "bool", "--all": "bool", "--no-trunc": "bool", "-l": "bool", "--latest": "bool",
             "-n": "value", "--last": "value", "-f": "data", "--filter": "data", "-s": "bool", "--size": "bool",
             "-q": "bool", "--quiet": "bool", "--format": "data"}


def _is_json(args: list[str]) -> bool:
    return any("json" in a for a in args)


def _drop_format(args: list[str]) -> list[str]:
    return drop_args(args, "q", ("--quiet",), valued=("--format",))


def _contract(flags: dict[str, str]) -> Contract:
    return Contract(flags=flags, max_positionals=0,
                    supports=lambda t: "-q/--format change the output; drop them"
                    if t.has("-q", "--quiet", "--format") else None,
                    hint=_drop_format)


def parse_ps(text: str, pin: ParseInput) -> dict[str, Any]:
    _, rows = read_table(text, "CONTAINER ID", _MULTI)
    containers = [{snake(k): (v or None) if k == "PORTS" else v for k, v in r.items()} for r in rows]
    return {"resource": "ps", "containers": containers}


def parse_images(text: str, pin: ParseInput) -> dict[str, Any]:
    _, rows = read_table(text, "REPOSITORY", _MULTI)
    return {"resource": "images", "images": [{snake(k): v for k, v in r.items()} for r in rows]}


def parse_stats(text: str, pin: ParseInput) -> dict[str, Any]:
    _, rows = read_table(text, "CONTAINER ID" if text.lstrip().startswith("CONTAINER") else "NAME", _MULTI)
    stats = []
    for r in rows:
        usage, _, limit = r.get("MEM USAGE / LIMIT", "").partition(" / ")
        stats.append({"container_id": r.get("CONTAINER ID") or r.get("CONTAINER"), "name": r.get("NAME"),
                      "cpu_perc": r.get("CPU %"), "mem_usage": usage.strip() or None,
                      "mem_limit": limit.strip() or None, "mem_perc": r.get("MEM %"), "net_io": r.get("NET I/O"),
                      "block_io": r.get("BLOCK I/O"), "pids": to_int(r.get("PIDS"))})
    return {"resource": "stats", "stats": stats}


_ps = Parser(id="docker-ps", evidence=True, contract=_contract(_PS_FLAGS), parse=parse_ps, rows_key="containers",
             row_fields=("container_id", "image", "command", "created", "status", "ports", "names", "size"),
             header_lines=1, json_output=_is_json)
_images = Parser(id="docker-images", contract=_contract(
    {"-a": "bool", "--all": "bool", "--no-trunc": "bool", "--digests": "bool", "-f": "data", "--filter": "data",
     "-q": "bool", "--quiet": "bool", "--format": "data"}), parse=parse_images, rows_key="images",
    row_fields=("repository", "tag", "image_id", "created", "size"), header_lines=1, json_output=_is_json)
_stats = Parser(id="docker-stats", contract=Contract(
    flags={"--no-stream": "bool", "-a": "bool", "--all": "bool", "--no-trunc": "bool", "--format": "data"},
    required=(("--no-stream",),),
    supports=lambda t: "--format changes the output; drop it" if t.has("--format") else None,
    hint=lambda a: [*_drop_format(a), *([] if "--no-stream" in a else ["--no-stream"])]),
    parse=parse_stats, rows_key="stats",
    row_fields=("container_id", "name", "cpu_perc", "mem_usage", "mem_limit", "mem_perc", "net_io", "block_io",
                "pids"), header_lines=1, json_output=_is_json)

PARSER = Parser(
    id="docker",
    contract=Contract(),
    leading_flags={"--context": "value", "-H": "value", "--host": "value", "--log-level": "value"},
    subcommands={"ps": _ps, "container ls": _ps, "container list": _ps, "images": _images,
                 "image ls": _images, "stats": _stats},
    examples=(("ps", "-a"), ("images",), ("ps", "--format", "{{json .}}"), ("inspect", "web")),
)
