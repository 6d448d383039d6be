"""uname — kernel and machine identity.

Schema (only fields the output actually carries are present)::

    {"kernel_name": str, "hostname": str, "kernel_release": str, "kernel_version": str,
     "machine": str, "processor": str, "hardware_platform": str, "os": str}

Accepted: no flags (``-s``), any combination of ``-s -n -r -v -m -p -i -o`` (and long forms),
``-a``/``--all``.  The fields come out in a fixed order (s n r v m p i o); only the kernel
version contains spaces, so fields before it are read from the left and fields after it from
the right.  With ``-a`` GNU omits ``-p``/``-i`` when they are ``unknown`` and macOS/FreeBSD print
only ``s n r v m``: the trailing architecture-like words tell which ones are there.
"""

from __future__ import annotations

import re

from pydantic import BaseModel

from parism.parsers.contract import Contract, ParseInput, Parser, Unrecognized

FIELDS = ("kernel_name", "hostname", "kernel_release", "kernel_version", "machine",
          "processor", "hardware_platform", "os")
_FLAG_FIELD = {
    "-s": "kernel_name", "--kernel-name": "kernel_name", "-n": "hostname", "--nodename": "hostname",
    "-r": "kernel_release", "--kernel-release": "kernel_release", "-v": "kernel_version",
    "--kernel-version": "kernel_version", "-m": "machine", "--machine": "machine",
    "-p": "processor", "--processor": "processor", "-i": "hardware_platform",
    "--hardware-platform": "hardware_platform", "-o": "os", "--operating-system": "os",
}
_ARCH = re.compile(
    r"^(x86_64|amd64|i[3-6]86|aarch64|arm64|arm\w*|ppc\w*|powerpc\w*|s390x?|riscv\w*|mips\w*|"
    r"sparc\w*|ia64|alpha|loongarch64|unknown)$")


class Uname(BaseModel):
    kernel_name: str | None = None
    hostname: str | None = None
    kernel_release: str | None = None
    kernel_version: str | None = None
    machine: str | None = None
    processor: str | None = None
    hardware_platform: str | None = None
    os: str | None = None


def _all_fields(words: list[str], os_name: str) -> list[str]:
    """Which fields an ``-a`` line holds, decided from its shape."""
    head = ["kernel_name", "hostname", "kernel_release", "kernel_version"]
    if os_name in ("macos", "freebsd") or words[0] in ("Darwin", "FreeBSD", "OpenBSD", "NetBSD"):
        return head + ["machine"]
    tail = ["os"]
    arch = 0
    for w in reversed(words[:-1]):
        if not _ARCH.match(w) or arch == 3:
            break
        arch += 1
    tail = {0: [], 1: ["machine"], 2: ["machine", "processor"],
            3: ["machine", "processor", "hardware_platform"]}[arch] + tail
    return head + tail


def parse(text: str, pin: ParseInput) -> dict[str, str]:
    line = " ".join(ln for ln in text.splitlines() if ln.strip()).strip()
    if not line:
        raise Unrecognized("uname printed nothing")
    words = line.split()
    if pin.tokens.has("-a", "--all"):
        wanted = _all_fields(words, pin.os)
    else:
        chosen = {_FLAG_FIELD[t.name] for t in pin.tokens.flags if t.name in _FLAG_FIELD}
        wanted = [f for f in FIELDS if f in chosen] or ["kernel_name"]
    if "kernel_version" not in wanted:
        if len(words) != len(wanted):
            raise Unrecognized(f"expected {len(wanted)} field(s), found {len(words)}")
        return dict(zip(wanted, words))
    k = wanted.index("kernel_version")
    before, after = wanted[:k], wanted[k + 1:]
    if len(words) < len(before) + len(after) + 1:
        raise Unrecognized("too few fields for the requested uname output")
    out = dict(zip(before, words[: len(before)]))
    if after:
        out.update(zip(after, words[len(words) - len(after):]))
    version_words = words[len(before): len(words) - len(after)]
    # keep the version exactly as printed (inner spacing included)
    start = _nth_word_start(line, len(before))
    end = _nth_word_end(line, len(words) - len(after) - 1)
    out["kernel_version"] = line[start:end] if version_words else ""
    return out


def _nth_word_start(line: str, n: int) -> int:
    return [m.start() for m in re.finditer(r"\S+", line)][n]


def _nth_word_end(line: str, n: int) -> int:
    return [m.end() for m in re.finditer(r"\S+", line)][n]


PARSER = Parser(
    id="uname",
    contract=Contract(
        flags={"-a": "bool", "--all": "bool", **{f: "bool" for f in _FLAG_FIELD}},
        max_positionals=0,
    ),
    parse=parse,
    schema=Uname,
    row_fields=FIELDS,
    examples=(("-a",), ("-r",), ("-srm",)),
)
