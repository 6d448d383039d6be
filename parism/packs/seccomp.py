"""The pack worker's seccomp filter: the commands' refusals plus what only a kernel-level
attacker needs, compiled on the host and handed to bubblewrap (``--add-seccomp-fd``).

bwrap installs it in the worker's process right before it exec's the interpreter (after the
mounts, so bwrap itself is not filtered), and every process the pack starts inherits it; the
pack's code never runs without it. Like the commands' filter (``parism/run/sandbox/_helper.py``:
``deny_namespaces`` and the socket filter) it refuses another ABI (x32, ``int 0x80``), new or
joined namespaces (``unshare``, ``setns``, ``clone`` with a namespace flag: EPERM; ``clone3``:
ENOSYS, so libc falls back to ``clone``) and io_uring; unlike a command a pack needs no socket
at all, so ``socket`` fails with EAFNOSUPPORT for every family. On top of that (issue #23,
docs/security.md "Parser packs"): the mount calls old and new (``mount``, ``umount2``,
``pivot_root``, ``open_tree``, ``move_mount``, ``fsopen``, ``fsconfig``, ``fsmount``, ``fspick``,
``mount_setattr``), ``ptrace`` and the cross-process memory calls, ``bpf``, the keyring
(``keyctl``, ``add_key``, ``request_key``), ``perf_event_open``, ``userfaultfd``, handle-based
opens, ``chroot``, module loading, ``kexec_load``, ``reboot``, swap, ``acct`` and ``syslog``:
EPERM. x86-64 and arm64 only; elsewhere there is no filter and the worker is refused
(``program`` raises).
"""

from __future__ import annotations

import errno
import os
import struct

from parism.run.sandbox._helper import AUDIT_ARCH, NS_FLAGS, NS_SYSCALLS

# name → (x86-64, arm64) syscall numbers (arch/x86/entry/syscalls/syscall_64.tbl and
# include/uapi/asm-generic/unistd.h; tests/unit/test_pack_seccomp.py checks them against the
# system's own headers when they are installed)
DENIED: dict[str, tuple[int, int]] = {
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "chroot": (161, 51),
    "open_tree": (428, 428), "move_mount": (429, 429), "fsopen": (430, 430), "fsconfig": (431, 431),
    "fsmount": (432, 432), "fspick": (433, 433), "mount_setattr": (442, 442),
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271),
    "kcmp": (312, 272), "bpf": (321, 280), "perf_event_open": (298, 241), "userfaultfd": (323, 282),
    "keyctl": (250, 219), "add_key": (248, 217), "request_key": (249, 218),
    "name_to_handle_at": (303, 264), "open_by_handle_at": (304, 265),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106),
    "kexec_load": (246, 104), "reboot": (169, 142), "swapon": (167, 224), "swapoff": (168, 225),
    "acct": (163, 89), "syslog": (103, 116), "quotactl": (179, 60), "fanotify_init": (300, 262),
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
}
SOCKET = {"x86_64": 41, "aarch64": 198}
ARCHES = ("x86_64", "aarch64")

_LD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW = 0x7FFF0000


def _errno(code: int) -> int:
    return 0x00050000 | code  # SECCOMP_RET_ERRNO


def denied_numbers(machine: str) -> dict[str, int]:
    """Every syscall the filter refuses with EPERM on ``machine`` (namespaces included)."""
    col = ARCHES.index(machine)
    unshare, setns, _clone, _clone3 = NS_SYSCALLS[machine]
    return {**{name: nrs[col] for name, nrs in DENIED.items()}, "unshare": unshare, "setns": setns}


def program(machine: str | None = None) -> bytes:
    """The compiled filter (``struct sock_filter[]``) for ``machine`` (default: this one)."""
    machine = machine or os.uname().machine
    if machine not in ARCHES:
        raise OSError(errno.ENOSYS, f"no seccomp filter for {machine}: pack workers cannot run here")
    audit = AUDIT_ARCH[machine][0]
    _u, _s, clone, clone3 = NS_SYSCALLS[machine]
    eperm = sorted(set(denied_numbers(machine).values()))
    # labels: the instruction list is built with symbolic targets, then resolved forward
    code: list[tuple[int, object, object, int]] = [
        (_LD, 0, 0, 4), (_JEQ, 0, "eperm", audit),  # our ABI, else refused
        (_LD, 0, 0, 0), (_JGE, "eperm", 0, 0x40000000),  # x32
        (_JEQ, "eafnosupport", 0, SOCKET[machine]),
        (_JEQ, "enosys", 0, clone3), (_JEQ, "clone", 0, clone),
        *((_JEQ, "eperm", 0, nr) for nr in eperm),
        (_RET, 0, 0, _ALLOW),
    ]
    labels: dict[str, int] = {}
    tail = [("clone", (_LD, 0, 0, 16)), (None, (_JSET, "eperm", 0, NS_FLAGS)), (None, (_RET, 0, 0, _ALLOW)),
            ("eperm", (_RET, 0, 0, _errno(errno.EPERM))), ("enosys", (_RET, 0, 0, _errno(errno.ENOSYS))),
            ("eafnosupport", (_RET, 0, 0, _errno(errno.EAFNOSUPPORT)))]
    for label, ins in tail:
        if label:
            labels[label] = len(code)
        code.append(ins)
    out = []
    for i, (op, jt, jf, k) in enumerate(code):
        rel = [labels[j] - i - 1 if isinstance(j, str) else j for j in (jt, jf)]
        if not all(0 <= r <= 255 for r in rel):  # type: ignore[operator]
            raise ValueError("seccomp jump out of range")
        out.append(struct.pack("=HBBI", op, rel[0], rel[1], k))
    return b"".join(out)
