"""Make the network namespace of one sandbox, hand its listening sockets to the server, exec bwrap.

Run by the system Python (``-I -S``, from a sealed memfd like the sandbox helper) in the exec
chain just before bwrap: ``_netns.py CHAN_FD PROXY_PORT RESOLVER... -- BWRAP ARGS...``. It

1. enters a new network namespace — for a non-root uid together with a user namespace that
   owns it (identity map ``uid uid 1``), so this process may configure it; uid 0 needs none;
2. brings ``lo`` up, lets the sandbox's group open ICMP datagram sockets
   (``net.ipv4.ping_group_range``: ``ping`` works without privileges, to this namespace only),
   and puts each resolver address of ``/etc/resolv.conf`` on ``lo``;
3. binds the proxy port on 127.0.0.1 and UDP + TCP port 53 on each resolver address, and sends
   those sockets to the server over ``CHAN_FD`` (SCM_RIGHTS): the server accepts on them, so
   every connection out of the sandbox ends in the server's egress proxy or DNS relay — there
   is no route, no other interface, no bridge process and no Unix socket in the sandbox;
4. exec's bwrap (without ``--unshare-net``: it stays in this namespace). Capabilities in this
   user namespace end at the exec (bwrap runs as a non-root uid); bwrap run as uid 0 drops
   them for the command, whose own user namespace does not own this network namespace.

Any failure exits 125 with one line on stderr (the launcher reports bwrap's stderr).
"""

import ctypes
import fcntl
import ipaddress
import os
import socket
import struct
import sys

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
RTM_NEWADDR, NLM_F_REQUEST, NLM_F_ACK, NLM_F_EXCL, NLM_F_CREATE = 20, 1, 4, 0x200, 0x400
IFA_ADDRESS, IFA_LOCAL, IFA_F_NODAD, NLMSG_ERROR, LO_INDEX = 1, 2, 0x02, 2, 1


def fail(message):
    sys.stderr.write(f"parism-netns: {message}\n")
    sys.stderr.flush()
    os._exit(125)


def enter_namespaces():
    """A new network namespace; for a non-root uid inside a new user namespace that owns it
    (identity map of the one uid). uid 0 may make a network namespace without one — and must:
    the identity-map route has the server write the full map of bwrap's user namespace, which
    only a writer in its parent namespace may do (the server's own, not one of ours)."""
    uid, gid = os.getuid(), os.getgid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET if uid == 0 else CLONE_NEWUSER | CLONE_NEWNET) != 0:
        fail(f"unshare: {os.strerror(ctypes.get_errno())}")
    if uid == 0:
        return "0 2147483647"
    write("/proc/self/setgroups", "deny")
    write("/proc/self/uid_map", f"{uid} {uid} 1\n")
    write("/proc/self/gid_map", f"{gid} {gid} 1\n")
    return f"{gid} {gid}"


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def loopback_up():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s, SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def add_address(addr):
    """RTM_NEWADDR on lo: the resolver's address becomes local, so queries to it stay here."""
    if addr.is_loopback:
        return
    raw, family = addr.packed, socket.AF_INET if addr.version == 4 else socket.AF_INET6
    attr = b"".join(struct.pack("HH", 4 + len(raw), kind) + raw for kind in (IFA_LOCAL, IFA_ADDRESS))
    body = struct.pack("BBBBI", family, len(raw) * 8, IFA_F_NODAD, 0, LO_INDEX) + attr
    flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE) as nl:
        nl.send(struct.pack("IHHII", 16 + len(body), RTM_NEWADDR, flags, 1, 0) + body)
        reply = nl.recv(4096)
    kind = struct.unpack("IHHII", reply[:16])[1]
    code = struct.unpack("i", reply[16:20])[0] if kind == NLMSG_ERROR else 0
    if code:
        fail(f"adding {addr} to lo: {os.strerror(-code)}")


def bound(family, kind, host, port):
    s = socket.socket(family, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    if kind == socket.SOCK_STREAM:
        s.listen(64)
    return s


def main(argv):
    split = argv.index("--")
    chan_fd, proxy_port, resolvers, bwrap = int(argv[0]), int(argv[1]), argv[2:split], argv[split + 1:]
    groups = enter_namespaces()
    loopback_up()
    write("/proc/sys/net/ipv4/ping_group_range", groups)
    socks = [bound(socket.AF_INET, socket.SOCK_STREAM, "127.0.0.1", proxy_port)]
    for text in resolvers:
        addr = ipaddress.ip_address(text)
        add_address(addr)
        family = socket.AF_INET if addr.version == 4 else socket.AF_INET6
        socks += [bound(family, socket.SOCK_DGRAM, text, 53), bound(family, socket.SOCK_STREAM, text, 53)]
    with socket.socket(fileno=chan_fd) as chan:
        socket.send_fds(chan, [" ".join(argv[2:split]).encode() or b"-"], [s.fileno() for s in socks])
    for s in socks:
        s.close()
    os.execv(bwrap[0], bwrap)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except (OSError, ValueError, IndexError) as exc:
        fail(str(exc))
