"""In-sandbox hand-over helper: the one process bwrap starts, waiting for its single command.

Its source is passed to the system Python with ``-c`` (nothing of Parism is mounted inside the
sandbox), so it imports only small built-in modules (no json, no re: each import is start-up
time). Everything known from the plan happens *before* the wait — seccomp filter, rlimits —
so a hand-over costs one pipe read and one posix_spawn.

argv: ``control_fd out_fd err_fd socket_families oom_score_adj limits deny_userns(0|1)`` where
socket_families is the comma-separated allowlist of address families (``-``: no filter, on an
architecture the filter does not cover; see ``socket_filter``), limits is ``name=value,...``
(value ``-`` = unlimited); deny_userns: no new namespaces (the
routes where bwrap's ``--disable-userns`` is not in force: the identity map, host_procs,
nested-weak). bwrap's own stdout is /dev/null and its stderr is
the *status* pipe, so bwrap's processes never hold the command's output pipes (out_fd and
err_fd, which bwrap closes in its monitor and PID 1): output reaches EOF the moment the command
and its children are done, not after the namespaces are torn down.
- status (fd 2, write): ``R`` once ready for the hand-over; then ``W <wait status>`` after the
  command ended, or ``E <errno name> <text>`` when it could not be started. Anything else on
  that pipe is bwrap's own diagnostics.
- control (read): a 4-byte big-endian length, then NUL-separated fields: the number N of
  checks, N triples ``base rel dev:ino``, then the argv (``parism:python SOURCE CODE ARGS...``: the
  source run in a fork of this interpreter, see ``fork_python``). Before anything runs, the helper
  opens each ``rel`` below its ``base`` with ``openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)``
  and checks that it is the inode ``dev:ino``: the first triple is the working directory as
  the guard checked it (the helper ``fchdir``s there), the others are what the sandbox bound
  (bwrap's ``--bind-fd`` binds the name it reads back from the descriptor, so a swap during
  bwrap's setup is caught here). A mismatch (a name swapped since) is reported as
  ``E ESTALE …`` and nothing runs. When the count field ends in ``s`` (``3s``), a second frame
  follows: a 4-byte length and the bytes the command reads on its standard input (a sealed
  memfd on fd 0); without it fd 0 stays bwrap's /dev/null. EOF before a full message means "never used": exit 0. After the argv the pipe stays
  open: a second 4-byte message is a stop request carrying the grace in milliseconds (SIGTERM
  to the command's process group, SIGKILL after the grace — what the executor does to a
  direct child on a timeout, the output cap or a cancellation), and EOF means SIGKILL now.

Why spawn and wait instead of exec'ing the command in place: bwrap reports "killed by signal
N" as exit code 128+N, which a command can also exit with; waiting here gives the exact wait
status, and as a subreaper the helper can end every descendant before it reports. The stop is
done here, not by killing bwrap, so a timed-out command's status is the one it died with
(143/SIGTERM, 137/SIGKILL, or the code it chose), exactly as without the sandbox. The command
is started in a session of its own (like the executor's direct spawn), so its process group
is what the stop signals. The rlimits
are set inside the user namespace, where RLIMIT_NPROC counts this sandbox's processes only
(sandbox-notes §3.2).
"""

from __future__ import annotations  # annotations stay strings: any python3 under /usr runs this

import errno
import os
import resource
import select
import signal
import struct
import sys

LIMITS = {
    "nproc": resource.RLIMIT_NPROC,
    "as": resource.RLIMIT_AS,
    "fsize": resource.RLIMIT_FSIZE,
    "cpu": resource.RLIMIT_CPU,
    "nofile": resource.RLIMIT_NOFILE,
    "core": resource.RLIMIT_CORE,
}

