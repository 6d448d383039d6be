"""Pack workers run unprivileged (issue #23, class 3): a hostile pack cannot remount its
read-only binds and write the host, nor unshare, ptrace, use the keyring, join a namespace,
raise its own /proc settings or read root's files.

Real packs, real bubblewrap, the real worker. Every attack is also run, in the same test,
under the worker's bubblewrap line as it was before (``old_worker_argv``, f4aedb0's
``worker_argv`` verbatim), where it does fire — the armed trap. Facts are read from the host
(``os.listdir``, file contents), never from what the pack says about them alone. Writes go
only to scratch copies this test owns: the real ``/usr`` and the checkout are only remounted
(which changes the sandbox's own mount, not the host's), never written.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

import parism
from parism.packs import worker as worker_mod
from parism.packs.worker import Limits, PackFailure, Worker

ROOT_UID = os.geteuid() == 0
NOT_ROOT = ("as a non-root server the old worker's bubblewrap is unprivileged too: the kernel "
            "locks the read-only binds it inherits and denies what needs host root, so this "
            "control cannot fire (it is run by the root pass of scripts/test)")

ATTACK = '''
import ctypes, errno, json, os, signal, time
from parism.types import ParserPack

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
MS_REMOUNT, MS_BIND = 32, 4096
CLONE_NEWUSER, CLONE_NEWUTS, CLONE_NEWNS = 0x10000000, 0x04000000, 0x00020000
KEYCTL = {"x86_64": 250, "aarch64": 219}[os.uname().machine]


def res(rc):
    if rc < 0:
        return errno.errorcode.get(ctypes.get_errno(), "E?")
    return "ok"


def in_child(act):
    """Namespace calls change the caller: each runs in a child of its own."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, attempt(act, forked=True).encode())
        os._exit(0)
    os.close(w)
    out = os.read(r, 100).decode()
    os.close(r)
    os.waitpid(pid, 0)
    return out


def attempt(act, forked=False):
    kind = act["do"]
    if kind in ("unshare", "setns") and not forked:
        return in_child(act)
    if kind == "remount":
        return res(libc.mount(None, act["path"].encode(), None, MS_REMOUNT | MS_BIND, None))
    if kind == "write":
        try:
            with open(act["path"], "w") as f:
                f.write(act.get("text", "written by the pack"))
            return "ok"
        except OSError as exc:
            return errno.errorcode.get(exc.errno, "E?")
    if kind == "read":
        try:
            with open(act["path"], "rb") as f:
                return "read:" + f.read(4096).decode("latin-1")
        except OSError as exc:
            return errno.errorcode.get(exc.errno, "E?")
    if kind == "unshare":
        return res(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS))
    if kind == "setns":
        # a namespace of its own (made right here when unshare works), then joined by setns
        libc.unshare(CLONE_NEWUSER | CLONE_NEWUTS)
        fd = os.open("/proc/self/ns/uts", os.O_RDONLY)
        try:
            return res(libc.setns(fd, CLONE_NEWUTS))
        finally:
            os.close(fd)
    if kind == "ptrace":
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        try:
            return res(libc.ptrace(16, pid, None, None))  # PTRACE_ATTACH its own child
        finally:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    if kind == "socket":
        fd = libc.socket(act["family"], 1 if act["family"] in (1, 2, 40) else 3, 0)  # stream, or raw (netlink)
        if fd >= 0:
            os.close(fd)
        return res(fd)
    if kind == "fill":  # write act["mib"] MiB to /tmp, 1 MiB at a time
        chunk, done = b"x" * (1 << 20), 0
        try:
            with open("/tmp/fill", "wb") as f:
                for _ in range(act["mib"]):
                    f.write(chunk)
                    f.flush()
                    done += 1
            return "ok"
        except OSError as exc:
            return errno.errorcode.get(exc.errno, "E?") + ":%d" % done
        finally:
            try:
                os.unlink("/tmp/fill")
            except OSError:
                pass
    if kind == "keyctl":  # KEYCTL_GET_KEYRING_ID of the session keyring, creating it
        return res(libc.syscall(ctypes.c_long(KEYCTL), ctypes.c_long(0), ctypes.c_long(-3), ctypes.c_long(1)))
    if kind == "proc_writable":  # /proc/self entries opened for writing past their mode bits
        found = []
        for base in ("/proc/self", "/proc/self/attr"):
            for name in sorted(os.listdir(base)):
                path = os.path.join(base, name)
                try:
                    if os.path.isdir(path) or os.stat(path).st_mode & 0o200:
                        continue
                    os.close(os.open(path, os.O_WRONLY))
                    found.append(path)
                except OSError:
                    pass
        return " ".join(found)
    raise ValueError(kind)


