"""The container's seccomp profile (policies/seccomp-bwrap.json, ``parism policy seccomp``)
refuses every socket family but AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK with EAFNOSUPPORT
(errnoRet 97) — for the server and for bwrap, which this profile covers too (issue 23 class 7).

A real Docker engine runs the host's python3 (``/usr`` bound read-only into an empty image
this test imports and removes) under the shipped profile, once directly and once inside a real
bwrap with every namespace (its loopback is brought up over netlink), as uid 10001 with
``--network none``. The armed trap is the same container under Docker's default profile, where
AF_VSOCK (on a VM) or AF_ALG (Debian kernels) is created.

Needs a Docker engine reachable by this user; skipped without one unless
``PARISM_CONTAINER_TESTS=1``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "policies" / "seccomp-bwrap.json"
REQUIRED = os.environ.get("PARISM_CONTAINER_TESTS") == "1"

FAMILIES = {"AF_UNIX": (1, 1), "AF_INET": (2, 1), "AF_INET6": (10, 1), "AF_NETLINK": (16, 3),
            "AF_VSOCK": (40, 1), "AF_ALG": (38, 5), "AF_PACKET": (17, 2), "AF_KEY": (15, 3),
            "AF_XDP": (44, 3), "AF_TIPC": (30, 4), "AF_BLUETOOTH": (31, 3), "AF_RDS": (21, 5)}
PROBE = ("import json, socket, sys\nout = {}\nfor name, (f, t) in json.loads(sys.argv[1]).items():\n"
         "    try:\n        socket.socket(f, t).close(); out[name] = 0\n"
         "    except OSError as exc:\n        out[name] = exc.errno\nprint(json.dumps(out))\n")
BWRAP = ["/usr/bin/bwrap", "--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
         "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
         "--proc", "/proc", "--dev", "/dev", "--"]


def _unavailable(message: str) -> None:
    if REQUIRED:
        pytest.fail(f"PARISM_CONTAINER_TESTS=1 but {message}", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="module")
def image() -> Iterator[str]:
    """An empty image (mount points and the /lib symlinks) the host's /usr is bound into."""
    if shutil.which("docker") is None:
        _unavailable("no docker CLI")
    if subprocess.run(["docker", "info"], capture_output=True, timeout=60).returncode != 0:
        _unavailable("no Docker engine answers this user (scripts/start-dockerd)")
    if not Path("/usr/bin/bwrap").exists() or not Path("/usr/bin/python3").exists():
        _unavailable("the host has no /usr/bin/bwrap or /usr/bin/python3 to bind into the container")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name in ("usr", "proc", "dev", "sys", "tmp", "etc"):
            info = tarfile.TarInfo(name)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
        for name, target in (("bin", "usr/bin"), ("lib", "usr/lib"), ("lib64", "usr/lib64")):
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    tag = f"parism-socket-probe:{uuid.uuid4().hex[:12]}"
    subprocess.run(["docker", "import", "-", tag], input=buf.getvalue(), capture_output=True, check=True, timeout=120)
    try:
        yield tag
    finally:
        subprocess.run(["docker", "image", "rm", "-f", tag], capture_output=True, timeout=120)


def probe(image: str, *, profile: Path | None, inside_bwrap: bool) -> dict[str, int]:
    argv = ["docker", "run", "--rm", "--network", "none", "--user", "10001:10001", "--cap-drop", "ALL",
            "--security-opt", "no-new-privileges", "--security-opt", "systempaths=unconfined",
            "--security-opt", "apparmor=unconfined", "-v", "/usr:/usr:ro"]
    if profile is not None:
        argv += ["--security-opt", f"seccomp={profile}"]
    argv += [image, *(BWRAP if inside_bwrap else []), "/usr/bin/python3", "-I", "-c", PROBE, json.dumps(FAMILIES)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_shipped_profile_refuses_families_outside_the_four(image: str) -> None:
    control = probe(image, profile=None, inside_bwrap=False)  # Docker's default profile
    armed = [name for name in ("AF_VSOCK", "AF_ALG") if control[name] == 0]
    if not armed:
        pytest.skip("this kernel has neither vsock nor AF_ALG: the profile cannot be told from the kernel")
    for inside_bwrap in (False, True):
        got = probe(image, profile=PROFILE, inside_bwrap=inside_bwrap)
        for name in ("AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"):
            assert got[name] == 0, (inside_bwrap, name, got)
        for name in armed:
            assert got[name] == 97, (inside_bwrap, name, got)  # EAFNOSUPPORT, not Docker's EPERM
        for name in set(FAMILIES) - {"AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"}:
            assert got[name] == 97, (inside_bwrap, name, got)


def test_the_profile_has_one_allow_rule_per_family_and_no_unconditional_socket() -> None:
    prof = json.loads(PROFILE.read_text(encoding="utf-8"))
    rules = [r for r in prof["syscalls"] if "socket" in r["names"]]
    assert all(r["names"] == ["socket"] and len(r["args"]) == 1 and r["args"][0]["index"] == 0 for r in rules)
    allowed = sorted(r["args"][0]["value"] for r in rules if r["action"] == "SCMP_ACT_ALLOW")
    assert allowed == [1, 2, 10, 16]
    refused = [r for r in rules if r["action"] == "SCMP_ACT_ERRNO"]
    assert refused and all(r["errnoRet"] == 97 for r in refused)
    covered = {r["args"][0]["value"] for r in refused if r["args"][0]["op"] == "SCMP_CMP_EQ"} | set(allowed)
    assert covered == set(range(17))
    assert [(r["args"][0]["op"], r["args"][0]["value"]) for r in refused if r["args"][0]["op"] != "SCMP_CMP_EQ"] \
        == [("SCMP_CMP_GT", 16)]
