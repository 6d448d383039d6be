"""helm — ``list``/``ls`` releases; ``-o json`` passes through.

Schema::

    {"releases": [{"name", "namespace", "revision": int|None, "updated", "status", "chart",
                   "app_version": str|None}]}

helm pads with spaces and separates columns with a TAB; rows are split on TABs when present,
else sliced at the header positions. An empty APP VERSION keeps its row (v1 dropped it).
"""

from __future__ import annotations

from typing import Any

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized
from parism.parsers.hints import drop_args
from parism.parsers.table import read_table, snake, to_int

_FLAGS = {"-a": "bool", "--all": "bool", "-A": "bool", "--all-namespaces": "bool", "-n": "value",
          "--namespace": "value", "-o": "value", "--output": "value", "--kube-context": "value",
          "-d": "bool", "--date": "bool", "-r": "bool", "--reverse": "bool", "--deployed": "bool",
          "--failed": "bool", "--pending": "bool", "--superseded": "bool", "--uninstalled": "bool",
          "--max": "number", "--offset": "number", "-f": "data", "--filter": "data"}
_KEYS = ("name", "namespace", "revision", "updated", "status", "chart", "app_version")


def parse(text: str, pin: ParseInput) -> dict[str, Any]:
    lines = [ln.rstrip("\r") for ln in text.splitlines() if ln.strip()]
    if not lines:
        return {"releases": []}
    if not lines[0].startswith("NAME"):
        raise Unrecognized("no 'NAME NAMESPACE REVISION …' header")
    if "\t" in lines[0]:
        header = [snake(h) for h in lines[0].split("\t")]
        rows = [dict(zip(header, (c.strip() for c in ln.split("\t")))) for ln in lines[1:]]
    else:
        _, raw = read_table(text, "NAME", ("APP VERSION",))
        rows = [{snake(k): v for k, v in r.items()} for r in raw]
    releases = []
    for r in rows:
        rel = {k: (r.get(k) or None) for k in _KEYS}
        rel["revision"] = to_int(r.get("revision"))
        releases.append(rel)
    return {"releases": releases}


_list = Parser(id="helm-list", evidence=True, parse=parse, rows_key="releases", row_fields=_KEYS, header_lines=1,
               json_output=lambda a: "json" in " ".join(a),
               contract=Contract(flags=_FLAGS, values={"-o": "table", "--output": "table"}, max_positionals=0,
                                 hint=lambda a: drop_args(a, valued=("-o", "--output")) + ["-o", "json"]))

PARSER = Parser(id="helm", contract=Contract(),
                leading_flags={"-n": "value", "--namespace": "value", "--kube-context": "value"},
                subcommands={"list": _list, "ls": _list}, examples=(("list", "-A"), ("list", "-o", "json")))
