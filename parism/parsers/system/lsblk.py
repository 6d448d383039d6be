"""``lsblk`` — the block device table in its default columns (util-linux).

Schema::

    {devices: [{name, parent?, maj, min, removable: bool, size: "256G" | size_bytes: int (-b),
                read_only: bool, type: "disk"|"part"|"loop"|"rom"|"lvm"|…, mountpoints: [str]}]}

The default columns are ``NAME MAJ:MIN RM SIZE RO TYPE MOUNTPOINTS`` (``MOUNTPOINT`` before
util-linux 2.37). A device mounted at several places prints its other mount points on lines of
their own under the column; they join that device's ``mountpoints``. A child device (a
partition, a holder) is drawn under its parent with ``├─``/``└─`` (``|-``/`` `-`` in the C
locale without UTF-8); its ``parent`` is the device above it one level up. Other columns
(``-o``, ``-f``, ``-m``, ``-t``…) and other layouts (``-l``, ``-P``, ``-r``) are refused with a hint;
``-J`` is lsblk's own JSON and passes through.

This is the parser of ``docs/adding-a-parser.md``: one module, one ``COMMANDS`` entry, one
profile entry, one test with its real fixtures.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from parism.argv.tokenize import Tokens
from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized, Unsupported
from parism.parsers.hints import drop_args

FLAGS: dict[str, str] = {
    "-a": "bool", "--all": "bool", "-b": "bool", "--bytes": "bool", "-d": "bool", "--nodeps": "bool",
    "-n": "bool", "--noheadings": "bool", "-e": "value", "--exclude": "value", "-I": "value",
    "--include": "value", "-J": "bool", "--json": "bool",
    # other columns or layouts: known, refused by _supports with the hint
    "-o": "value", "--output": "value", "-f": "bool", "--fs": "bool", "-m": "bool", "--perms": "bool",
    "-t": "bool", "--topology": "bool", "-l": "bool", "--list": "bool", "-P": "bool", "--pairs": "bool",
    "-r": "bool", "--raw": "bool",
}
VALUES: dict[str, str] = {"-e": r"\d+(?:,\d+)*", "--exclude": r"\d+(?:,\d+)*",
                          "-I": r"\d+(?:,\d+)*", "--include": r"\d+(?:,\d+)*"}
_OTHER = ("-o", "--output", "-f", "--fs", "-m", "--perms", "-t", "--topology", "-l", "--list", "-P", "--pairs",
          "-r", "--raw")
HEADER = ("NAME", "MAJ:MIN", "RM", "SIZE", "RO", "TYPE")
_TREE = re.compile(r"(?:[│|] |  )*(?:[├└][─]|[|`]-)")
_ROW = re.compile(r"(\S+)\s+(\d+):(\d+)\s+([01])\s+(\S+)\s+([01])\s+(\S+)(?: (.*))?")


class Device(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    parent: str | None = None
    maj: int
    min: int
    removable: bool
    size: str | None = None
    size_bytes: int | None = None
    read_only: bool
    type: str
    mountpoints: list[str]


class Lsblk(BaseModel):
    model_config = ConfigDict(extra="forbid")
    devices: list[Device]


def _supports(tokens: Tokens) -> str | None:
    for name in _OTHER:
        if tokens.has(name):
            return f"'{name}' prints other columns or another layout; the default columns are read (or -J)"
    return None


def _hint(args: list[str]) -> list[str]:
    return drop_args(args, "fmtlPr", ("--output", "--fs", "--perms", "--topology", "--list", "--pairs", "--raw"),
                     valued=("--output", "-o"))


CONTRACT = Contract(flags=FLAGS, values=VALUES, supports=_supports, hint=_hint)


def _unescape(text: str) -> str:
    """lsblk writes a space or a control character of a mount point as ``\\x20``."""
    return re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m.group(1), 16)), text)


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines and tuple(lines[0].split()[:6]) == HEADER:
        lines = lines[1:]
    elif lines and not pin.tokens.has("-n", "--noheadings"):
        raise Unsupported("no NAME MAJ:MIN RM SIZE RO TYPE header: not lsblk's default columns",
                          hint_args=_hint(pin.sub_args))
    in_bytes = pin.tokens.has("-b", "--bytes")
    devices: list[dict[str, object]] = []
    stack: list[str] = []  # the device names of the levels above the current row
    for line in lines:
        if line[:1] == " " and devices and not _TREE.match(line.lstrip(" ")):
            mounts = devices[-1]["mountpoints"]
            assert isinstance(mounts, list)
            mounts.append(_unescape(line.strip()))
            continue
        tree = _TREE.match(line)
        level = len(tree.group(0)) // 2 if tree else 0
        m = _ROW.fullmatch(line[tree.end():] if tree else line)
        if m is None:
            raise Unrecognized(f"not an lsblk row: {line[:80]!r}")
        name, maj, mnr, rm, size, ro, kind, mount = m.groups()
        del stack[level:]
        row: dict[str, object] = {"name": name, "maj": int(maj), "min": int(mnr), "removable": rm == "1"}
        if level and stack:
            row["parent"] = stack[-1]
        if in_bytes and size.isdigit():
            row["size_bytes"] = int(size)
        else:
            row["size"] = size
        row.update(read_only=ro == "1", type=kind, mountpoints=[_unescape(mount.strip())] if mount and mount.strip()
                   else [])
        stack.append(name)
        devices.append(row)
    return {"devices": devices}


def _wants_json(args: list[str]) -> bool:
    return "-J" in args or "--json" in args


PARSER = Parser(
    id="lsblk",
    contract=CONTRACT,
    parse=parse,
    schema=Lsblk,
    rows_key="devices",
    row_fields=("name", "parent", "maj", "min", "removable", "size", "size_bytes", "read_only", "type",
                "mountpoints"),
    header_lines=1,
    os=frozenset({"linux"}),
    examples=((), ("-a", "-b"), ("-d", "-n")),
    json_output=_wants_json,
    evidence=True,
    prints_always=lambda tokens: not tokens.has("-n", "--noheadings"),
)
