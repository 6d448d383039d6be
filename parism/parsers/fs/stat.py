"""``stat`` — GNU and toybox labelled blocks (one per file; C, German or French labels, read from
the text) and the BSD/macOS one-line default.

Schema::

    {files: [{file, target?, size_bytes, blocks, io_block?, block_size?, file_type?, device?, device_type?,
              inode, links, permissions: "-rwxr-xr-x", mode_octal?: "0755", uid?, uid_name?,
              gid?, gid_name?, context?, accessed_at?, modified_at?, changed_at?, birth_at?,
              accessed_raw?, modified_raw?, changed_raw?, birth_raw?, flags?, rdev?}],
     format: "gnu"|"bsd"|"custom"|"terse", locale?: "de"|"fr", warnings?: [str]}

``*_at`` are ISO 8601 (GNU keeps nanoseconds and the zone offset); ``*_raw`` is the printed text.
A ``Birth: -`` (unknown) leaves ``birth_at`` out.  toybox's ``IO Blocks:`` is the size of the
unit ``Blocks`` counts (512), so it is ``block_size`` there, never ``io_block`` (GNU's
``st_blksize``).  GNU names may be quoted ('a', ‘a’ in UTF-8
locales) or bare (coreutils ≥ 9); a name with a newline continues until the ``Size:`` line.
BSD lines: ``dev ino mode nlink user group rdev size "atime" "mtime" "ctime" "btime" blksize
blocks flags name`` (numeric uid/gid and file type are not printed there, so they stay absent).
``-c FMT``/``--format``/``--printf`` and ``-t`` are read by their format (``_statfmt``): only the
fields the format names, ``format: "custom"|"terse"``.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from parism.parsers.contract import UNIX_OS, Contract, ParseInput, Parser, Unrecognized, Unsupported, always
from parism.parsers.dates import gnu_to_iso, month_day_to_iso
from parism.parsers.fs._common import MODE_RE, mode_info, split_lines, split_link
from parism.parsers.fs import _statfmt
from parism.parsers.fs._stat_labels import LANGUAGES, StatLines, stat_lines
from parism.parsers.hints import drop_args
from parism.parsers.l10n import C_LOCALE_HINT
from parism.argv.tokenize import Tokens

FLAGS = {"-L": "bool", "--dereference": "bool", "-c": "data", "--format": "data", "--printf": "data",
         "-f": "bool", "--file-system": "bool", "-t": "bool", "--terse": "bool", "-x": "bool", "-l": "bool"}


_FORMAT_FLAGS = ("-c", "--format", "--printf")
_TERSE = _statfmt.compile_format(_statfmt.TERSE, printf=False)
_TERSE_CONTEXT = _statfmt.compile_format(_statfmt.TERSE_CONTEXT, printf=False)
assert isinstance(_TERSE, _statfmt.StatFormat) and isinstance(_TERSE_CONTEXT, _statfmt.StatFormat)


def _format(tokens: Tokens) -> _statfmt.StatFormat | str | None:
    """The caller's format (the last of -c/--format/--printf, or -t), None for the default."""
    given = [t for t in tokens.flags if t.name in (*_FORMAT_FLAGS, "-t", "--terse")]
    if not given:
        return None
    last = given[-1]
    if last.name in ("-t", "--terse"):
        return _TERSE
    return _statfmt.compile_format(last.value or "", printf=last.name == "--printf")


def _supports(tokens: Tokens) -> str | None:
    bad = [t.name for t in tokens.flags if t.name not in ("-L", "--dereference", *_FORMAT_FLAGS, "-t", "--terse")]
    if bad:
        return f"'{bad[0]}' changes the output format; the default, -c/--printf and -t formats are read"
    fmt = _format(tokens)
    if isinstance(fmt, str):
        return f"stat format: {fmt}"
    if fmt is not None and len(tokens.positionals) > 1 and not fmt.fields[-1][1]:
        return "stat --printf: a format that ends in a field cannot separate several files' records"
    return None


def _hint(args: list[str]) -> list[str]:
    """Back to the default format. BSD ``-f FMT`` is GNU's ``-f`` (file system) flag, so format
    strings (anything with ``%``) are dropped as well."""
    kept = drop_args(args, "ftxl", ("--file-system", "--terse"), valued=("-c", "--format", "--printf"))
    return [a for a in kept if "%" not in a]


