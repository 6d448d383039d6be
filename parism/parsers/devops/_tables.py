"""Header-sliced tables shared by the devops CLIs (kubectl, docker, helm): find the header,
locate its (possibly multi-word) column names, slice every row at the column starts."""

from __future__ import annotations

import re
from collections.abc import Sequence

from parism.parsers.contract import Unrecognized
from parism.parsers.table import HeaderTable


def snake(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def read_table(text: str, first: str, multiword: Sequence[str] = ()) -> tuple[list[str], list[dict[str, str]]]:
    """Rows of a table whose header starts with the word ``first``. ``multiword`` lists header
    names that contain spaces (``"CONTAINER ID"``, ``"LAST SEEN"``)."""
    lines = [ln.rstrip("\r") for ln in text.splitlines()]
    idx = next((i for i, ln in enumerate(lines) if ln.split()[:1] == [first.split()[0]]), None)
    if idx is None:
        raise Unrecognized(f"no table header starting with {first!r}")
    header = lines[idx]
    names: list[str] = []
    pos = 0
    while pos < len(header):
        m = re.compile(r"\S+").search(header, pos)
        if m is None:
            break
        name = next((w for w in multiword if header.startswith(w, m.start())), m.group())
        names.append(name)
        pos = m.start() + len(name)
    table = HeaderTable.from_header(header, names)
    rows = [table.slice(ln) for ln in lines[idx + 1:] if ln.strip()]
    return names, rows