# seccomp: socket families by allowlist (the socket filter). Its argument lists the address
# families the command's class may create sockets of (sandbox/network.py ``helper_filter``):
# AF_INET/AF_INET6 where the class has network, AF_NETLINK where it reads kernel state, AF_UNIX
# only where a socket bind lifted the Unix filter. A family of the model that the class may not
# use (AF_UNIX, AF_INET, AF_INET6) fails with EACCES — a read-only bind does not stop connect()
# to a Unix socket inside an allowed path (docs/security.md), and host_net (ss, netstat) reads the
# host's sockets but may not connect; every other family (AF_VSOCK, AF_ALG, AF_PACKET, AF_KEY,
# AF_TIPC, AF_RDS, AF_BLUETOOTH …: not confined by the network namespace, or kernel attack
# surface nothing here needs) fails with EAFNOSUPPORT, as if the kernel had none. socketpair()
# is allowed for AF_UNIX only (a connected pair reaches nothing). Other ABIs (x32, int 0x80) are
# refused, and io_uring_setup too (IORING_OP_SOCKET would create sockets past the filter).
AUDIT_ARCH = {"x86_64": (0xC000003E, 41, 425), "aarch64": (0xC00000B7, 198, 425)}
SOCKETPAIR = {"x86_64": 53, "aarch64": 199}
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
MODEL_FAMILIES = (AF_UNIX, AF_INET, AF_INET6)  # refused with EACCES when the class lacks them


def prctl(*args: object) -> None:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(*args) != 0:
        raise OSError(ctypes.get_errno(), "prctl%r refused" % (args,))


