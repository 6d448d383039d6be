"""The pack worker's seccomp program: its syscall numbers are the kernel's (read from the
system's own headers), and what it decides, run by a small classic-BPF interpreter over
seccomp_data, is the documented table. The kernel-level proof is tests/security/test_pack_worker.py."""

from __future__ import annotations

import errno
import re
import struct
from pathlib import Path

import pytest

from parism.packs import seccomp
from parism.run.sandbox._helper import AUDIT_ARCH

HEADERS = {"x86_64": Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
           "aarch64": Path("/usr/include/asm-generic/unistd.h")}
ALLOW = 0x7FFF0000


def header_numbers(path: Path) -> dict[str, int]:
    text = path.read_text()
    return {m[1]: int(m[2]) for m in re.finditer(r"^#define __NR_(\w+)\s+(\d+)\s*$", text, re.M)}


@pytest.mark.parametrize("machine", seccomp.ARCHES)
def test_numbers_match_the_kernel_headers(machine: str) -> None:
    path = HEADERS[machine]
    if not path.exists():
        pytest.skip(f"{path} is not installed (linux-libc-dev)")
    nrs = header_numbers(path)
    mine = seccomp.denied_numbers(machine)
    assert {name: nrs[name] for name in mine} == mine
    assert nrs["socket"] == seccomp.SOCKET[machine]
    assert nrs["clone"] == seccomp.NS_SYSCALLS[machine][2] and nrs["clone3"] == seccomp.NS_SYSCALLS[machine][3]


def run_bpf(prog: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """Classic BPF as the kernel runs a seccomp filter: only the instructions the filter uses."""
    ins = [struct.unpack("=HBBI", prog[i:i + 8]) for i in range(0, len(prog), 8)]
    data = struct.pack("=iIQ6Q", nr, arch, 0, *(list(args) + [0] * 6)[:6])
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = ins[pc]
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("=I", data, k)[0]
            pc += 1
        elif code in (0x15, 0x35, 0x45):
            hit = acc == k if code == 0x15 else acc >= k if code == 0x35 else bool(acc & k)
            pc += 1 + (jt if hit else jf)
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected instruction {code:#x}")


def errno_of(action: int) -> int:
    assert action & 0xFFFF0000 == 0x00050000, hex(action)
    return action & 0xFFFF


@pytest.mark.parametrize("machine", seccomp.ARCHES)
def test_the_program_decides_the_documented_table(machine: str) -> None:
    prog = seccomp.program(machine)
    audit = AUDIT_ARCH[machine][0]
    denied = seccomp.denied_numbers(machine)
    for name in ("mount", "umount2", "pivot_root", "ptrace", "bpf", "keyctl", "unshare", "setns", "fsopen"):
        assert errno_of(run_bpf(prog, denied[name], audit)) == errno.EPERM, name
    assert errno_of(run_bpf(prog, seccomp.SOCKET[machine], audit, (40,))) == errno.EAFNOSUPPORT  # AF_VSOCK
    assert errno_of(run_bpf(prog, seccomp.SOCKET[machine], audit, (1,))) == errno.EAFNOSUPPORT  # AF_UNIX
    clone, clone3 = seccomp.NS_SYSCALLS[machine][2:]
    assert run_bpf(prog, clone, audit, (0x11,)) == ALLOW  # fork: SIGCHLD
    assert errno_of(run_bpf(prog, clone, audit, (0x10000000 | 0x11,))) == errno.EPERM  # CLONE_NEWUSER
    assert errno_of(run_bpf(prog, clone3, audit)) == errno.ENOSYS
    for nr in (0, 1, 3, 60, 63):  # read/write/close/exit-ish numbers: allowed
        if nr not in denied.values():
            assert run_bpf(prog, nr, audit) == ALLOW
    assert errno_of(run_bpf(prog, 0, 0x40000003)) == errno.EPERM  # i386 ABI
    if machine == "x86_64":
        assert errno_of(run_bpf(prog, 0x40000000 | 0, audit)) == errno.EPERM  # x32


def test_other_architectures_are_refused() -> None:
    with pytest.raises(OSError):
        seccomp.program("riscv64")
