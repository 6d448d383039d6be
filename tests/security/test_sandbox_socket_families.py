"""Socket families by allowlist (issue 23 class 7): the commands' seccomp filter lets each
command class create sockets of the families it needs only — AF_INET/AF_INET6 where the class
has network, AF_NETLINK where a command reads kernel state (host_net's ss and netstat read the
host's; elsewhere ``hostname -I`` reads the sandbox's own empty network namespace), AF_UNIX only
where a socket bind lifted the Unix filter — and every other family (AF_VSOCK, which the
network namespace does not confine and which reaches the hypervisor on a VM; AF_ALG, AF_PACKET,
AF_KEY, AF_TIPC, AF_RDS, AF_BLUETOOTH …) fails with EAFNOSUPPORT.

A real python3 in the real sandbox calls socket(2) for each family; the armed trap is the same
probe run by the same interpreter outside the sandbox, where a family this kernel has (AF_VSOCK
here on a VM, AF_ALG on Debian kernels, AF_PACKET as root) is created. A family the kernel lacks
answers EAFNOSUPPORT either way: it is checked inside, but only a family that the control
creates proves the filter, and the test needs at least one (else it skips, saying so).
"""

from __future__ import annotations

import errno
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.security.sandbox.helpers import ENV, PY3, run, sandbox_factory, workspace

__all__ = ["sandbox_factory", "workspace"]

# name: (family, socket type) — the type each family takes without a protocol argument
FAMILIES = {
    "AF_UNIX": (1, 1), "AF_INET": (2, 2), "AF_INET6": (10, 2), "AF_NETLINK": (16, 3),
    "AF_VSOCK": (40, 1), "AF_ALG": (38, 5), "AF_PACKET": (17, 2), "AF_KEY": (15, 3), "AF_TIPC": (30, 4),
    "AF_RDS": (21, 5), "AF_BLUETOOTH": (31, 3), "AF_XDP": (44, 3), "AF_CAN": (29, 3), "AF_QIPCRTR": (42, 2),
    "AF_SMC": (43, 1), "AF_APPLETALK": (5, 2), "AF_X25": (9, 5), "AF_AX25": (3, 2), "AF_LLC": (26, 2),
}
OUTSIDE_THE_MODEL = [name for name in FAMILIES if name not in ("AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK")]

PROBE = """
import json, socket, sys
out = {}
for name, (family, kind) in json.loads(sys.argv[1]).items():
    try:
        socket.socket(family, kind).close()
        out[name] = 0
    except OSError as exc:
        out[name] = exc.errno
print(json.dumps(out))
"""

PAIR_PROBE = """
import socket
for family in (socket.AF_UNIX, 40, 2):
    try:
        a, b = socket.socketpair(family, socket.SOCK_STREAM)
        a.close(); b.close(); print(family, 0)
    except OSError as exc:
        print(family, exc.errno)
"""


def outside() -> dict[str, int]:
    """The armed trap: the same probe, same interpreter, without Parism."""
    proc = subprocess.run([PY3, "-c", PROBE, json.dumps(FAMILIES)], capture_output=True, text=True,
                          timeout=20, env=ENV, check=True)
    return json.loads(proc.stdout)


def inside(sb: Any, workspace: Path, **dec: Any) -> dict[str, int]:
    r = run(sb, [PY3, "-c", PROBE, json.dumps(FAMILIES)], str(workspace), **dec)
    assert r.cap.exit_code == 0, r.out + r.err
    return json.loads(r.out)


@pytest.fixture(scope="module")
def armed() -> list[str]:
    """The families outside the model that this kernel creates for this user without Parism."""
    created = [name for name in OUTSIDE_THE_MODEL if outside()[name] == 0]
    if not created:
        pytest.skip("this kernel creates none of the families outside the model (no vsock, no AF_ALG, "
                    "no AF_PACKET for this user): the filter cannot be told from the kernel here")
    return created


@pytest.mark.parametrize(("dec", "allowed", "eacces"), [
    ({}, {"AF_NETLINK"}, {"AF_UNIX", "AF_INET", "AF_INET6"}),
    ({"namespace": "host_procs"}, {"AF_NETLINK"}, {"AF_UNIX", "AF_INET", "AF_INET6"}),
    ({"namespace": "host_mounts"}, {"AF_NETLINK"}, {"AF_UNIX", "AF_INET", "AF_INET6"}),
    ({"namespace": "host_net"}, {"AF_NETLINK"}, {"AF_UNIX", "AF_INET", "AF_INET6"}),
    ({"network": True}, {"AF_INET", "AF_INET6", "AF_NETLINK"}, {"AF_UNIX"}),
], ids=["isolated", "host_procs", "host_mounts", "host_net", "network"])
def test_each_class_creates_only_its_families(sandbox_factory: Any, workspace: Path, armed: list[str],
                                              dec: dict[str, Any], allowed: set[str], eacces: set[str]) -> None:
    sb = sandbox_factory([str(workspace)])
    got = inside(sb, workspace, **dec)
    control = outside()
    for name in armed:
        assert control[name] == 0  # armed: created without Parism
        assert got[name] == errno.EAFNOSUPPORT, (name, got)
    for name in OUTSIDE_THE_MODEL:
        assert got[name] == errno.EAFNOSUPPORT, (name, got)  # never "permission denied": no such family
    for name in allowed:
        assert control[name] == 0 and got[name] == 0, (name, got)
    for name in eacces:
        assert control[name] == 0 and got[name] == errno.EACCES, (name, got)


def test_a_socket_bind_adds_af_unix_and_nothing_else(sandbox_factory: Any, workspace: Path, armed: list[str],
                                                     tmp_path: Path) -> None:
    import socket

    sock_dir = Path("/tmp") / f"parism-fam-{tmp_path.name}"
    sock_dir.mkdir(mode=0o755)
    path = sock_dir / "agent.sock"
    srv = socket.socket(socket.AF_UNIX)
    try:
        srv.bind(str(path))
        path.chmod(0o777)
        sb = sandbox_factory([str(workspace)])
        got = inside(sb, workspace, binds=(str(path),))
    finally:
        srv.close()
        path.unlink(missing_ok=True)
        sock_dir.rmdir()
    assert got["AF_UNIX"] == 0, got
    assert got["AF_INET"] == errno.EACCES and got["AF_INET6"] == errno.EACCES, got
    for name in armed:
        assert got[name] == errno.EAFNOSUPPORT, (name, got)


def test_socketpair_is_unix_only(sandbox_factory: Any, workspace: Path) -> None:
    sb = sandbox_factory([str(workspace)])
    r = run(sb, [PY3, "-c", PAIR_PROBE], str(workspace))
    lines = dict(line.split() for line in r.out.splitlines())
    assert lines["1"] == "0", r.out + r.err  # AF_UNIX pairs: pipes between a command's processes
    assert lines["40"] == str(errno.EAFNOSUPPORT) and lines["2"] == str(errno.EAFNOSUPPORT), r.out
