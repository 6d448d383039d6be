"""The selftest's network probes, run in a network namespace of their own.

``python -m parism.selftest.netns '{"config": PATH|null}'`` moves itself — first thing, while it is
single-threaded — into a new network namespace (inside a new user namespace that maps only its
own uid when it is not root), brings ``lo`` up and gives it the stand-in metadata address
169.254.169.254 (``lo:1``). There it opens two listeners (127.0.0.1 and 169.254.169.254, each
answering a canary), arms the controls (the probe's own script run directly reaches both) and
runs the probe through the real pipeline twice: ``sh`` without network, and ``sh`` with
network (its own namespace, the egress proxy). A listener that accepted a connection during the
probe, or the canary in the answer, is a broken promise. Nothing here touches the host's
network: the namespace is ours and dies with this process. It prints its rows as one JSON line.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import struct
import sys
import threading

SIOCGIFFLAGS, SIOCSIFFLAGS, SIOCSIFADDR = 0x8913, 0x8914, 0x8916
IFF_UP, IFF_RUNNING = 0x1, 0x40
METADATA = "169.254.169.254"
CLONE_NEWNET, CLONE_NEWUSER = 0x40000000, 0x10000000


def own_namespace() -> str | None:
    """Enter a new network namespace (and user namespace unless root); None, or why not."""
    uid, gid = os.geteuid(), os.getegid()
    try:
        _unshare(CLONE_NEWNET if uid == 0 else CLONE_NEWUSER | CLONE_NEWNET)
        if uid != 0:
            for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1\n"), ("gid_map", f"{gid} {gid} 1\n")):
                with open(f"/proc/self/{name}", "w") as fh:
                    fh.write(text)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            got = fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sH22x", b"lo", 0))
            flags = struct.unpack("16sH22x", got)[1]
            fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | IFF_UP | IFF_RUNNING))
            addr = struct.pack("16sHH4s8x8x", b"lo:1", socket.AF_INET, 0, socket.inet_aton(METADATA))
            fcntl.ioctl(s, SIOCSIFADDR, addr)
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror or exc}"
    return None


def _unshare(flags: int) -> None:
    """unshare(2) (``os.unshare`` is Python 3.12's)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(ctypes.c_int(flags)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


class Listener:
    """A TCP listener that counts connections and answers each with ``canary``."""

    def __init__(self, host: str, port: int, canary: str) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind((host, port))
        except OSError:
            self.sock.bind((host, 0))
        self.sock.listen(16)
        self.host, self.port = host, self.sock.getsockname()[1]
        self.canary = canary
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            try:
                conn.sendall(f"{self.canary}\r\n".encode())
            except OSError:
                pass
            finally:
                conn.close()


def attack(targets: list[tuple[str, int]], python: str) -> str:
    """The probe's script: a direct connection and an HTTP request (through the egress proxy
    when the sandbox set one) to every target."""
    code = ("import socket,sys,urllib.request\n"
            f"for h,p in {json.dumps(targets)}:\n"
            "    try:\n"
            "        s=socket.create_connection((h,p),timeout=2); print(h,\"socket\",s.recv(200)); s.close()\n"
            "    except OSError as e:\n"
            "        print(h,\"socket refused\",e.errno)\n"
            "    try:\n"
            "        r=urllib.request.urlopen(\"http://%s:%d/\"%(h,p),timeout=4); print(h,\"http\",r.status,r.read(200))\n"
            "    except Exception as e:\n"
            "        print(h,\"http refused\",type(e).__name__,str(e)[:80])\n"
            "print(\"RESULT done\")\n")
    return f"{python} -c '{code}'"


def main() -> None:
    request = json.loads(sys.argv[1])
    why = own_namespace()  # before anything starts a thread
    from parism.selftest import Row, Site, direct, engine_for, probe_config, python, through, token

    loop = Listener("127.0.0.1", 0, token("loopback"))
    meta = Listener(METADATA, 80, token("metadata")) if why is None else None
    listeners = [loop] + ([meta] if meta is not None else [])
    targets = [(x.host, x.port) for x in listeners]
    rows: list[Row] = []
    with Site.made() as site:
        script = attack(targets, python())
        before = [x.accepted for x in listeners]
        control = direct(script, site.work)
        fired = all(x.accepted > b and x.canary in control.stdout for x, b in zip(listeners, before))
        results: dict[str, list[str]] = {x.host: [] for x in listeners}
        held = {x.host: True for x in listeners}
        for network in (False, True):
            engine = engine_for(probe_config(request.get("config"), site.work, network=network))
            try:
                before = [x.accepted for x in listeners]
                r = through(engine, script, site.work)
            finally:
                engine.close()
            label = "with network" if network else "without network"
            for x, b in zip(listeners, before):
                reached = x.accepted > b or x.canary in r.text
                held[x.host] = held[x.host] and r.ran and not reached
                results[x.host].append(f"{label}: " + ("reached" if reached else "refused" if r.ran else
                                                       "did not run"))
        ctl = "fired" if fired else "did not fire"
        rows.append(Row("loopback", f"a command cannot reach a listener on the server's loopback "
                        f"(127.0.0.1:{loop.port})", held[loop.host], ctl, "; ".join(results[loop.host])))
        if meta is not None:
            rows.append(Row("metadata", f"a command cannot reach a metadata address ({METADATA}:{meta.port}, "
                            "a stand-in in the selftest's own namespace)", held[meta.host], ctl,
                            "; ".join(results[meta.host])))
        else:
            rows.append(Row("metadata", f"a command cannot reach a metadata address ({METADATA})", False,
                            f"unavailable: {why}", "no network namespace of our own to stand it in: not checked"))
    print(json.dumps([row.__dict__ for row in rows]))


if __name__ == "__main__":
    main()