CONTRACT = Contract(flags=FLAGS, min_positionals=1, supports=_supports, hint=_hint)


class StatFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file: str
    target: str | None = None
    size_bytes: int | None = None
    blocks: int | None = None
    io_block: int | None = None
    block_size: int | None = None
    file_type: str | None = None
    device: str | None = None
    device_type: str | None = None
    inode: int | None = None
    links: int | None = None
    permissions: str | None = None
    mode_octal: str | None = None
    uid: int | None = None
    uid_name: str | None = None
    gid: int | None = None
    gid_name: str | None = None
    context: str | None = None
    accessed_at: str | None = None
    modified_at: str | None = None
    changed_at: str | None = None
    birth_at: str | None = None
    accessed_raw: str | None = None
    modified_raw: str | None = None
    changed_raw: str | None = None
    birth_raw: str | None = None
    flags: str | None = None
    rdev: str | None = None


class StatResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    files: list[StatFile]
    format: str
    locale: str | None = None
    warnings: list[str] | None = None


_QUOTES = {"'": "'", "\u2018": "\u2019", '"': '"', "`": "'"}
_BSD = re.compile(
    r"(?P<dev>\d+) (?P<ino>\d+) (?P<mode>" + MODE_RE + r")\S? (?P<nlink>\d+) (?P<user>\S+) (?P<group>\S+) "
    r"(?P<rdev>\S+) (?P<size>\d+) \"(?P<a>[^\"]*)\" \"(?P<m>[^\"]*)\" \"(?P<c>[^\"]*)\" \"(?P<b>[^\"]*)\" "
    r"(?P<blksize>\d+) (?P<blocks>\d+) (?P<flags>\S+) (?P<name>.*)"
)
_PERMISSIONS = re.compile(r"\(\d{3,4}/" + MODE_RE + r"\)")


def _unquote(text: str, link_size: int | None) -> tuple[str, str | None, bool]:
    """GNU ``File:`` value → (name, symlink target, ambiguous). ``link_size`` is None for
    anything but a symlink (then ``' -> '`` is part of the name)."""
    q = text[:1]
    if q in _QUOTES and text.endswith(_QUOTES[q]) and len(text) >= 2:
        close = _QUOTES[q]
        sep = f"{close} -> {q}"
        if link_size is not None and sep in text:
            name, _, target = text[1:-1].partition(sep)
            return name, target, False
        if sep not in text or link_size is None:
            return text[1:-1], None, False
    if link_size is None:
        return text, None, False
    if text.endswith("'"):  # toybox quotes only the target: lp -> 'plain'; the link's size says where
        cut = text.find(" -> '")
        while cut >= 0:
            if len(text[cut + 5:-1].encode("utf-8", "surrogateescape")) == link_size:
                return text[:cut], text[cut + 5:-1], False
            cut = text.find(" -> '", cut + 1)
    return split_link(text, link_size)


def _set_time(rec: dict[str, object], key: str, raw: str, iso: str | None) -> None:
    if raw.strip() in ("-", ""):
        return
    rec[f"{key}_raw"] = raw.strip()
    if iso is not None:
        rec[f"{key}_at"] = iso


def _gnu(lines: list[str], lab: StatLines, warnings: list[str]) -> list[dict[str, object]]:
    files: list[dict[str, object]] = []
    rec: dict[str, object] | None = None
    name_lines: list[str] | None = None
    for n, line in enumerate(lines, start=1):
        if (f := lab.file.fullmatch(line)) is not None:
            name_lines = [f.group(1)]
            rec = None
            continue
        m = lab.size.fullmatch(line)
        if m and name_lines is not None:
            kind = lab.file_type(m.group(4).strip())
            name, target, ambiguous = _unquote("\n".join(name_lines), int(m.group(1)) if kind == "symbolic link" else None)
            rec = {"file": name}
            if target is not None:
                rec["target"] = target
            if ambiguous:
                warnings.append(f"symlink {name!r}: ' -> ' occurs in the name or target; split at the first")
            # toybox's "IO Blocks:" is the bytes per counted block (%B, 512), not st_blksize
            third = "block_size" if lab.toybox(line) else "io_block"
            rec.update({"size_bytes": int(m.group(1)), "blocks": int(m.group(2)), third: int(m.group(3))})
            if kind:
                rec["file_type"] = kind
            files.append(rec)
            name_lines = None
            continue
        if name_lines is not None:
            name_lines.append(line)  # the name contains a newline
            continue
        if rec is None:
            if line.strip():
                warnings.append(f"line {n} is outside a File: block: {line[:80]!r}")
            continue
        _gnu_field(rec, line, lab, n, warnings)
    return files


