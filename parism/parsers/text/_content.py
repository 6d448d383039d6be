"""The one reader behind ``head``, ``tail`` and ``cat``: file content as lines.

Schema (returned by all three)::

    {lines: [str]}                                    one input, or banners suppressed (-q)
    {files: [{file: str, lines: [str]}]}              head/tail with several files or -v:
                                                      one section per ``==> f <==`` banner
    {lines: [{number: int|null, text: str}]}          cat -n / -b (number null: unnumbered blank)
    crlf?: true                                       the output had CRLF line ends (removed)

Whether banners are present is decided from the arguments (several files or ``-v``, unless
``-q``), and a banner must name the next file argument: content that contains ``==> x <==``
stays content.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from parism.parsers.contract import ParseInput, Unrecognized
from parism.parsers.text._common import split_lines

_BANNER = re.compile(r"^==> (.*) <==$")
_NUMBERED = re.compile(r"^ *(\d+)\t")


class NumberedLine(BaseModel):
    number: int | None = None
    text: str


class FileSection(BaseModel):
    file: str
    lines: list[str]


class Content(BaseModel):
    lines: list[str] | list[NumberedLine] | None = None
    files: list[FileSection] | None = None
    crlf: bool | None = None


def expects_banners(pin: ParseInput) -> bool:
    """head/tail print ``==> f <==`` banners for several files or -v, never with -q."""
    t = pin.tokens
    if t.has("-q", "--quiet", "--silent"):
        return False
    return t.has("-v", "--verbose") or len(t.positionals) > 1


def parse_sections(text: str, pin: ParseInput) -> Content:
    lines, crlf = split_lines(text)
    if not expects_banners(pin):
        return Content(lines=lines, crlf=crlf or None)
    # a banner names the next file argument (files that failed to open print none), so
    # content that merely looks like a banner is kept as content
    pending = [p.text if p.text != "-" else "standard input" for p in pin.tokens.positionals]
    pending = pending or ["standard input"]
    files: list[FileSection] = []
    for line in lines:
        m = _BANNER.match(line)
        name = m.group(1) if m else None
        if name is not None and name in pending:
            del pending[: pending.index(name) + 1]
            if files and files[-1].lines and files[-1].lines[-1] == "":
                files[-1].lines.pop()  # the blank line printed before every banner but the first
            files.append(FileSection(file=name, lines=[]))
        elif files:
            files[-1].lines.append(line)
        else:
            raise Unrecognized(f"{pin.cmd}: expected a '==> file <==' banner first")
    return Content(files=files, crlf=crlf or None)


def parse_numbered(lines: list[str]) -> list[NumberedLine]:
    """``cat -n``/``-b`` lines: ``%6d<TAB>text``; with -b blank lines carry no number."""
    out: list[NumberedLine] = []
    for line in lines:
        m = _NUMBERED.match(line)
        if m:
            out.append(NumberedLine(number=int(m.group(1)), text=line[m.end():]))
        else:
            out.append(NumberedLine(number=None, text=line))
    return out
