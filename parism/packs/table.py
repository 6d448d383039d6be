"""The packs a server knows: found on disk, each with its worker, turned into contract parsers.

Where packs come from: every subdirectory of ``~/.parism/parsers/`` and of each
``parsers.pack_paths`` entry holding ``parser.py`` (or ``__init__.py``). A running server picks up
a pack added or changed there without a restart: the directories are re-scanned — a stat of each
directory and module file, no import — at most once a second, when a command is parsed or
``describe`` answers (a cheap poll rather than a watcher thread: nothing runs while the server is
idle). A pack's own name is read inside its worker; a pack that fails to import or validate keeps
its error in ``describe`` (``packs: [{name, path, status, error}]``) and the server keeps serving.
A pack never replaces a built-in parser unless the global configuration lists the name in
``parsers.pack_overrides``.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from parism.packs.worker import Limits, PackFailure, Worker
from parism.parsers.contract import Contract, ParseFailure, ParseInput, Parser, Unrecognized, Unsupported

RESCAN_S = 1.0


class PackParseFailure(ParseFailure):
    """A pack's failure, carrying the reason the worker gave (parser_exception, schema_violation)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass
class Pack:
    path: str
    signature: tuple[float, ...]
    worker: Worker | None = None
    name: str | None = None
    status: str = "error"  # loaded | error | shadowed
    error: str | None = None
    parser: Parser | None = None

    def info(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name or os.path.basename(self.path), "path": self.path,
                               "status": self.status}
        if self.error:
            out["error"] = self.error
        return out


def _module_file(d: str) -> str | None:
    for name in ("parser.py", "__init__.py"):
        p = os.path.join(d, name)
        if os.path.isfile(p):
            return p
    return None


class PackTable:
    def __init__(self, cfg: Any, builtin: frozenset[str]) -> None:
        parsers = cfg.settings.parsers
        caps = parsers.external_capabilities
        self.limits = Limits(time_ms=parsers.external_time_limit_ms or 500, memory_mb=parsers.external_memory_limit_mb,
                             isolation=parsers.external_isolation,
                             fs_read=tuple((h, g) for h, g in caps.fs_read), env=tuple((n, v) for n, v in caps.env))
        self.strict = parsers.strict_schemas
        self.dirs = [str(Path("~/.parism/parsers").expanduser()), *(os.path.expanduser(p) for p in parsers.pack_paths)]
        self.overrides = set(parsers.pack_overrides)
        self.builtin = builtin
        self._packs: dict[str, Pack] = {}
        self._by_name: dict[str, Pack] = {}
        self._lock = threading.Lock()
        self._scanned = 0.0

    # -- what the registry and describe ask ---------------------------------------------------

    def parser_for(self, cmd: str) -> Parser | None:
        self.refresh()
        pack = self._by_name.get(cmd)
        return pack.parser if pack is not None and pack.status == "loaded" else None

    def names(self) -> list[str]:
        self.refresh()
        return sorted(n for n, p in self._by_name.items() if p.status == "loaded")

    def describe(self) -> list[dict[str, Any]]:
        self.refresh()
        return [p.info() for p in sorted(self._packs.values(), key=lambda p: p.path)]

    def close(self) -> None:
        with self._lock:
            for p in self._packs.values():
                if p.worker is not None:
                    p.worker.stop()

    # -- scanning -----------------------------------------------------------------------------

    def refresh(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._scanned < RESCAN_S:
            return
        with self._lock:
            self._scanned = now
            found = self._scan()
            for path in set(self._packs) - set(found):
                self._drop(path)
            for path, sig in found.items():
                old = self._packs.get(path)
                if old is None or old.signature != sig:
                    if old is not None:
                        self._drop(path)
                    self._packs[path] = self._load(path, sig)
            self._by_name = {}
            for p in self._packs.values():
                if p.name and p.status == "loaded":
                    if p.name in self._by_name:
                        p.status, p.error = "error", f"another pack ({self._by_name[p.name].path}) already parses '{p.name}'"
                        continue
                    self._by_name[p.name] = p

    def _scan(self) -> dict[str, tuple[float, ...]]:
        found: dict[str, tuple[float, ...]] = {}
        for base in self.dirs:
            try:
                entries = sorted(os.scandir(base), key=lambda e: e.name)
            except OSError:
                continue
            for e in entries:
                if e.is_dir() and not e.name.startswith("."):
                    mod = _module_file(e.path)
                    if mod is not None:
                        path = os.path.realpath(e.path)
                        found[path] = (os.stat(path).st_mtime, os.stat(mod).st_mtime)
        return found

    def _drop(self, path: str) -> None:
        pack = self._packs.pop(path, None)
        if pack is not None and pack.worker is not None:
            pack.worker.stop()

    def _load(self, path: str, sig: tuple[float, ...]) -> Pack:
        pack = Pack(path=path, signature=sig, worker=Worker(path, self.limits))
        try:
            desc = pack.worker.start()  # type: ignore[union-attr]
        except PackFailure as exc:
            pack.error = exc.message
            pack.worker = None
            return pack
        pack.name = desc["name"]
        if pack.name in self.builtin and pack.name not in self.overrides:
            pack.status = "shadowed"
            pack.error = (f"'{pack.name}' is a built-in parser; a pack replaces it only when the global "
                          "configuration lists it in parsers.pack_overrides")
            pack.worker.stop()  # type: ignore[union-attr]
            return pack
        try:
            pack.parser = self._parser(pack, desc)
        except (KeyError, TypeError, ValueError) as exc:
            pack.error = f"invalid declarations: {exc}"
            return pack
        pack.status = "loaded"
        return pack

    def _parser(self, pack: Pack, desc: dict[str, Any]) -> Parser:
        pos = desc.get("accepted_positionals") or {}
        worker = pack.worker
        assert worker is not None
        strict, has_supports = self.strict, bool(desc.get("has_supports"))

        def parse(text: str, pin: ParseInput) -> Any:
            try:
                if has_supports:
                    reason = worker.call({"op": "supports", "args": pin.sub_args}).get("reason")
                    if reason:
                        raise Unsupported(f"{desc['name']}: {reason}")
                answer = worker.call({"op": "parse", "raw": text, "args": pin.args, "os": pin.os, "strict": strict})
            except PackFailure as exc:
                raise PackParseFailure(exc.reason, f"{desc['name']} (pack): {exc.message}") from None
            if answer.get("ok"):
                return answer["value"]
            if answer.get("reason") == "unrecognized_output":
                raise Unrecognized(f"{desc['name']} (pack): {answer.get('message', '')}")
            raise PackParseFailure(answer.get("reason", "parser_exception"),
                                   f"{desc['name']} (pack): {answer.get('message', '')}")

        return Parser(
            id=f"pack:{desc['name']}", version=str(desc.get("version", "0.1.0")),
            contract=Contract(flags=dict(desc.get("accepted_flags") or {}), min_positionals=int(pos.get("min", 0)),
                              max_positionals=pos.get("max"), single_dash_long=bool(desc.get("single_dash_long"))),
            parse=parse, rows_key=desc.get("rows_key"), row_fields=tuple(desc.get("row_fields") or ()),
            header_lines=int(desc.get("header_lines") or 0), noise=desc.get("noise"))