def parse(raw, args, ctx):
    return {"results": [attempt(a) for a in json.loads(raw)]}


PACK = ParserPack(name="attack", parse=parse)
'''


def make_pack(root: Path) -> Path:
    d = root / "attack"
    d.mkdir(parents=True)
    (d / "parser.py").write_text(ATTACK)
    for p in (root, d, d / "parser.py"):
        p.chmod(0o755)
    return d


def old_worker_argv(pack_dir: str, limits: Limits, root: str) -> list[str]:
    """f4aedb0's ``worker_argv``, verbatim but for ``ROOT`` (here ``root``: a scratch copy, so
    the control's writes land in a copy this test owns)."""
    py = [sys.executable, "-I", "-B", f"{root}/parism/packs/_worker_main.py", root, pack_dir]
    bwrap = shutil.which("bwrap") or "/usr/bin/bwrap"
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
            "--ro-bind", "/usr", "/usr", "--tmpfs", "/tmp"]
    for link in ("bin", "lib", "lib64", "sbin"):
        if os.path.islink(f"/{link}"):
            argv += ["--symlink", os.readlink(f"/{link}"), f"/{link}"]
    roots = {sys.base_prefix, sys.prefix, root, *site.getsitepackages()}
    for r in sorted(r for r in roots if os.path.isdir(r)):
        if not r.startswith("/usr/"):
            argv += ["--ro-bind", r, r]
    argv += ["--ro-bind", pack_dir, pack_dir, "--proc", "/proc", "--dev", "/dev",
             "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "LC_ALL", "C.UTF-8",
             "--setenv", "PYTHONDONTWRITEBYTECODE", "1", "--chdir", "/tmp"]
    for host, guest in limits.fs_read:
        argv += ["--ro-bind-try", host, guest]
    for name, value in limits.env:
        argv += ["--setenv", name, value]
    return [*argv, "--", *py]


def scratch_root(tmp: Path) -> str:
    """A copy of the checkout's ``parism`` package, as the old line binds its ROOT."""
    root = tmp / "checkout"
    shutil.copytree(Path(parism.__file__).parent, root / "parism", symlinks=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return str(root)


def run_old(argv: list[str], actions: list[dict]) -> list[str]:
    proc = subprocess.run(argv, input=(json.dumps({"op": "parse", "raw": json.dumps(actions), "args": []}) + "\n").encode(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={}, timeout=60)
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 2 and json.loads(lines[0])["ok"], (proc.returncode, proc.stdout, proc.stderr[-2000:])
    answer = json.loads(lines[1])
    assert answer["ok"], answer
    return answer["value"]["results"]


def run_new(pack: Path, actions: list[dict], limits: Limits | None = None) -> list[str]:
    w = Worker(str(pack), limits or Limits(time_ms=10_000))
    try:
        w.start()
        answer = w.call({"op": "parse", "raw": json.dumps(actions), "args": []})
    finally:
        w.stop()
    assert answer["ok"], answer
    return answer["value"]["results"]


@pytest.mark.skipif(not ROOT_UID, reason=NOT_ROOT)
def test_remounting_the_read_only_binds_writes_nothing(tmp_path: Path) -> None:
    pack = make_pack(tmp_path / "packs")
    usr_copy = tmp_path / "usr-copy"  # stands for /usr: a file this test owns, bound read-only
    usr_copy.mkdir(mode=0o755)
    (usr_copy / "tool").write_text("original\n")
    (usr_copy / "tool").chmod(0o644)
    guest_usr = "/opt/usr-copy"
    limits = Limits(time_ms=10_000, fs_read=((str(usr_copy), guest_usr),))

    # the armed trap: the old line, with a scratch copy of the checkout as its ROOT
    root = scratch_root(tmp_path)
    old = run_old(old_worker_argv(str(pack), limits, root), [
        {"do": "remount", "path": str(pack)}, {"do": "write", "path": str(pack / "trap")},
        {"do": "remount", "path": root}, {"do": "write", "path": f"{root}/parism/trap.py"},
        {"do": "remount", "path": guest_usr}, {"do": "write", "path": f"{guest_usr}/tool"},
        {"do": "remount", "path": "/usr"},  # the real /usr: remounted (sandbox-local), never written
    ])
    assert old == ["ok"] * 7, old
    assert "trap" in os.listdir(pack) and "trap.py" in os.listdir(Path(root) / "parism")
    assert (usr_copy / "tool").read_text() == "written by the pack"
    for p in (pack / "trap", Path(root) / "parism" / "trap.py"):
        p.unlink()
    (usr_copy / "tool").write_text("original\n")

    new = run_new(pack, [
        {"do": "remount", "path": str(pack)}, {"do": "write", "path": str(pack / "trap")},
        {"do": "remount", "path": worker_mod.ROOT},
        {"do": "remount", "path": guest_usr}, {"do": "write", "path": f"{guest_usr}/tool"},
        {"do": "remount", "path": "/usr"},
    ], limits)
    assert new[0] == new[2] == new[3] == new[5] == "EPERM", new
    assert new[1] in ("EROFS", "EACCES") and new[4] in ("EROFS", "EACCES"), new
    assert "trap" not in os.listdir(pack)
    assert (usr_copy / "tool").read_text() == "original\n"


def test_no_new_namespaces_ptrace_or_keyring(tmp_path: Path) -> None:
    pack = make_pack(tmp_path / "packs")
    actions = [{"do": "unshare"}, {"do": "setns"}, {"do": "ptrace"}, {"do": "keyctl"}]
    old = run_old(old_worker_argv(str(pack), Limits(), worker_mod.ROOT), actions)
    assert old == ["ok"] * 4, old  # the armed trap: every one of them works in the old worker
    new = run_new(pack, actions)
    assert new == ["EPERM"] * 4, new


def test_the_private_tmp_is_bounded(tmp_path: Path) -> None:
    """/tmp is memory (tmpfs): unbounded in the old worker, 64 MiB now."""
    pack = make_pack(tmp_path / "packs")
    actions = [{"do": "fill", "mib": 96}]
    assert run_old(old_worker_argv(str(pack), Limits(), worker_mod.ROOT), actions) == ["ok"]  # the armed trap
    (new,) = run_new(pack, actions)
    assert new.startswith("ENOSPC:") and int(new.split(":")[1]) <= worker_mod.TMP_BYTES >> 20, new


def test_no_socket_of_any_family(tmp_path: Path) -> None:
    """AF_UNIX, AF_INET, AF_NETLINK and AF_VSOCK (which a network namespace does not confine:
    it reaches the hypervisor) — a pack needs none."""
    pack = make_pack(tmp_path / "packs")
    families = {"AF_UNIX": 1, "AF_INET": 2, "AF_NETLINK": 16, "AF_VSOCK": 40}
    actions = [{"do": "socket", "family": f} for f in families.values()]
    old = dict(zip(families, run_old(old_worker_argv(str(pack), Limits(), worker_mod.ROOT), actions)))
    assert old["AF_UNIX"] == old["AF_INET"] == old["AF_NETLINK"] == "ok", old  # the armed trap
    new = dict(zip(families, run_new(pack, actions)))
    assert set(new.values()) == {"EAFNOSUPPORT"}, new
    if old["AF_VSOCK"] != "ok":  # this kernel has no vsock: the refusal above is not the filter's alone
        pytest.skip(f"AF_VSOCK is {old['AF_VSOCK']} here without the filter too (the other families were checked)")


@pytest.mark.skipif(not ROOT_UID, reason=NOT_ROOT)
def test_root_only_files_and_proc_entries_stay_closed(tmp_path: Path) -> None:
    pack = make_pack(tmp_path / "packs")
    secret = Path("/etc/shadow").read_bytes()[:64].decode("latin-1")
    assert secret  # the host has the file and root reads it
    limits = Limits(time_ms=10_000, fs_read=(("/etc", "/etc"),))  # an operator granting /etc
    actions = [{"do": "read", "path": "/etc/shadow"}, {"do": "proc_writable"}]
    old = run_old(old_worker_argv(str(pack), limits, worker_mod.ROOT), actions)
    assert old[0].startswith("read:" + secret[:20]), old
    # host root's override of the permission bits: /proc/self entries without a write bit open for writing
    assert "/proc/self/environ" in old[1].split(), old
    # bwrap's own --uid only renames host root: uid_map "65534 0 1", and the file is read still
    renamed = old_worker_argv(str(pack), limits, worker_mod.ROOT)
    renamed[1:1] = ["--unshare-user", "--uid", "65534", "--gid", "65534"]
    assert run_old(renamed, actions[:1])[0].startswith("read:" + secret[:20])

    new = run_new(pack, actions, limits)
    assert new == ["EACCES", ""], new


def test_the_worker_is_an_unprivileged_host_identity(tmp_path: Path) -> None:
    """What the host's kernel says about the worker process (its /proc/<pid>/status seen from
    outside): a real unprivileged uid, no capability at all, no_new_privs, a seccomp filter;
    and inside, no descriptor but its pipes."""
    d = tmp_path / "packs" / "whoami"
    d.mkdir(parents=True)
    (d / "parser.py").write_text(textwrap.dedent('''
        import os
        from parism.types import ParserPack
        def parse(raw, args, ctx):
            fds = {}
            for fd in os.listdir("/proc/self/fd"):
                try:
                    fds[fd] = os.readlink("/proc/self/fd/" + fd)
                except OSError:
                    pass  # the listing's own descriptor
            return {"fds": fds}
        PACK = ParserPack(name="whoami", parse=parse)
    '''))
    for p in (tmp_path / "packs", d, d / "parser.py"):
        p.chmod(0o755)
    w = Worker(str(d), Limits(time_ms=10_000))
    try:
        w.start()
        fds = w.call({"op": "parse", "raw": "", "args": []})["value"]["fds"]
        tree = psutil.Process(w.proc.pid).children(recursive=True)
        workers = [p for p in tree if p.name() != "bwrap" and str(worker_mod.MAIN) in p.cmdline()]
        assert len(workers) == 1, [(p.pid, p.cmdline()) for p in tree]
        status = dict(line.split(":\t", 1) for line in Path(f"/proc/{workers[0].pid}/status").read_text().splitlines()
                      if ":\t" in line)
    finally:
        w.stop()
    want = 65534 if ROOT_UID else os.geteuid()
    assert [int(x) for x in status["Uid"].split()] == [want] * 4, status["Uid"]
    assert all(int(x) != 0 for x in status["Gid"].split()) and status["Groups"].strip() in ("", str(want)), status
    for cap in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert status[cap].strip() == "0000000000000000", (cap, status[cap])
    assert status["NoNewPrivs"].strip() == "1" and status["Seccomp"].strip() == "2", status
    # no descriptor but stdin, the two /dev/null and the protocol stream (no host directory)
    assert sorted(fds) == ["0", "1", "2", "3"] and fds["1"] == fds["2"] == "/dev/null", fds
    assert fds["0"].startswith("pipe:") and fds["3"].startswith("pipe:"), fds


@pytest.mark.skipif(not ROOT_UID, reason="a pack under /root needs a root server")
def test_a_pack_under_root_s_home_is_bound_by_descriptor() -> None:
    """/root is 0700: the worker's uid could not walk to the pack by name; the bind does."""
    base = Path("/root/.parism-test-packs")
    if base.exists():
        shutil.rmtree(base)
    try:
        pack = make_pack(base)
        assert oct(os.stat("/root").st_mode & 0o777) in ("0o700", "0o750", "0o710")  # closed to nobody
        assert run_new(pack, [{"do": "write", "path": str(pack / "trap")}]) in (["EROFS"], ["EACCES"])
        (pack / "parser.py").chmod(0o600)  # and a pack its uid cannot read is refused, saying why
        with pytest.raises(PackFailure) as err:
            Worker(str(pack), Limits()).start()
        assert err.value.reason == "pack_invalid" and "not readable by uid 65534" in err.value.message
    finally:
        shutil.rmtree(base, ignore_errors=True)
