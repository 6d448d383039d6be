"""``tree`` — Unicode (``├── │ └──``) and ASCII (``|-- `--``, the C locale) drawings.

Schema::

    {root: node, roots?: [node] (when several directories were given),
     directories?: int, files?: int, warnings?: [str]}
    node = {name, type: "directory"|"file"|"symlink"|"other"|null, target?, ambiguous_link?,
            info?, error?, children?: [node]}

Depth comes from the 4-column indentation groups.  Whether an entry is a directory is never
guessed from its name: it is known from ``-F`` (``/`` suffix), ``-d`` (directories only), from
having children, or from the summary line — when the directories already known match
``N directories``, every other plain leaf is a file (in tree's sense: whatever its summary counts
as a file, devices included); otherwise leaves keep ``type: null``.
The summary counts are checked against the drawn entries (a mismatch is a warning).
Symlinks: tree prints ``name -> target`` and nothing else marks them, so without ``-Q`` (quoted
names) or ``-p`` (mode shown) a regular file whose name contains `` -> `` cannot be told from a
link; it is read as a link, and a name with several arrows is flagged ``ambiguous_link``.
``tree -J`` prints JSON, which the registry passes through unchanged.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from parism.parsers.contract import UNIX_OS, Contract, ParseInput, Parser, Unrecognized
from parism.parsers.fs._common import (
    MODE_RE,
    decode_octal,
    split_lines,
    split_link,
    unescape_c,
)
from parism.parsers.hints import drop_args
from parism.argv.tokenize import Tokens

FLAGS: dict[str, str] = {
    **{f: "bool" for f in "-a -d -f -F -l -x -n -N -q -Q -s -h -p -u -g -D -v -t -c -r -U --noreport "
       "--dirsfirst --filesfirst --du --si --inodes --device --prune --matchdirs --gitignore --ignore-case "
       "--fromfile -C -i -A -S -X -H".split()},
    **{f: "number" for f in ("-L", "--filelimit")},  # tree: "Invalid level, must be greater than 0." otherwise
    **{f: "data" for f in "-P -I --charset --timefmt --sort".split()},
}
VALUES = {"-L": r"\d+", "--charset": "(?i)ascii|utf-?8|us-ascii", "--sort": "name|version|size|mtime|ctime"}
_DISPLAY = "CiASXH"


def _supports(tokens: Tokens) -> str | None:
    for f in _DISPLAY:
        if tokens.has("-" + f):
            return f"'-{f}' changes the drawing (colour, no indentation, line graphics or XML/HTML)"
    return None


CONTRACT = Contract(flags=FLAGS, values=VALUES, supports=_supports, hint=lambda a: drop_args(a, _DISPLAY))

_BRANCH = re.compile(r"((?:(?:│|\|)[ \u00a0]{3}|[ \u00a0]{4})*)(├── |└── |\|-- |`-- |[├└]─[─\u00a0] )")
_INFO = re.compile(r"\[([^\]]*)\]  ")
_SUMMARY = re.compile(r"(\d+) director(?:y|ies)(?:, (\d+) files?)?")
_ERROR = re.compile(r"  \[(error opening dir|recursive, not followed)\]$")


class TreeNode(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    type: str | None = None
    target: str | None = None
    ambiguous_link: bool | None = None
    info: str | None = None
    error: str | None = None
    children: list["TreeNode"] | None = None


class TreeResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    root: TreeNode | None = None
    roots: list[TreeNode] | None = None
    directories: int | None = None
    files: int | None = None
    warnings: list[str] | None = None


def _decode(name: str, ascii_mode: bool, quoted: bool) -> str:
    """Undo tree's escaping: the C locale escapes ``\\``, space and non-ASCII bytes C-style; a
    UTF-8 locale only writes unprintable bytes as ``\\ooo``; ``-Q`` adds quotes and ``\\"``."""
    if quoted and len(name) >= 2 and name[0] == '"' and name[-1] == '"':
        name = name[1:-1]
        if not ascii_mode:
            name = name.replace('\\"', '"')
    if ascii_mode:
        return unescape_c(name)
    return decode_octal(name)


