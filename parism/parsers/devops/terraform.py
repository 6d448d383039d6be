"""terraform — the ``plan`` summary and ``version``; ``-json`` forms pass through.

Schemas::

    plan     {"status": "changes"|"no_changes", "summary": {"to_add": int, "to_change": int, "to_destroy": int,
              "to_import"?: int} | None, "resources": [{"address", "action"}]}
    version  {"version": str, "platform"?: str, "providers": [{"name", "version"}]}

``resources`` come from the ``# <address> will be created|updated in-place|destroyed|replaced``
lines; "No changes." gives ``status: "no_changes"`` and no summary. terraform is build-profile only.
"""

from __future__ import annotations

import re
from typing import Any

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_SUMMARY = re.compile(r"Plan: (\d+) to add, (\d+) to change, (\d+) to destroy(?:, (\d+) to import)?")
_IMPORT_ONLY = re.compile(r"Plan: (\d+) to import, (\d+) to add, (\d+) to change, (\d+) to destroy")
_RESOURCE = re.compile(r"^\s*# (\S+) (?:will be|must be) (created|updated in-place|destroyed|replaced|read during apply)")
_ACTION = {"created": "create", "updated in-place": "update", "destroyed": "delete", "replaced": "replace",
           "read during apply": "read"}


def parse_plan(text: str, pin: ParseInput) -> dict[str, Any]:
    clean = _ANSI.sub("", text)
    resources = [{"address": m.group(1), "action": _ACTION[m.group(2)]}
                 for m in map(_RESOURCE.match, clean.splitlines()) if m]
    if m := _IMPORT_ONLY.search(clean):
        imp, add, change, destroy = (int(g) for g in m.groups())
        return {"status": "changes", "summary": {"to_add": add, "to_change": change, "to_destroy": destroy,
                                             "to_import": imp}, "resources": resources}
    if m := _SUMMARY.search(clean):
        summary = {"to_add": int(m.group(1)), "to_change": int(m.group(2)), "to_destroy": int(m.group(3))}
        if m.group(4) is not None:
            summary["to_import"] = int(m.group(4))
        return {"status": "changes", "summary": summary, "resources": resources}
    if re.search(r"^No changes\.", clean, re.M):
        return {"status": "no_changes", "summary": None, "resources": []}
    raise Unrecognized("no 'Plan: …' summary and no 'No changes.' line")


def parse_version(text: str, pin: ParseInput) -> dict[str, Any]:
    m = re.search(r"^Terraform v(\S+)", text, re.M)
    if not m:
        raise Unrecognized("no 'Terraform vX.Y.Z' line")
    out: dict[str, Any] = {"version": m.group(1), "providers": []}
    if p := re.search(r"^on (\S+)", text, re.M):
        out["platform"] = p.group(1)
    for pm in re.finditer(r"^\+ provider (\S+) v(\S+)", text, re.M):
        out["providers"].append({"name": pm.group(1), "version": pm.group(2)})
    return out


_json = {"-json": "bool"}
PARSER = Parser(
    id="terraform", contract=Contract(),
    leading_flags={"-chdir": "path"},
    subcommands={
        "plan": Parser(id="terraform-plan", parse=parse_plan, rows_key="resources", json_output=lambda a: "-json" in a,
                       contract=Contract(flags={"-no-color": "bool", "-input": "value", "-lock": "value",
                                                "-refresh": "value", "-var": "data", "-var-file": "path",
                                                "-target": "data", "-out": "path", "-detailed-exitcode": "bool",
                                                "-compact-warnings": "bool", "-json": "bool"},
                                         single_dash_long=True, max_positionals=0,
                                         supports=lambda t: "-json prints JSON lines (passed through)"
                                         if t.has("-json") else None)),
        "version": Parser(id="terraform-version", parse=parse_version, json_output=lambda a: "-json" in a,
                          contract=Contract(flags=_json, single_dash_long=True, max_positionals=0,
                                            supports=lambda t: "-json output is passed through"
                                            if t.has("-json") else None)),
        "-version": Parser(id="terraform-version", parse=parse_version, contract=Contract(max_positionals=0)),
        "--version": Parser(id="terraform-version", parse=parse_version, contract=Contract(max_positionals=0)),
    },
    examples=(("version",), ("plan", "-no-color")),
)