def children(me: int) -> list[int]:
    """Pids whose parent is ``me`` (from /proc: ours inside a pid namespace, the host's else)."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open("/proc/%s/stat" % name, "rb") as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat[stat.rindex(b")") + 2:].split()[1]) == me:
                out.append(int(name))
    return out


def end_descendants() -> None:
    """Kill and reap every remaining descendant. As a subreaper the helper inherits orphans
    (setsid/nohup/double-forked children), so this ends the tree even without a pid
    namespace (host_procs, nested-weak); with one it is quick and redundant."""
    me = os.getpid()
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0]:
                continue
        except ChildProcessError:
            return
        for pid in children(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def socket_filter(families: str) -> None:
    """Install the socket filter: ``families`` is the comma-separated list of the address
    families the command may create sockets of (may be empty)."""
    arch = AUDIT_ARCH.get(os.uname().machine)
    if arch is None:
        raise OSError(errno.ENOSYS, "no seccomp filter for this architecture")
    audit, nr_socket, nr_io_uring = arch
    nr_socketpair = SOCKETPAIR[os.uname().machine]
    allowed = sorted(set(int(f) for f in families.split(",") if f))
    refused = [f for f in MODEL_FAMILIES if f not in allowed]
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    # (code, jump if true, jump if false, k): jumps name a label, resolved below
    prog = [(ld, 0, 0, 4), (jeq, 0, "eacces", audit), (ld, 0, 0, 0), (jge, "eacces", 0, 0x40000000),
            (jeq, "eacces", 0, nr_io_uring), (jeq, "socket", 0, nr_socket), (jeq, "pair", "allow", nr_socketpair),
            "socket", (ld, 0, 0, 16)]
    prog += [(jeq, "allow", 0, f) for f in allowed]
    prog += [(jeq, "eacces", 0, f) for f in refused]
    prog += [(ret, 0, 0, 0x00050000 | errno.EAFNOSUPPORT),
             "pair", (ld, 0, 0, 16), (jeq, "allow", 0, AF_UNIX), (ret, 0, 0, 0x00050000 | errno.EAFNOSUPPORT),
             "allow", (ret, 0, 0, 0x7FFF0000), "eacces", (ret, 0, 0, 0x00050000 | errno.EACCES)]
    install_filter(resolve_labels(prog))


def resolve_labels(prog: list) -> list[tuple[int, int, int, int]]:
    """A BPF program whose jump targets are label names (strings in the list) turned into
    the relative offsets the kernel reads."""
    at = {}
    out = []
    for item in prog:
        if isinstance(item, str):
            at[item] = len(out)
        else:
            out.append(item)
    done = []
    for i, (code, jt, jf, k) in enumerate(out):
        jt = at[jt] - i - 1 if isinstance(jt, str) else jt
        jf = at[jf] - i - 1 if isinstance(jf, str) else jf
        done.append((code, jt, jf, k))
    return done


# namespace flags of clone(2) (the low 32 bits: clone() ignores the rest): NEWNS, NEWCGROUP,
# NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
NS_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
# (unshare, setns, clone, clone3) per architecture
NS_SYSCALLS = {"x86_64": (272, 308, 56, 435), "aarch64": (97, 268, 220, 435)}


def deny_namespaces() -> None:
    """No new namespace of any kind, no joining one: unshare and setns fail with EPERM, clone
    with a namespace flag too, clone3 with ENOSYS (its flags sit in memory a filter cannot
    read; libc then falls back to clone). bwrap's --disable-userns does this for user
    namespaces where it can; under the identity map, without a pid namespace (host_procs) and
    at nested-weak it is not in force."""
    arch = AUDIT_ARCH.get(os.uname().machine)
    if arch is None:
        raise OSError(errno.ENOSYS, "no seccomp filter for this architecture")
    audit = arch[0]
    unshare, setns, clone, clone3 = NS_SYSCALLS[os.uname().machine]
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | errno.EPERM, 0x00050000 | errno.ENOSYS
    prog = [(ld, 0, 0, 4), (jeq, 1, 0, audit),  # 0-1: our ABI, else
            (ret, 0, 0, eperm),  # 2: a foreign ABI (int 0x80) is refused
            (ld, 0, 0, 0), (jge, 9, 0, 0x40000000),  # 3-4: x32 → 14
            (jeq, 8, 0, unshare), (jeq, 7, 0, setns),  # 5-6 → 14
            (jeq, 4, 0, clone3), (jeq, 0, 4, clone),  # 7 → 12; 8: clone → 9, anything else → 13
            (ld, 0, 0, 16), (jset, 3, 0, NS_FLAGS),  # 9-10: clone flags (low word) → 14
            (ret, 0, 0, allow), (ret, 0, 0, enosys), (ret, 0, 0, allow), (ret, 0, 0, eperm)]  # 11-14
    install_filter(prog)


def install_filter(prog: list[tuple[int, int, int, int]]) -> None:
    import ctypes
    raw = b"".join(struct.pack("=HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Fprog(len(prog), ctypes.addressof(buf))
    prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS (bwrap set it already; required for a filter)
    prctl(22, 2, ctypes.byref(fprog), 0, 0)  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER


def apply_limits(spec: str, oom_score_adj: int) -> None:
    for item in filter(None, spec.split(",")):
        name, value = item.split("=")
        which = LIMITS[name]
        hard = resource.getrlimit(which)[1]
        want = resource.RLIM_INFINITY if value == "-" else int(value)
        if hard != resource.RLIM_INFINITY and (want == resource.RLIM_INFINITY or want > hard):
            want = hard
        resource.setrlimit(which, (want, want))
    # normally inherited already (bwrap is started under choom); a read-only host /proc
    # (host_procs class) cannot be written, and the inherited value then stands
    with open("/proc/self/oom_score_adj") as f:
        if int(f.read()) == oom_score_adj:
            return
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write(str(oom_score_adj))
    except OSError as exc:
        if exc.errno != errno.EROFS:
            raise


AT_FDCWD = -100
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
SYS_OPENAT2 = 437  # the same number on x86-64 and arm64 (and every other architecture)


_OPENAT2: tuple = ()


def openat2_call() -> tuple:
    """(ctypes, OpenHow, syscall) built once: the helper calls it before it reports ready, so
    a hand-over does not pay ~0.1 ms per path for a CDLL and a Structure class (measured: the
    checks of a git call took 0.52 ms after the argv arrived, 0.25 ms with this)."""
    global _OPENAT2
    if not _OPENAT2:
        import ctypes

        class OpenHow(ctypes.Structure):
            _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]

        syscall = ctypes.CDLL(None, use_errno=True).syscall
        syscall.restype = ctypes.c_long
        _OPENAT2 = (ctypes, OpenHow, syscall)
    return _OPENAT2


def openat2(dirfd: int, path: str, flags: int, resolve: int) -> int:
    """openat2(2) (Linux 5.6; Python 3.11 has no os.openat2): ``resolve`` restricts how the
    path may be walked — the kernel refuses a symlink or a step above ``dirfd``."""
    ctypes, OpenHow, syscall = openat2_call()
    how = OpenHow(flags | os.O_CLOEXEC, 0, resolve)
    fd = syscall(ctypes.c_long(SYS_OPENAT2), ctypes.c_int(dirfd), ctypes.c_char_p(os.fsencode(path)),
                 ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), path)
    return fd


def open_checked(base: str, rel: str, want: str) -> int:
    """``rel`` below ``base``, opened without following a symlink and never above ``base``, if
    it is the inode ``want`` (``dev:ino``); ``OSError(ESTALE)`` when it is another one."""
    top = openat2(AT_FDCWD, base, os.O_PATH, RESOLVE_NO_SYMLINKS)
    try:
        fd = openat2(top, rel, os.O_PATH, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) if rel != "." else os.dup(top)
    finally:
        os.close(top)
    st = os.fstat(fd)
    if "%d:%d" % (st.st_dev, st.st_ino) != want:
        os.close(fd)
        raise OSError(errno.ESTALE, "no longer the one that was checked")
    return fd


def enter_checked(fields: list[bytes]) -> tuple[list[bytes], str | None]:
    """Run the checks at the head of a hand-over message (see the module docstring) and
    ``fchdir`` to the first; (argv, None), or (argv, why not)."""
    count = int(fields[0].rstrip(b"s"))
    checks = [[os.fsdecode(f) for f in fields[1 + 3 * i:4 + 3 * i]] for i in range(count)]
    argv = fields[1 + 3 * count:]
    for i, (base, rel, want) in enumerate(checks):
        where = os.path.normpath(os.path.join(base, rel))
        try:
            fd = open_checked(base, rel, want)
        except OSError as exc:
            what = "working directory" if i == 0 else "bound path"
            return argv, "%s %s: %s" % (what, where, exc.strerror)
        try:
            if i == 0:
                os.fchdir(fd)
        finally:
            os.close(fd)
    return argv, None


def read_exact(fd: int, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def stdin_file(data: bytes) -> int:
    """``data`` in a sealed memfd, read from its start: the command's standard input."""
    fd = os.memfd_create("parism-stdin", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    import fcntl
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def run(argv: list[bytes], out_fd: int, err_fd: int, control: int, in_fd: int = -1) -> None:
    """Spawn ``argv`` with out_fd/err_fd as its stdout/stderr, report its exact wait status on
    fd 2, exit like the command.

    posix_spawn (vfork-like in glibc) costs a fraction of a Python fork; the command inherits
    only stdin/stdout/stderr (every other fd was closed or is close-on-exec)."""
    actions = [(os.POSIX_SPAWN_DUP2, out_fd, 1), (os.POSIX_SPAWN_DUP2, err_fd, 2)]
    if in_fd >= 0:
        actions.append((os.POSIX_SPAWN_DUP2, in_fd, 0))
    try:
        if argv[0] == IN_PROCESS:
            pid = fork_python(argv[1], argv[2], argv[3:], out_fd, err_fd, control)
        else:
            pid = os.posix_spawn(argv[0], argv, os.environ, setsid=True, file_actions=actions,
                                 setsigdef=(signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT))
    except OSError as exc:
        text = "%s: %s" % (os.fsdecode(argv[0]), exc.strerror)
        os.write(2, ("E %s %s\n" % (errno.errorcode.get(exc.errno or 0, "EIO"), text)).encode())
        os.write(err_fd, ("parism sandbox: cannot run %s inside the sandbox\n" % text).encode())
        os._exit(127)
    os.close(out_fd)
    os.close(err_fd)
    if in_fd >= 0:
        os.close(in_fd)
    wait_status = supervise(pid, control)
    end_descendants()
    os.write(2, b"W %d\n" % wait_status)
    if os.WIFSIGNALED(wait_status):
        os._exit(128 + os.WTERMSIG(wait_status))
    os._exit(os.WEXITSTATUS(wait_status))


IN_PROCESS = b"parism:python"  # argv[0] naming no program: run argv[1] as Python in a fork


def fork_python(source: bytes, code: bytes, args: list[bytes], out_fd: int, err_fd: int, control: int) -> int:
    """A fork of this (already started, already confined) interpreter running ``source`` with
    ``sys.argv = ["-c", *args]``, as a session leader with out_fd/err_fd as stdout/stderr: what
    ``python3 -I -S -c`` would do, without an interpreter's start (the guard's git questions,
    guard/git/_ask.py, use it). ``code``: ``<magic hex>:<base64 marshal>`` of the compiled
    source, used when the magic is this interpreter's (compiling costs more than the fork),
    else empty. Only the server writes the control pipe."""
    magic, _, data = code.partition(b":")
    compiled = None
    if data and bytes.fromhex(magic.decode()) == sys.modules["_frozen_importlib_external"].MAGIC_NUMBER:
        import binascii
        import marshal
        compiled = marshal.loads(binascii.a2b_base64(data))
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        os.setsid()
        for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        os.dup2(out_fd, 1)
        os.dup2(err_fd, 2)
        for fd in (out_fd, err_fd, control):
            os.close(fd)
        sys.argv = ["-c", *(os.fsdecode(a) for a in args)]
        exec(compiled or compile(source, "<parism:python>", "exec"), {"__name__": "__main__"})
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # noqa: BLE001 - reported like an uncaught exception
        os.write(2, ("%s: %s\n" % (type(exc).__name__, exc)).encode("utf-8", "replace"))
    finally:
        try:
            sys.stdout.flush()
        finally:
            os._exit(code)
    return 0  # not reached


def supervise(pid: int, control: int) -> int:
    """Wait for the command, serving a stop request from the host meanwhile; its wait status."""
    pidfd = os.pidfd_open(pid)
    while control >= 0 and pidfd not in select.select([pidfd, control], [], [])[0]:
        request = read_exact(control, 4)
        os.close(control)
        control = -1
        stop(pid, pidfd, struct.unpack(">I", request)[0] / 1000.0 if request else 0.0)
    os.close(pidfd)
    return os.waitpid(pid, 0)[1]


def stop(pid: int, pidfd: int, grace_s: float) -> None:
    """SIGTERM the command's group, SIGKILL it if the leader is still there after ``grace_s``."""
    for sig in (signal.SIGTERM, signal.SIGKILL) if grace_s > 0 else (signal.SIGKILL,):
        try:
            os.killpg(pid, sig)  # the leader is a session leader: it cannot leave its group
        except ProcessLookupError:
            return
        if sig == signal.SIGTERM and select.select([pidfd], [], [], grace_s)[0]:
            return


def low_fd(fd: int) -> int:
    """``fd`` under the lowest free number, if that is lower."""
    low = os.dup(fd)
    if low < fd:
        os.close(fd)
        return low
    os.close(low)
    return fd


def main() -> None:
    control, out_fd, err_fd = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    keep = sorted((control, out_fd, err_fd))
    for low, high in zip([2] + keep, keep + [65536]):
        os.closerange(low + 1, high)  # anything else bwrap passed on (its --info-fd) stays outside
    # the numbers the server's pipes had can lie past the nofile limit set below, where the
    # spawn's dup2 of out_fd/err_fd fails with EBADF: each moves to the lowest free number
    # (at most 5: only 0-2 and these three are open)
    control, out_fd, err_fd = (low_fd(fd) for fd in (control, out_fd, err_fd))
    for fd in (control, out_fd, err_fd):
        os.set_inheritable(fd, False)  # the command gets out_fd and err_fd as 1 and 2 only
    prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: orphans of the command come back to us
    if sys.argv[4] != "-":
        socket_filter(sys.argv[4])
    if sys.argv[7:8] == ["1"]:
        deny_namespaces()
    apply_limits(sys.argv[6], int(sys.argv[5]))
    openat2_call()
    os.write(2, b"R\n")
    head = read_exact(control, 4)
    body = read_exact(control, struct.unpack(">I", head)[0]) if head else None
    if not body:
        os._exit(0)
    fields = body.split(b"\0")
    in_fd = -1
    if fields[0].endswith(b"s"):
        size = read_exact(control, 4)
        data = read_exact(control, struct.unpack(">I", size)[0]) if size else None
        if data is None:
            os._exit(0)  # the hand-over never completed: nothing runs
        in_fd = stdin_file(data)
    argv, refused = enter_checked(fields)
    if refused:
        os.write(2, ("E ESTALE %s\n" % refused).encode())
        os.write(err_fd, ("parism sandbox: %s; nothing was run\n" % refused).encode())
        os._exit(126)
    run(argv, out_fd, err_fd, control, in_fd)


if __name__ == "__main__":
    main()
