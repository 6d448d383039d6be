"""The pack worker: imports one pack and answers parse requests, one JSON object per line.

Run by :mod:`parism.packs.worker` inside bubblewrap as ``python3 -I _worker_main.py ROOT PACKDIR``
(``ROOT`` holds the ``parism`` package, so ``from parism.packs.types import ParserPack`` works; of the
rest of Parism only the strict schema check is imported). The protocol stream is a private copy
of fd 1; fd 1 itself is pointed at stderr, so a pack that prints cannot corrupt the protocol.
The worker is a child subreaper: after each call every process the pack left (its children, and
their orphans) is killed and waited for — found in the kernel's list of the worker's own
children, never by scanning /proc, so in ``"none"`` mode nothing but the pack's processes is
signalled.
"""

import importlib.util
import json
import os
import signal
import sys
import traceback


def _load(pack_dir):
    for name in ("parser.py", "__init__.py"):
        path = os.path.join(pack_dir, name)
        if os.path.isfile(path):
            break
    else:
        raise ImportError(f"no parser.py or __init__.py in {pack_dir}")
    spec = importlib.util.spec_from_file_location("parism_pack_" + os.path.basename(pack_dir), path,
                                                  submodule_search_locations=[pack_dir])
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, pack_dir)
    spec.loader.exec_module(module)
    from parism.packs.types import ParserPack

    pack = getattr(module, "PACK", None)
    if not isinstance(pack, ParserPack):
        raise TypeError(f"the module must export PACK = ParserPack(...), found {type(pack).__name__}")
    if not isinstance(pack.name, str) or not pack.name or not callable(pack.parse):
        raise TypeError("PACK.name must be a non-empty string and PACK.parse a function")
    return pack


def _schema_json(schema):
    if schema is None or isinstance(schema, dict):
        return schema
    if hasattr(schema, "model_json_schema"):
        return schema.model_json_schema()
    raise TypeError("PACK.schema must be a pydantic model class or a JSON Schema dict")


def _validate(schema, value):
    """None when ``value`` fits ``schema``, else the first problem."""
    if schema is None:
        return None
    if hasattr(schema, "model_validate"):
        from parism.parsers.strict import violation  # the registry's rule for built-in parsers

        return violation(schema, value)
    import jsonschema

    err = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(value))
    return None if err is None else f"/{'/'.join(map(str, err.absolute_path))}: {err.message}"[:400]


PR_SET_CHILD_SUBREAPER = 36
REAP_ROUNDS = 1000  # a pack forking faster than it is killed cannot keep the worker here


def _become_subreaper():
    """Orphans of what the pack starts (double-forked, setsid) come back to the worker, so its
    own children are every process the pack left behind."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) refused")


def _children():
    """The worker's own children, from the kernel's list of each of its threads (never a scan
    of /proc: in "none" mode that is the host's process table)."""
    me, out = os.getpid(), []
    for tid in os.listdir(f"/proc/{me}/task"):
        with open(f"/proc/{me}/task/{tid}/children") as f:
            out += [int(pid) for pid in f.read().split()]
    return out


def _reap_children():
    """Kill and wait for every process the pack left: the worker's children, and — as the
    worker is a subreaper — what they leave orphaned once killed; nothing else is signalled.
    A child's pid cannot be reused before the worker waits for it."""
    for _ in range(REAP_ROUNDS):
        while True:  # what already ended
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                return
        for pid in _children():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def describe(pack):
    return {
        "name": pack.name, "version": str(pack.version), "accepted_flags": dict(pack.accepted_flags),
        "accepted_positionals": dict(pack.accepted_positionals), "header_lines": int(pack.header_lines),
        "noise": pack.noise, "rows_key": pack.rows_key, "row_fields": list(pack.row_fields),
        "has_supports": pack.supports is not None, "single_dash_long": bool(pack.single_dash_long), "fixtures": len(pack.fixtures),
        "schema": _schema_json(pack.schema),
    }


def answer(pack, req):
    from parism.packs.types import PackContext, UnrecognizedOutputError

    op = req.get("op")
    if op == "fixtures":
        return {"ok": True, "fixtures": [{"input": f.input, "args": list(f.args), "expected": f.expected}
                                         for f in pack.fixtures]}
    if op == "supports":
        reason = pack.supports(list(req["args"])) if pack.supports else None
        return {"ok": True, "reason": None if reason is None else str(reason)}
    if op != "parse":
        return {"ok": False, "reason": "parser_exception", "message": f"unknown op {op!r}"}
    try:
        value = pack.parse(req["raw"], list(req["args"]), PackContext(os=req.get("os", "linux"),
                                                                      max_items=int(req.get("max_items", 0))))
    except UnrecognizedOutputError as exc:
        return {"ok": False, "reason": "unrecognized_output", "message": str(exc)[:400]}
    except MemoryError:
        return {"ok": False, "reason": "parser_exception", "fatal": True,
                "message": "the pack ran out of memory (parsers.external_memory_limit_mb)"}
    except Exception as exc:
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        return {"ok": False, "reason": "parser_exception",
                "message": f"{type(exc).__name__}: {exc} (at {os.path.basename(tb.filename)}:{tb.lineno})"[:400]}
    finally:
        _reap_children()
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", exclude_none=True)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        return {"ok": False, "reason": "parser_exception",
                "message": f"the pack returned a value that is not plain JSON data ({exc})"[:400]}
    if req.get("strict"):
        problem = _validate(pack.schema, value)
        if problem:
            return {"ok": False, "reason": "schema_violation", "message": problem}
    return {"ok": True, "value": value}


def main():
    root, pack_dir = sys.argv[1], sys.argv[2]
    os.closerange(3, 1 << 16)  # nothing bwrap or the server passed on reaches the pack
    sys.path.insert(0, root)
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def send(obj):
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    try:
        _become_subreaper()
        pack = _load(pack_dir)
        send({"ok": True, "describe": describe(pack)})
    except BaseException as exc:  # noqa: BLE001 — the loader's error is the pack's status
        send({"ok": False, "reason": "pack_invalid", "message": f"{type(exc).__name__}: {exc}"[:600]})
        return
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            send({"ok": False, "reason": "parser_exception", "message": "bad request line"})
            continue
        send(answer(pack, req))


if __name__ == "__main__":
    main()
