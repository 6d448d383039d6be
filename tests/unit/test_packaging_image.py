"""The container appliance's static pieces: Containerfile, base package list, seccomp profile.

The seccomp checks read the committed ``policies/seccomp-bwrap.json``; the regeneration test
fetches Debian's ``golang-github-docker-docker-dev`` (the input of ``scripts/gen-seccomp``) and is
skipped only when that package cannot be fetched.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONTAINERFILE = ROOT / "Containerfile"
MKBASE = ROOT / "scripts" / "mkbase"
DOCKERIGNORE = ROOT / ".dockerignore"
PROFILE = ROOT / "policies" / "seccomp-bwrap.json"
GEN = ROOT / "scripts" / "gen-seccomp"

ADDED = ["clone", "unshare", "mount", "umount2", "pivot_root"]
# Docker's default denies these to a container without capabilities; the profile must too.
STILL_DENIED = ["keyctl", "add_key", "request_key", "bpf", "perf_event_open", "setns",
                "userfaultfd", "kexec_load", "init_module", "open_tree", "move_mount", "fsopen"]


def containerfile_packages() -> list[str]:
    m = re.search(r'^ARG OS_PACKAGES="([^"]*)"', CONTAINERFILE.read_text(), re.M)
    assert m, "Containerfile has no ARG OS_PACKAGES=\"...\" line"
    return m.group(1).split()


def mkbase_packages() -> list[str]:
    m = re.search(r"^PKGS=\((.*?)\)", MKBASE.read_text(), re.M | re.S)
    assert m, "scripts/mkbase has no PKGS=( ... ) array"
    return shlex.split(m.group(1), comments=True)


def test_base_and_containerfile_install_the_same_packages() -> None:
    cf, base = containerfile_packages(), mkbase_packages()
    assert len(cf) == len(set(cf)), "duplicate package in the Containerfile list"
    assert sorted(cf) == sorted(base), (
        f"only in Containerfile: {sorted(set(cf) - set(base))}; only in mkbase: {sorted(set(base) - set(cf))}")
    # What the appliance cannot work without: the sandbox, the reaper, the limit wrappers, the venv.
    assert {"bubblewrap", "tini", "util-linux", "python3"} <= set(cf)
    # Everyday tools of the readonly profile.
    assert {"procps", "git", "iproute2", "iputils-ping", "bind9-dnsutils", "curl", "tree", "lsof",
            "net-tools"} <= set(cf)


def _instructions() -> list[tuple[str, str]]:
    """(KEYWORD, rest) per Containerfile instruction, continuation lines joined."""
    text = re.sub(r"\\\n", " ", CONTAINERFILE.read_text())
    out = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            kw, _, rest = line.strip().partition(" ")
            out.append((kw.upper(), rest.strip()))
    return out


def test_containerfile_shape() -> None:
    text = CONTAINERFILE.read_text()
    assert not re.search(r"^#\s*syntax\s*=", text, re.M | re.I), "a # syntax= line makes BuildKit pull"
    ins = _instructions()
    kws = [k for k, _ in ins]
    assert ins[0] == ("ARG", "BASE_IMAGE=debian:bookworm-slim")
    # two stages on the same base: the venv is built in `build`, only /opt/parism reaches `runtime`
    assert [rest for k, rest in ins if k == "FROM"] == ["${BASE_IMAGE} AS build", "${BASE_IMAGE} AS runtime"]
    assert ("COPY", "--from=build /opt/parism /opt/parism") in ins
    assert ("ENTRYPOINT", '["/usr/bin/tini", "--", "parism"]') in ins
    assert ("WORKDIR", "/workspace") in ins
    assert ("USER", "${PARISM_UID}:${PARISM_UID}") in ins and ("ARG", "PARISM_UID=10001") in ins
    env = " ".join(rest for k, rest in ins if k == "ENV")
    assert "PARISM_SANDBOX=required" in env.split()
    run = " ".join(rest for k, rest in ins if k == "RUN")
    # pip runs from its own wheel: no pip/setuptools in the image's venv; no index (offline)
    assert "python3 -m venv --without-pip /opt/parism" in run
    assert re.search(r"pip-\*\.whl.*/pip\" install --no-cache-dir\s+--no-index --find-links /tmp/wheels", run), run
    assert "trim.sh" in run and "zip_python.py site" in run
    assert kws.index("USER") > max(i for i, k in enumerate(kws) if k == "RUN"), "RUN after USER"


def test_dockerignore_keeps_what_the_containerfile_copies() -> None:
    """Every COPY source survives .dockerignore (last matching pattern wins, as in Docker)."""
    import fnmatch

    patterns = [p.strip() for p in DOCKERIGNORE.read_text().splitlines()
                if p.strip() and not p.startswith("#")]

    def ignored(path: str) -> bool:
        result = False
        for p in patterns:
            neg = p.startswith("!")
            if fnmatch.fnmatch(path, p.lstrip("!")):
                result = not neg
        return result

    sources = [src for k, rest in _instructions() if k == "COPY" and not rest.startswith("--from=")
               for src in rest.split()[:-1]]
    assert sources
    for src in sources:
        probe = src.rstrip("/") + "/parism-0.1.0-py3-none-any.whl" if src.endswith("/") else src
        assert not ignored(probe), f"{src} is excluded by .dockerignore"
    assert ignored(".venv/bin/python") and ignored(".git/HEAD") and ignored("tests/unit/x.py")


# --- seccomp -------------------------------------------------------------------------------------


def load_profile() -> dict:
    return json.loads(PROFILE.read_text(encoding="utf-8"))


def unconditional_allows(profile: dict) -> set[str]:
    """Names allowed for every caller: ALLOW rules with no argument filter, capability or arch gate."""
    names: set[str] = set()
    for rule in profile["syscalls"]:
        inc = rule.get("includes") or {}
        if rule["action"] == "SCMP_ACT_ALLOW" and not rule.get("args") and not inc:
            names.update(rule.get("names") or [rule.get("name")])
    return names


def test_profile_allows_the_five_bwrap_syscalls() -> None:
    prof = load_profile()
    rule = prof["syscalls"][-1]
    assert rule["names"] == ADDED
    assert rule["action"] == "SCMP_ACT_ALLOW" and rule["args"] == []
    assert rule["includes"] == {} and rule["excludes"] == {}
    assert set(ADDED) <= unconditional_allows(prof)
    assert "Apache License 2.0" in rule["comment"] and "golang-github-docker-docker-dev" in rule["comment"]


def test_rest_of_docker_profile_is_intact() -> None:
    prof = load_profile()
    assert prof["defaultAction"] == "SCMP_ACT_ERRNO"
    assert {a["architecture"] for a in prof["archMap"]} >= {"SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"}
    docker_rules = [r for r in prof["syscalls"] if not r.get("comment", "").startswith("parism:")]
    ours = prof["syscalls"][len(docker_rules):]
    assert prof["syscalls"][:len(docker_rules)] == docker_rules, "a parism rule among Docker's"
    assert all(r["names"] == ["socket"] for r in ours[:-1]) and ours[-1]["names"] == ADDED
    allowed = unconditional_allows(prof)
    for name in STILL_DENIED:
        assert name not in allowed, f"{name} became allowed"
    assert "keyctl" not in {n for r in docker_rules for n in r.get("names", [])}  # default ERRNO
    # bpf stays behind CAP_SYS_ADMIN / CAP_BPF, which the container does not have.
    bpf_rules = [r for r in prof["syscalls"] if "bpf" in r.get("names", [])]
    assert bpf_rules and all(r.get("includes", {}).get("caps") for r in bpf_rules)
    # clone3 keeps Docker's ENOSYS rule (glibc then falls back to clone, which the filter sees).
    assert any(r["names"] == ["clone3"] and r["action"] == "SCMP_ACT_ERRNO" and r.get("errnoRet") == 38
               for r in docker_rules)
    # socket left Docker's unconditional rule (the parism rules allow it per family); with it
    # put back where the comment says, Docker's rules are byte-for-byte what gen-seccomp hashed.
    assert "socket" not in allowed and "socketcall" in allowed
    comment = prof["syscalls"][-1]["comment"]
    recorded = re.search(r"docker-rules canonical sha256 ([0-9a-f]{64})", comment)
    assert recorded, "provenance hash missing from the parism rule's comment"
    moved = re.search(r"but for (\w+) moved out of Docker's rule (\d+) at name index (\d+)", comment)
    assert moved and moved.group(1) == "socket", comment
    docker_rules = json.loads(json.dumps(docker_rules))
    docker_rules[int(moved.group(2))]["names"].insert(int(moved.group(3)), "socket")
    original = dict(prof, syscalls=docker_rules)
    text = json.dumps(original, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    assert hashlib.sha256(text.encode()).hexdigest() == recorded.group(1)


def test_committed_profile_equals_a_regeneration() -> None:
    proc = subprocess.run([sys.executable, str(GEN), "--output", "-"], capture_output=True,
                          text=True, timeout=600)
    if proc.returncode == 3:  # EXIT_UNAVAILABLE: no apt, no network, version gone from the mirror
        pytest.skip(f"Debian's docker profile package cannot be fetched: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == PROFILE.read_text(encoding="utf-8"), \
        "policies/seccomp-bwrap.json differs from scripts/gen-seccomp's output; regenerate it"