def _node(text: str, pin: ParseInput, ascii_mode: bool) -> dict[str, object]:
    """One entry's text (after the glyphs) → node."""
    node: dict[str, object] = {}
    if m := _INFO.match(text):
        node["info"] = m.group(1).strip()
        text = text[m.end():]
    if m := _ERROR.search(text):
        node["error"] = m.group(1)
        text = text[: m.start()]
    quoted = pin.tokens.has("-Q")
    mode = str(node.get("info", "")).split(" ", 1)[0]
    if re.fullmatch(MODE_RE, mode) and mode[0] != "l":  # -p shows the type: ' -> ' is in the name
        name, target, ambiguous = text, None, False
    else:
        name, target, ambiguous = split_link(text, None) if not quoted else _split_quoted(text)
    if target is not None:
        node["type"] = "symlink"
        if pin.tokens.has("-F") and target[-1:] in "/*=|" and len(target) > 1:
            target = target[:-1]  # -F marks the link's target kind after the target
        node["target"] = _decode(target, ascii_mode, quoted)
        if ambiguous:
            node["ambiguous_link"] = True
    elif pin.tokens.has("-F") and name[-1:] in "/*=|" and len(name) > 1:
        node["type"] = {"/": "directory", "*": "file"}.get(name[-1], "other")
        name = name[:-1]
    elif pin.tokens.has("-d"):
        node["type"] = "directory"
    node["name"] = _decode(name, ascii_mode, quoted)
    return node


def _split_quoted(text: str) -> tuple[str, str | None, bool]:
    idx = text.find('" -> "')
    return (text[: idx + 1], text[idx + 5:], False) if idx >= 0 else (text, None, False)


def _finish(nodes: list[dict[str, object]], directories: int | None, warnings: list[str]) -> None:
    """Type the leaves from structure and the summary count; check the invariant."""
    everything: list[dict[str, object]] = []

    def walk(n: dict[str, object]) -> None:
        everything.append(n)
        if n.get("children"):
            n["type"] = "directory" if n.get("type") in (None, "directory") else n["type"]
            for c in n["children"]:  # type: ignore[union-attr]
                walk(c)

    for root in nodes:
        walk(root)
    for root in nodes:
        if root.get("type") is None and "error" not in root:
            root["type"] = "directory"
    known = sum(1 for n in everything if n.get("type") == "directory")
    untyped = [n for n in everything if n.get("type") is None]
    if directories is not None and untyped:
        if known == directories:
            for n in untyped:
                n["type"] = "file"
        else:
            warnings.append(f"summary says {directories} directories but {known} are known; "
                            f"{len(untyped)} leaves keep type null (use -F to mark directories)")


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    roots: list[dict[str, object]] = []
    stack: list[dict[str, object]] = []
    warnings: list[str] = []
    directories = files = None
    ascii_mode = False
    entries = 0
    for line in split_lines(text):
        if not line.strip():
            continue
        m = _BRANCH.match(line)
        if m is None:
            s = _SUMMARY.fullmatch(line.strip())
            if s:
                directories, files = int(s.group(1)), int(s.group(2)) if s.group(2) else None
                continue
            node = _node(line, pin, ascii_mode)
            roots.append(node)
            stack = [node]
            continue
        ascii_mode = ascii_mode or m.group(2)[0] in "|`"
        depth = len(m.group(1)) // 4 + 1
        if not stack or depth > len(stack):
            warnings.append(f"entry deeper than its parent: {line[:80]!r}")
            continue
        node = _node(line[m.end():], pin, ascii_mode)
        parent = stack[depth - 1]
        parent.setdefault("children", []).append(node)  # type: ignore[union-attr]
        del stack[depth:]
        stack.append(node)
        entries += 1
    if not roots:
        if any(ln.strip() for ln in split_lines(text)) and directories is None:
            raise Unrecognized("tree: no root line and no entries")
        return {"directories": directories, "files": files} if directories is not None else {}
    _finish(roots, directories, warnings)
    if directories is not None and files is not None and not pin.tokens.has("-d"):
        drawn = entries + sum(1 for r in roots if "error" not in r)
        if drawn != directories + files and not pin.tokens.has("-L", "--filelimit", "--prune"):
            warnings.append(f"summary counts {directories + files} entries but {drawn} are drawn")
    out: dict[str, object] = {"root": roots[0]}
    if len(roots) > 1:
        out["roots"] = roots
    if directories is not None:
        out["directories"] = directories
    if files is not None:
        out["files"] = files
    if warnings:
        out["warnings"] = warnings
    return out


PARSER = Parser(
    id="tree",
    contract=CONTRACT,
    parse=parse,
    schema=TreeResult,
    os=UNIX_OS,
    examples=((), ("-F",), ("-a", "-L", "2"), ("-d",)),
    json_output=lambda a: "-J" in a,
)
