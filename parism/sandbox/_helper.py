"""In-sandbox hand-over helper: the one process bwrap starts, waiting for its single command.

Its source is passed to the system Python with ``-c`` (nothing of Parism is mounted inside the
sandbox), so it imports only the standard library and must stay small. Protocol, on two
inherited pipes whose fd numbers are argv[1] and argv[2]:

- control (read): a 4-byte big-endian length, then JSON ``{"argv": [...], "limits": {...},
  "oom_score_adj": n}``. EOF before a full message means "never used": exit 0 at once.
- status (write): one JSON line, ``{"wait_status": n}`` after the command ended, or
  ``{"error": errno_name, "message": text}`` when it could not be started.

Why fork instead of exec'ing the command in place: bwrap reports "killed by signal N" as exit
code 128+N, which a command can also exit with; waiting here gives the exact wait status. The
rlimits are set in the child only, so they bind the command and its descendants, and they are
set inside the user namespace, where RLIMIT_NPROC counts this sandbox's processes alone.
"""

import errno
import json
import os
import resource
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


def read_exact(fd, n):
    buf = b""
    while len(buf) < n:
        chunk = os.read(fd, n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def apply_limits(limits, oom_score_adj):
    for name, value in limits.items():
        which = LIMITS[name]
        hard = resource.getrlimit(which)[1]
        want = resource.RLIM_INFINITY if value is None else value
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


# seccomp: socket(AF_UNIX, ...) fails with EACCES. A read-only bind does not stop connect()
# to a Unix socket inside an allowed path (notes §2.6); without this filter a socket in the
# project (a dev server, an agent) would be reachable. Other ABIs (x32, int 0x80) are refused.
AUDIT_ARCH = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}


def deny_unix_sockets():
    import ctypes
    arch = AUDIT_ARCH.get(os.uname().machine)
    if arch is None:
        raise OSError(errno.ENOSYS, "no seccomp filter for this architecture")
    audit, nr_socket = arch
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    deny = 0x00050000 | errno.EACCES
    prog = [(ld, 0, 0, 4), (jeq, 0, 6, audit), (ld, 0, 0, 0), (jge, 4, 0, 0x40000000),
            (jeq, 0, 2, nr_socket), (ld, 0, 0, 16), (jeq, 1, 0, 1), (ret, 0, 0, 0x7FFF0000),
            (ret, 0, 0, deny)]
    raw = b"".join(struct.pack("=HBBI", *ins) for ins in prog)
    buf = ctypes.create_string_buffer(raw, len(raw))

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Fprog(len(prog), ctypes.addressof(buf))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0 or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp filter refused")


def main():
    control, status = int(sys.argv[1]), int(sys.argv[2])
    head = read_exact(control, 4)
    if head is None:
        os._exit(0)
    body = read_exact(control, struct.unpack(">I", head)[0])
    os.close(control)
    if body is None:
        os._exit(0)
    msg = json.loads(body)
    argv = msg["argv"]
    err_r, err_w = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:
        try:
            os.close(err_r)
            os.closerange(3, err_w)  # the command gets stdin/stdout/stderr and nothing else
            os.closerange(err_w + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
            for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT):
                signal.signal(sig, signal.SIG_DFL)
            apply_limits(msg["limits"], msg["oom_score_adj"])
            if msg.get("deny_unix_sockets"):
                deny_unix_sockets()
            os.execv(argv[0], argv)
        except OSError as exc:
            name = errno.errorcode.get(exc.errno or 0, "EIO")
            text = "%s: %s" % (argv[0], exc.strerror)
            os.write(err_w, json.dumps({"error": name, "message": text}).encode())
            os.write(2, ("parism sandbox: cannot run %s inside the sandbox\n" % text).encode())
        os._exit(127)
    os.close(err_w)
    failure = b""
    while True:
        chunk = os.read(err_r, 4096)
        if not chunk:
            break
        failure += chunk
    _, wait_status = os.waitpid(pid, 0)
    report = failure if failure else json.dumps({"wait_status": wait_status}).encode()
    os.write(status, report + b"\n")
    if os.WIFSIGNALED(wait_status):
        os._exit(128 + os.WTERMSIG(wait_status))
    os._exit(os.WEXITSTATUS(wait_status))


if __name__ == "__main__":
    main()
