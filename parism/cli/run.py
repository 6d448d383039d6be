"""``parism run [--cwd D] [--format F] [projection, budget flags] -- CMD ARGS…``: one call through
the whole pipeline.

The flags only spell the ``run`` options (contract §3.1) for a shell: they become one mapping
that the engine validates with the same options model as MCP and library calls, so a bad value
gets the same refusal wherever it came from.  ``--where`` reads ``FIELD OP VALUE`` with the
operators below; VALUE is a JSON scalar when it reads as one (``0``, ``true``, ``null``,
``"007"``), else the text as typed.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from parism.cli.common import add_command_operand, command_of, emit, exit_status

#: ``--where`` operators, two-character ones first (``>=`` is not ``>`` then ``=V``).
WHERE_OPS = (("!=", "ne"), ("^=", "prefix"), ("~=", "contains"), (">=", "gte"), ("<=", "lte"),
             ("=", "eq"), (">", "gt"), ("<", "lt"))


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("run", parents=[common], help="run a command, print the JSON envelope")
    p.add_argument("--cwd", help="working directory (default: the current one)")
    p.add_argument("--format", choices=("json", "compact", "json-no-raw"),
                   help="default: the lean answer (docs/envelope.md)")
    p.add_argument("--include-diff", dest="include_diff", action="store_true",
                   help="report files created/deleted/modified under cwd")
    p.add_argument("--timeout", type=int, metavar="MS",
                   help="this call's timeout in ms (default guard.timeout_ms, at most guard.max_timeout_ms)")
    i = p.add_mutually_exclusive_group()
    i.add_argument("--stdin", metavar="TEXT", help="text given to the command's standard input")
    i.add_argument("--stdin-file", metavar="FILE", help="the command's standard input from FILE (UTF-8; - = this "
                                                        "process's standard input)")
    g = p.add_argument_group("projection (contract §11: where → sort-by → limit → select)")
    g.add_argument("--select", metavar="F1,F2", help="fields to keep per row, in this order")
    g.add_argument("--where", action="append", metavar="COND",
                   help="FIELD=V | FIELD!=V | FIELD^=V (prefix) | FIELD~=V (contains) | FIELD>N | >= | < | <= "
                        "(repeatable: all must hold)")
    g.add_argument("--where-json", metavar="JSON", help='conditions as JSON: [{"field", "op", "value"}, …]')
    g.add_argument("--sort-by", metavar="FIELD[:desc]", help="stable sort; rows without the field last")
    g.add_argument("--limit", type=int, metavar="N", help="keep the first N rows (0: only the summary)")
    g.add_argument("--array", metavar="NAME", help="which top-level array to project")
    b = p.add_argument_group("token budget (contract §12)")
    b.add_argument("--budget", type=int, metavar="N", help="max tokens of the answer (no fixed minimum: refused only when one row does not fit)")
    b.add_argument("--tokenizer", choices=("parism/approx", "byte"), help="how the budget counts")
    b.add_argument("--required-fields", metavar="F1,F2", help="fields every row must carry")
    b.add_argument("--overflow", choices=("page", "error"), help="page (default): cut rows; error: refuse")
    p.add_argument("--retain", action="store_true", help="keep the result for fetch_result/explain_result")
    p.add_argument("--contract-version", choices=("stable", "next"), help='"next" adds the review block')
    add_command_operand(p)
    p.set_defaults(handler=main)


def options_of(ns: argparse.Namespace) -> dict[str, Any] | str:
    """The ``run`` options the flags spell (unset flags left out), or what is wrong with them."""
    opts: dict[str, Any] = {"format": ns.format, "includeDiff": ns.include_diff or None, "limit": ns.limit,
                            "array": ns.array, "retain": ns.retain or None, "contract_version": ns.contract_version,
                            "timeout_ms": ns.timeout}
    stdin = _stdin_of(ns)
    if stdin is not None and not isinstance(stdin, tuple):
        return stdin
    if stdin is not None:
        opts["stdin"] = stdin[0]
    if ns.select is not None:
        selected = _names(ns.select)
        if isinstance(selected, str):
            return f"--select {selected}"
        opts["select"] = selected
    where: list[Any] = []
    for cond in ns.where or ():
        parsed = where_condition(cond)
        if isinstance(parsed, str):
            return parsed
        where.append(parsed)
    if ns.where_json is not None:
        try:
            extra = json.loads(ns.where_json)
        except ValueError as exc:
            return f"--where-json is not JSON: {exc}"
        if not isinstance(extra, list):
            return "--where-json must be a JSON list of {field, op, value} objects"
        where.extend(extra)
    if where:
        opts["where"] = where
    if ns.sort_by is not None:
        field, _, order = ns.sort_by.rpartition(":") if ns.sort_by.endswith((":asc", ":desc")) else (ns.sort_by, "", "")
        opts["sort_by"] = {"field": field, **({"order": order} if order else {})}
    required = _names(ns.required_fields) if ns.required_fields is not None else None
    if isinstance(required, str):
        return f"--required-fields {required}"
    budget = {"max_tokens": ns.budget, "tokenizer": ns.tokenizer, "overflow": ns.overflow, "required_fields": required}
    if ns.budget is not None:
        opts["budget"] = {k: v for k, v in budget.items() if v is not None}
    elif any(v is not None for v in budget.values()):
        return "--tokenizer, --required-fields and --overflow need --budget"
    return {k: v for k, v in opts.items() if v is not None}


def _stdin_of(ns: argparse.Namespace) -> tuple[str] | str | None:
    """(the text,) the ``--stdin``/``--stdin-file`` flags give, None without them, or what is wrong."""
    import sys

    if ns.stdin is not None:
        return (ns.stdin,)
    if ns.stdin_file is None:
        return None
    try:
        if ns.stdin_file == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(ns.stdin_file, "rb") as fh:
                data = fh.read()
        return (data.decode("utf-8"),)
    except OSError as exc:
        return f"--stdin-file {ns.stdin_file}: {exc.strerror}"
    except UnicodeDecodeError as exc:
        return f"--stdin-file {ns.stdin_file}: not UTF-8 text (byte {exc.start})"


def where_condition(text: str) -> dict[str, Any] | str:
    """``FIELD OP VALUE`` → ``{field, op, value}``: the operator found first in the text wins."""
    found = [(text.find(sym), -len(sym), sym, op) for sym, op in WHERE_OPS if text.find(sym) > 0]
    if not found:
        return f"--where '{text}': expected FIELD=V, FIELD!=V, FIELD^=V, FIELD~=V, FIELD>N, FIELD>=N, FIELD<N or FIELD<=N"
    at, _, sym, op = min(found)
    field, raw = text[:at], text[at + len(sym):]
    return {"field": field, "op": op, "value": _scalar(raw)}


def _scalar(text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if value is None or isinstance(value, (str, int, float, bool)) else text


def _names(text: str) -> list[str] | str:
    """``F1,F2`` → the names; an empty one (``a,,b``, a trailing comma) is refused, not skipped."""
    names = [n.strip() for n in text.split(",")]
    if "" in names:
        return f"'{text}': an empty field name (expected F1,F2,…)"
    return names


def main(ns: argparse.Namespace) -> int:
    """Run through the cancellable async path so Ctrl-C/SIGTERM kill the command's tree too."""
    import sys

    import parism
    from parism.cli.common import EXIT_USAGE
    from parism.server.signals import run_until_signal

    cmd, args = command_of(ns)
    options = options_of(ns)
    if isinstance(options, str):
        sys.stderr.write(f"parism run: {options}\n")
        return EXIT_USAGE
    engine = parism.create_engine(ns.config)
    env = run_until_signal(lambda: engine.arun(cmd, args, ns.cwd, **options))
    if isinstance(env, int):  # interrupted: the child tree is already gone, nothing to print
        return env
    emit(env)
    return exit_status(env.ok, env.failure)