def _gnu_field(rec: dict[str, object], line: str, lab: StatLines, n: int, warnings: list[str]) -> None:
    if m := lab.device.fullmatch(line):
        rec.update(device=m.group(1), inode=int(m.group(2)), links=int(m.group(3)))
        if m.group(4):
            rec["device_type"] = m.group(4)
    elif m := lab.access.fullmatch(line):
        rec.update(mode_octal=m.group(1).zfill(4), permissions=m.group(2), uid=int(m.group(3)), uid_name=m.group(4),
                   gid=int(m.group(5)), gid_name=m.group(6))
    elif m := lab.time.fullmatch(line):
        raw = m.group(2)
        _set_time(rec, lab.time_keys[m.group(1)], raw, gnu_to_iso(raw))
    elif m := lab.context.fullmatch(line):
        rec["context"] = m.group(1).strip()
    elif line.strip():
        warnings.append(f"line {n} is not a stat field: {line[:80]!r}")


def _bsd(lines: list[str], warnings: list[str]) -> list[dict[str, object]]:
    files: list[dict[str, object]] = []
    for n, line in enumerate(lines, start=1):
        m = _BSD.fullmatch(line)
        if m is None:
            if line.strip():
                warnings.append(f"line {n} is not a BSD stat line: {line[:80]!r}")
            continue
        g = m.groupdict()
        info = mode_info(g["mode"])
        rec: dict[str, object] = {
            "file": g["name"], "device": g["dev"], "inode": int(g["ino"]), "permissions": g["mode"],
            "mode_octal": info["mode_octal"], "links": int(g["nlink"]), "uid_name": g["user"],
            "gid_name": g["group"], "rdev": g["rdev"], "size_bytes": int(g["size"]),
            "io_block": int(g["blksize"]), "blocks": int(g["blocks"]), "flags": g["flags"],
        }
        for key, grp in (("accessed", "a"), ("modified", "m"), ("changed", "c"), ("birth", "b")):
            _set_time(rec, key, g[grp], month_day_to_iso(g[grp]))
        files.append(rec)
    return files


def parse(text: str, pin: ParseInput) -> dict[str, object]:
    fmt = _format(pin.tokens)
    if isinstance(fmt, _statfmt.StatFormat):
        operands = [t.text for t in pin.tokens.positionals]
        terse = fmt.fields == _TERSE.fields
        try:
            files = _statfmt.parse(text, fmt, operands)
        except Unrecognized:
            if not terse:
                raise
            files = _statfmt.parse(text, _TERSE_CONTEXT, operands)  # under SELinux -t adds %C
        return {"files": files, "format": "terse" if terse else "custom"}
    lines = split_lines(text)
    warnings: list[str] = []
    lab = _language(lines[:50])
    files = _gnu(lines, lab, warnings) if lab else _bsd(lines, warnings)
    if not files and any(ln.strip() for ln in lines):
        if any(_PERMISSIONS.search(ln) for ln in lines[:50]):
            raise Unsupported("stat: the labels are in a language this parser does not read",
                              hint_args=pin.sub_args, hint_reason=C_LOCALE_HINT)
        raise Unrecognized("stat: neither GNU 'File:' blocks nor BSD one-line records")
    out: dict[str, object] = {"files": files, "format": "gnu" if lab else "bsd"}
    if lab and lab.lang != "C":
        out["locale"] = lab.lang
    if warnings:
        out["warnings"] = warnings
    return out


def _language(head: list[str]) -> StatLines | None:
    """The labels of the first ``File:`` line (GNU and toybox, C/German/French); None: BSD."""
    for lang in LANGUAGES:
        lab = stat_lines(lang)
        if any(lab.file.fullmatch(ln) for ln in head):
            return lab
    return None


PARSER = Parser(
    id="stat",
    evidence=True,
    contract=CONTRACT,
    parse=parse,
    schema=StatResult,
    rows_key="files",
    row_fields=tuple(StatFile.model_fields),
    os=UNIX_OS,
    prints_always=always,
    examples=(("file.txt",), ("-L", "a", "b")),
)
