"""free, uname, id against this machine: the real command's output, checked against the kernel's
own view (os.uname, /proc/meminfo, os.getuid, grp) — not against the parser's output."""

from __future__ import annotations

import grp
import os
import pwd
import subprocess

import pytest

from parism.parsers import registry

ENV = {"LC_ALL": "C.UTF-8", "TZ": "UTC", "PATH": "/usr/bin:/bin"}


def run(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, env=ENV, check=True).stdout


def parse(cmd: str, args: list[str], text: str):
    out = registry.parse(cmd, args, text, "linux")
    assert out.parse_error is None, out.parse_error
    return out.parsed


def test_uname_a_matches_os_uname():
    u = os.uname()
    p = parse("uname", ["-a"], run("uname", "-a"))
    assert p["kernel_name"] == u.sysname
    assert p["hostname"] == u.nodename
    assert p["kernel_release"] == u.release
    assert p["kernel_version"] == u.version
    assert p["machine"] == u.machine


@pytest.mark.parametrize("flag,field,attr", [("-r", "kernel_release", "release"), ("-m", "machine", "machine"),
                                              ("-n", "hostname", "nodename"), ("-v", "kernel_version", "version")])
def test_uname_single_field(flag, field, attr):
    """§22 #41: single-field forms used to produce wrong fields."""
    assert parse("uname", [flag], run("uname", flag)) == {field: getattr(os.uname(), attr)}


def test_uname_plain_is_kernel_name_only():
    assert parse("uname", [], run("uname")) == {"kernel_name": os.uname().sysname}


def _meminfo_kib(key: str) -> int:
    for line in open("/proc/meminfo"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def test_free_default_is_kib_and_named_so():
    """§22 #40: plain free prints KiB; the unit must say KiB, not bytes."""
    p = parse("free", [], run("free"))
    assert p["unit"] == "KiB" and p["unit_bytes"] == 1024
    assert p["mem"]["total"] == _meminfo_kib("MemTotal")
    assert p["swap"]["total"] == _meminfo_kib("SwapTotal")


def test_free_bytes_and_wide():
    p = parse("free", ["-b", "-w"], run("free", "-b", "-w"))
    assert p["unit"] == "bytes"
    assert p["mem"]["total"] == _meminfo_kib("MemTotal") * 1024
    assert "buffers" in p["mem"] and "cache" in p["mem"] and "buff_cache" not in p["mem"]


def test_free_human_keeps_text_and_approximate_bytes():
    p = parse("free", ["-h"], run("free", "-h"))
    total = _meminfo_kib("MemTotal") * 1024
    assert isinstance(p["mem"]["total"], str) and p["unit"] == "human"
    assert abs(p["mem"]["total_bytes_approx"] - total) <= 0.06 * total


def test_id_full_line_matches_process_identity():
    p = parse("id", [], run("id"))
    assert p["uid"] == os.getuid() and p["user"] == pwd.getpwuid(os.getuid()).pw_name
    assert p["gid"] == os.getgid() and p["group"] == grp.getgrgid(os.getgid()).gr_name
    assert {g["id"] for g in p["groups"]} == set(os.getgroups()) | {os.getgid()}


def test_id_u_and_un():
    """§22 #42: id -u / -un used to come back as zeros."""
    assert parse("id", ["-u"], run("id", "-u")) == {"uid": os.getuid()}
    assert parse("id", ["-un"], run("id", "-un")) == {"user": pwd.getpwuid(os.getuid()).pw_name}


def test_free_without_mem_row_is_unrecognized():
    out = registry.parse("free", [], "              total        used\nfoo:  1 2\n", "linux")
    assert out.parse_error is not None and out.parse_error.reason == "unrecognized_output"
