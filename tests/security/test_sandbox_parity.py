"""Sandbox parity: the sandbox changes what may happen, never what is reported.

Every default-allowed command that can run here runs through the engine with the sandbox on
(``required``) and off, in both identity routes — a root server (``identity_map``) and the
appliance's non-root uid 10001 (``host_correction``, the engine run as that user) — and both
profiles. The parsed facts must be equal once the volatile fields named in ``EXCLUSIONS`` are
set aside (each is listed in docs/security.md, "Sandbox parity"). Owners, groups and process
users are also checked against the kernel itself (``os.lstat``, ``/proc/<pid>/status``,
``pwd``/``grp``), never against Parism's own output. ``LIMITS`` are the documented differences.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from parism.output.shape.lean import expand
from tests.security.sandbox.helpers import host_group, host_user
from tests.security.sandbox.netlab import recording_listener

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).parent / "sandbox" / "parity_runner.py"
APPLIANCE_UID = 10001
SYSTEM_PY = "/usr/bin/python3"

# Volatile fields, set aside by name (docs/security.md lists each).
EXCLUSIONS = {
    "access_times": "atime of a file read between the two runs (ls, stat)",
    "parent_entry": "ls -a: '..' of the working directory is the sandbox's mount-point parent",
    "process_churn": "ps: processes alive in only one run (ps itself, the sandbox's bwrap and helper, "
                     "short-lived children) and per-process counters (cpu, mem, vsz, rss, time, stat)",
    "memory_counters": "free: every amount",
    "fs_counters": "df: used, available, use%",
    "clock": "date: the time printed",
    "kernel_thread_names": "ps: a kernel worker renames itself after its current work queue ([kworker/0:1-events])",
    "socket_churn": "ss/netstat: listeners on ephemeral ports (>= 32768) that other processes opened or "
                    "closed between the two runs",
    "ping_timing": "ping: round-trip times and the total time",
    "dns_volatile": "dig: the query id, when it was asked, its time and the answers' TTLs (a cache counts them down)",
}
# Documented differences (docs/security.md, "Sandbox parity"): a fact the sandbox changes.
LIMITS = {
    "sandbox_mounts": "df: the sandbox's own /dev, /proc, /tmp and the tmpfs over /root, /home, /run … "
                      "replace the host's rows at those mount points",
    "sandbox_env": "env: HOME and TMPDIR point into the sandbox",
    "run_as": "id: the command runs as the identity rule's uid (describe.sandbox.uid)",
    "lsof_other_users": "lsof -i: without capabilities the sandbox cannot read other users' descriptors",
}

CALLS: list[tuple[str, list[str], tuple[str, ...]]] = [
    ("ls", ["-la"], ("access_times", "parent_entry")),
    ("ls", ["-ln"], ("access_times",)),
    ("ls", ["-l", "sub"], ("access_times",)),
    ("stat", ["nouser", "daemon-file", "root-file", "notes.txt"], ("access_times",)),
    ("find", ["."], ()),
    ("du", ["-a", "."], ()),
    ("df", ["-P"], ("fs_counters", "sandbox_mounts")),
    ("ps", ["aux"], ("process_churn", "kernel_thread_names")),
    ("ps", ["-ef"], ("process_churn", "kernel_thread_names")),
    ("free", ["-b"], ("memory_counters",)),
    ("id", [], ("run_as",)),
    ("uname", ["-a"], ()),
    ("wc", ["-l", "notes.txt"], ()),
    ("head", ["-n", "2", "notes.txt"], ()),
    ("tail", ["-n", "2", "notes.txt"], ()),
    ("cat", ["notes.txt"], ()),
    ("grep", ["-n", "beta", "notes.txt"], ()),
    ("git", ["status", "--porcelain"], ()),
    ("git", ["log", "--oneline"], ()),
    ("git", ["branch"], ()),
    ("git", ["diff"], ()),
    ("env", [], ("sandbox_env",)),
    ("pwd", [], ()),
    ("which", ["ls"], ()),
    ("date", ["+%Y-%m-%d %H:%M:%S"], ("clock",)),
    ("hostname", [], ()),
    ("ss", ["-tln"], ("socket_churn",)),
    ("netstat", ["-tln"], ("socket_churn",)),
    ("lsof", ["-i"], ("lsof_other_users",)),
    ("apt", ["list", "--installed"], ()),
    ("apt", ["search", "bubblewrap"], ()),
    ("apt", ["policy", "bash"], ()),
    ("apt", ["show", "bash"], ()),
    ("ping", ["-c", "1", "-W", "2", "127.0.0.1"], ("ping_timing",)),
    ("curl", ["-sI", "http://127.0.0.1:{port}/parity"], ()),
    ("dig", ["pypi.org"], ("dns_volatile",)),  # the resolver pip uses; sandboxed through Parism's relay
]
# Not run here, and why (reported in the parity result).
NOT_RUN = {
    "systemctl list-units": "no system bus on this machine (PID 1 is not systemd)",
}


@pytest.fixture(scope="module")
def workspace() -> Iterator[Path]:
    """Root-owned, readable by every uid; files of a uid without passwd entry, daemon, root."""
    ws = Path(tempfile.mkdtemp(prefix="parism-parity-", dir="/tmp"))
    ws.chmod(0o755)
    (ws / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    (ws / "sub").mkdir()
    (ws / "sub" / "inner.txt").write_text("inner\n")
    for name, owner in (("nouser", 4242), ("daemon-file", 1), ("root-file", 0)):
        (ws / name).write_text(name + "\n")
        if os.geteuid() == 0:
            os.chown(ws / name, owner, owner)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e", "-C", str(ws)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "notes.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "first"], check=True)
    (ws / "notes.txt").write_text("alpha\nbeta\ngamma\ndelta\n")
    for path in ws.rglob("*"):
        path.chmod(path.stat().st_mode | 0o044 | (0o011 if path.is_dir() else 0))
    yield ws
    shutil.rmtree(ws, ignore_errors=True)


# The answer of the listener curl asks (fixed: no Date header, so both runs read the same facts).
LISTENER_ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 7\r\nConnection: close\r\n\r\nparity\n"


@pytest.fixture(scope="module")
def listener() -> Iterator[tuple[int, list[str]]]:
    """An HTTP listener on the host's 127.0.0.1, refused by default and opened by
    ``sandbox.network_allow`` for the parity runs; records each request line."""
    with recording_listener(LISTENER_ANSWER) as (port, hits):
        yield port, hits


def run_all(ws: Path, mode: str, profile: str, as_uid: int | None,
            calls: list[tuple[str, list[str]]] | None = None, port: int | None = None) -> dict[str, Any]:
    """``calls`` (default: all of CALLS, ``{port}`` the listener's) through one engine (as
    ``as_uid`` when given); ``port`` is opened by ``sandbox.network_allow``."""
    cfg_dir = Path(tempfile.mkdtemp(prefix="parism-parity-cfg-", dir="/tmp"))
    cfg_dir.chmod(0o755)
    cfg = cfg_dir / "parism.toml"
    sandbox: dict[str, Any] = {"mode": mode}
    if port is not None:
        sandbox["network_allow"] = [f"127.0.0.1:{port}"]
    cfg.write_text(tomli_w.dumps({"guard": {"profile": profile, "allowed_paths": [str(ws)], "max_items": 100000,
                                            # ps aux on a crowded host passes 100 KB
                                            "max_output_bytes": 1 << 22},
                                  "sandbox": sandbox}))
    cfg.chmod(0o644)
    site = [str(ROOT), *[p for p in sys.path if p.endswith("site-packages")]]
    code = f"import sys; sys.path[:0] = {site!r}; import runpy; runpy.run_path({str(RUNNER)!r}, run_name='__main__')"
    py = sys.executable if as_uid is None else SYSTEM_PY
    prefix = [] if as_uid is None else ["setpriv", f"--reuid={as_uid}", f"--regid={as_uid}", "--clear-groups"]
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(cfg_dir), "LANG": "C.UTF-8"}
    if calls is None:
        calls = [(cmd, [a.replace("{port}", str(port)) for a in args]) for cmd, args, _ in CALLS]
    try:
        proc = subprocess.run([*prefix, py, "-c", code, str(cfg), str(ws)], input=json.dumps(calls),
                              capture_output=True, text=True, env=env, cwd=str(ws), timeout=600)
    finally:
        shutil.rmtree(cfg_dir, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


ROUTES = {"identity_map": None, "host_correction": APPLIANCE_UID}
# identity route/rule → (the engine's uid, workspace owner, workspace mode): every rule a root
# server can pick, and the appliance's non-root uid
CASES = {
    "identity_map/unprivileged_uid": (None, 0, 0o755),
    "identity_map/workspace_owner": (None, 4242, 0o755),
    "identity_map/root_masked": (None, 0, 0o711),
    "host_correction/server_user": (APPLIANCE_UID, 0, 0o755),
}


def _route_available(route: str) -> str | None:
    if os.geteuid() != 0:
        return "needs root: the identity map is root's, and the non-root route switches to uid 10001"
    if route == "host_correction" and not os.path.exists(SYSTEM_PY):
        return "no system python3 to run the engine as uid 10001"
    return None


class Results(dict):
    """The sandbox-on/off pairs computed so far (by (case, profile)) and the listener curl asks."""

    def __init__(self, port: int, hits: list[str]) -> None:
        super().__init__()
        self.port, self.hits = port, hits


@pytest.fixture(scope="module")
def results(workspace: Path, listener: tuple[int, list[str]]) -> Results:
    return Results(*listener)


def pair(results: Results, workspace: Path, case: str, profile: str) -> tuple[dict, dict]:
    key = (case, profile)
    if key not in results:
        uid, owner, mode = CASES[case]
        os.chown(workspace, owner, owner)
        workspace.chmod(mode)
        try:
            before = len(results.hits)
            results[key] = (run_all(workspace, "required", profile, uid, port=results.port),
                            run_all(workspace, "off", profile, uid, port=results.port))
            assert len(results.hits) == before + 2, results.hits  # curl reached the listener, on and off
        finally:
            os.chown(workspace, 0, 0)
            workspace.chmod(0o755)
    return results[key]


# -- normalisers: what is compared, with each exclusion by name ------------------------------

def rows(parsed: Any, key: str) -> list[dict[str, Any]]:
    value = (parsed or {}).get(key) or []
    if isinstance(value, dict) and "schema" in value:  # the lean default answer (docs/envelope.md)
        return expand({key: value})[key]
    return list(value)


def _drop(row: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in keys}


def normalise(call: dict[str, Any], rules: tuple[str, ...]) -> Any:
    parsed = call["parsed"]
    cmd = call["cmd"]
    if parsed is None:
        return {"ok": call["ok"], "exit": call["exit"], "failure": (call["failure"] or {}).get("reason")}
    if cmd == "ls":
        entries = rows(parsed, "entries")
        if "parent_entry" in rules:
            entries = [e for e in entries if e.get("name") != ".."]
        return sorted((json.dumps(e, sort_keys=True) for e in entries))
    if cmd == "stat":
        return [_drop(f, "accessed_at", "accessed_raw") for f in rows(parsed, "files")]
    if cmd == "ps":
        out = {}
        for p in rows(parsed, "processes"):
            keep = {k: p.get(k) for k in ("user", "uid", "pid", "ppid", "tty", "command", "cmd")}
            if str(keep.get("command") or keep.get("cmd") or "").startswith("[kworker"):
                keep.pop("command"), keep.pop("cmd")
            text = str(keep.get("command") or keep.get("cmd") or "")
            if "<defunct>" in text or "/proc/self/fd/" in text or text.split(" ")[0].endswith("bwrap"):
                continue  # process_churn: the sandboxes' own bwrap and helper, and reaped leftovers
            ended = not os.path.exists(f"/proc/{p['pid']}")
            if ended and "ids_remapped" in call["warnings"]:
                continue  # process_churn: it ended before its user could be re-read (left out, flagged)
            out[p["pid"]] = keep
        return out
    if cmd in ("ss", "netstat"):
        key = next((k for k in parsed if isinstance(parsed[k], list)), None)
        items = rows(parsed, key) if key else []
        port = lambda r: str(r.get("local_port") or str(r.get("local_address", "")).rsplit(":", 1)[-1])
        return sorted(json.dumps(r, sort_keys=True) for r in items if not (port(r).isdigit() and int(port(r)) >= 32768))
    if cmd == "free":
        return sorted(json.dumps(sorted(r)) for r in rows(parsed, "rows") or [parsed])
    if cmd == "df":
        return {r.get("mounted_on"): r.get("filesystem") for r in rows(parsed, "filesystems")}
    if cmd == "date":
        return len(call["raw"].strip())
    if cmd == "dig":  # dns_volatile
        asked = ("id", "when", "query_time_ms")
        return {**_drop(parsed, *asked), "answers": [_drop(a, "ttl") for a in rows(parsed, "answers")],
                "queries": [_drop(q, *asked) for q in rows(parsed, "queries")]}
    if cmd == "ping":  # ping_timing
        timed = ("time_ms", "time_text", "rtt_min_ms", "rtt_avg_ms", "rtt_max_ms", "rtt_stddev_ms")
        return {**_drop(parsed, *timed), "replies": [_drop(r, *timed) for r in rows(parsed, "replies")]}
    if cmd == "env":
        return _drop(parsed.get("variables", parsed) if isinstance(parsed, dict) else parsed, "HOME", "TMPDIR")
    return parsed


def _common(on: dict, off: dict) -> tuple[dict, dict]:
    keys = set(on) & set(off)
    return {k: on[k] for k in keys}, {k: off[k] for k in keys}


def compare(route: str, profile: str, on: dict, off: dict) -> dict[str, str]:
    """{call: "equal" | "limit:<name>" | difference text}."""
    result: dict[str, str] = {}
    for (cmd, args, rules), a, b in zip(CALLS, on["calls"], off["calls"]):
        name = " ".join([cmd, *args])
        if cmd == "dig" and not b["ok"]:
            result[name] = "not_run:no resolver answered with the sandbox off"
            continue
        x, y = normalise(a, rules), normalise(b, rules)
        if cmd == "ps":  # process_churn: only processes alive in both runs are compared
            x, y = _common(x, y)
        if cmd == "df":  # sandbox_mounts: the host rows the sandbox did not replace
            x, y = _common(x, y)
        if isinstance(x, dict) and isinstance(y, dict):  # name only what differs
            x, y = ({k: d[k] for k in set(x) | set(y) if x.get(k) != y.get(k) and k in d} for d in (x, y))
        if x == y:
            result[name] = "equal"
        elif limit := next((r for r in rules if r in LIMITS), None):
            result[name] = f"limit:{limit}"
        else:
            result[name] = f"DIFF on={json.dumps(x, default=str)[:600]} off={json.dumps(y, default=str)[:600]}"
    return result


# -- tests -------------------------------------------------------------------------------------

# both profiles in both routes; the other root rules in readonly (CPU: each pair is ~35 calls twice)
PAIRS = [(c, p) for c in sorted(CASES) for p in ("readonly", "build")
         if p == "readonly" or c in ("identity_map/unprivileged_uid", "host_correction/server_user")]


@pytest.mark.parametrize(("case", "profile"), PAIRS)
def test_parsed_facts_are_equal_with_the_sandbox_on_and_off(results, workspace: Path, case: str,
                                                             profile: str) -> None:
    route, rule = case.split("/")
    skip = _route_available(route)
    if skip:
        pytest.skip(skip)
    on, off = pair(results, workspace, case, profile)
    assert on["describe"]["identity"] == {"mode": route, "rule": rule}
    assert on["describe"]["level"] == "full"
    assert all(c["level"] == "full" for c in on["calls"]), [c["cmd"] for c in on["calls"] if c["level"] != "full"]
    outcome = compare(route, profile, on, off)
    print(f"\nparity {case}/{profile}:")
    for name, verdict in outcome.items():
        print(f"  {name}: {verdict.split(' on=')[0]}")
    for name, why in NOT_RUN.items():
        print(f"  {name}: not run here ({why})")
    diffs = {k: v for k, v in outcome.items() if v.startswith("DIFF")}
    assert not diffs, json.dumps(diffs, indent=1)
    failed = [f"{c['cmd']} {c['args']}: {c['failure']}" for (cmd, args, rules), c in zip(CALLS, on["calls"])
              if not c["ok"] and not any(r in LIMITS for r in rules)
              and not outcome[" ".join([cmd, *args])].startswith("not_run")]
    assert not failed, failed  # every call works sandboxed (limits aside): no refusal, no failure


@pytest.mark.parametrize(("case", "profile"), PAIRS)
def test_owners_and_process_users_are_the_kernel_s(results, workspace: Path, case: str, profile: str) -> None:
    route = case.split("/")[0]
    skip = _route_available(route)
    if skip:
        pytest.skip(skip)
    on, _ = pair(results, workspace, case, profile)
    calls = {(c["cmd"], tuple(c["args"])): c for c in on["calls"]}
    owner = CASES[case][1]  # what pair() gave the workspace itself ("."), restored since

    def ids(name: str) -> tuple[int, int]:
        st = os.lstat(workspace / name)
        return (owner, owner) if name == "." else (st.st_uid, st.st_gid)

    for entry in rows(calls[("ls", ("-la",))]["parsed"], "entries"):
        if entry["name"] == "..":
            continue
        uid, gid = ids(entry["name"])
        assert (entry["owner"], entry["group"]) == (host_user(uid), host_group(gid)), entry
    for entry in rows(calls[("ls", ("-ln",))]["parsed"], "entries"):
        uid, gid = ids(entry["name"])
        assert (entry["owner"], entry["group"]) == (str(uid), str(gid)), entry
    ls_warnings = calls[("ls", ("-la",))]["warnings"]
    assert ("ids_corrected" in ls_warnings) == (route == "host_correction"), ls_warnings
    seen = 0
    for proc in rows(calls[("ps", ("aux",))]["parsed"], "processes"):
        try:
            status = Path(f"/proc/{proc['pid']}/status").read_text()
        except OSError:
            continue  # ended since: nothing to check it against
        uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[2])
        name = host_user(uid)
        want = name if len(name) <= 8 else name[:7] + "+"
        if proc.get("user") != want and Path(f"/proc/{proc['pid']}").stat().st_uid != uid:
            continue  # the pid was reused since
        assert proc.get("user") == want, proc
        seen += 1
    assert seen >= 5


OWNER_QUERIES = [("find", [".", "-user", "root"]), ("ps", ["-u", "root", "-o", "user,pid"]), ("stat", ["-c", "%n %U", "root-file"])]


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_owner_selections_are_true_or_refused(workspace: Path, route: str) -> None:
    """``find -user root`` inside a sandbox that maps only the server's uid would match nothing
    (every other owner is nobody there): refused with a hint. Under the identity map it runs and
    matches what os.lstat says."""
    skip = _route_available(route)
    if skip:
        pytest.skip(skip)
    got = run_all(workspace, "required", "readonly", ROUTES[route], OWNER_QUERIES)["calls"]
    if route == "host_correction":
        for call in got:
            assert call["failure"]["reason"] == "sandbox_unsupported", call
            assert call["failure"]["hint"], call
        return
    roots = {"./" + p.relative_to(workspace).as_posix() for p in workspace.rglob("*") if os.lstat(p).st_uid == 0}
    roots.add(".")
    assert set(got[0]["parsed"]["paths"]) == roots, got[0]
    users = {p.get("user") for p in rows(got[1]["parsed"], "processes")}
    assert users == {"root"}, got[1]
    # stat -c is read by its format now, so the parse (not raw, left out when restated) answers
    assert os.lstat(workspace / "root-file").st_uid == 0
    assert [(f["file"], f["uid_name"]) for f in rows(got[2]["parsed"], "files")] == [("root-file", "root")]
