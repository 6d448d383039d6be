"""The egress proxy and DNS relay: the only way out of a sandbox whose command may use the network.

Each sandbox with network hands the server the sockets ``_netns.py`` bound inside its network
namespace (``attach``); the server accepts on them here, on one event loop thread:

- the proxy port (``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY`` point at it): ``CONNECT
  host:port`` (HTTPS and any TLS) and absolute-form plain HTTP requests. The proxy resolves the
  name itself and connects only to addresses that ``Destinations`` allows — every address
  after DNS resolution, for every request, so each hop of a redirect (``curl -L``) is checked
  again. A refusal is a ``403`` whose body (:data:`REFUSAL_BODY`, naming the proxy) and
  ``X-Parism-Refused`` header say why, and the envelope carries a note (``egress_refused``);
- UDP and TCP port 53 on each resolver address of ``/etc/resolv.conf``: relayed to that same
  resolver, and nowhere else.

Why hand-written (about 200 lines) rather than a library: the proxies on PyPI (proxy.py,
mitmproxy, pproxy) are applications with plugin systems and their own resolvers; the part
needed here — read one request head, resolve, check, connect, splice — is small, and the
check must sit exactly between resolution and connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from parism.net.destinations import Address, Destinations
from parism.net.urls import read_url

log = logging.getLogger("parism.run.egress")

HEAD_LIMIT = 64 * 1024
HEAD_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 10.0
DNS_TIMEOUT_S = 5.0
DNS_MAX = 4096
HOP_HEADERS = (b"proxy-connection", b"proxy-authorization", b"connection", b"keep-alive")

#: The body of a refusal: a client that prints it (``curl`` without ``-f`` exits 0) shows whose
#: answer it is, never something that could pass for the destination's.
REFUSAL_BODY = b"parism egress proxy: request refused, nothing was sent to the destination: %s\n"


class Refused(Exception):
    """A request the proxy will not carry: status and reason for the client."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass
class Attached:
    """One sandbox's sockets on the proxy's loop; ``close`` ends them and their connections."""

    proxy: "EgressProxy"
    servers: list[asyncio.AbstractServer | asyncio.DatagramTransport] = field(default_factory=list)
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    refusals: list[str] = field(default_factory=list)  # what the command was refused, in order

    def close(self) -> None:
        self.proxy.run(self._close())

    async def _close(self) -> None:
        for server in self.servers:
            server.close()
        for task in list(self.tasks):
            task.cancel()


class EgressProxy:
    """One event loop thread for every sandbox of the process (started on first use)."""

    _instance: "EgressProxy | None" = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="parism-egress", daemon=True).start()

    @classmethod
    def get(cls) -> "EgressProxy":
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def run(self, coro):  # type: ignore[no-untyped-def]
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=10)

    def attach(self, socks: Sequence[socket.socket], resolvers: Sequence[str], dest: Destinations) -> Attached:
        """Serve a sandbox: ``socks[0]`` is its proxy port, then (UDP, TCP) per resolver."""
        handle = Attached(self)
        self.run(self._attach(handle, list(socks), list(resolvers), dest))
        return handle

    async def _attach(self, handle: Attached, socks: list[socket.socket], resolvers: list[str],
                      dest: Destinations) -> None:
        for s in socks:
            s.setblocking(False)

        def tracked(coro_fn):  # type: ignore[no-untyped-def]
            async def run(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                task = asyncio.current_task()
                assert task is not None
                handle.tasks.add(task)
                try:
                    await coro_fn(reader, writer)
                except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
                    pass
                except asyncio.CancelledError:
                    # ``Attached.close`` ends a connection still open when the call ends (an
                    # upstream that keeps it after its answer). Ending normally here: a task that
                    # stays cancelled makes asyncio's client_connected_cb callback call
                    # ``task.exception()``, which raises and prints a traceback on stderr.
                    pass
                finally:
                    handle.tasks.discard(task)
                    writer.close()
            return run

        async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await serve_proxy(reader, writer, dest, handle.refusals)

        handle.servers.append(await asyncio.start_server(tracked(proxy), sock=socks[0], limit=HEAD_LIMIT))
        pairs = zip(socks[1::2], socks[2::2], resolvers)
        for udp, tcp, resolver in pairs:
            transport, _ = await self.loop.create_datagram_endpoint(lambda r=resolver: _DnsRelay(r), sock=udp)
            handle.servers.append(transport)

            async def relay_tcp(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, r: str = resolver) -> None:
                up_r, up_w = await asyncio.wait_for(asyncio.open_connection(r, 53), CONNECT_TIMEOUT_S)
                await splice(reader, writer, up_r, up_w)

            handle.servers.append(await asyncio.start_server(tracked(relay_tcp), sock=tcp))


async def serve_proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, dest: Destinations,
                      refusals: list[str]) -> None:
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
    line, _, rest = head.partition(b"\r\n")
    try:
        method, target, version = line.decode("latin-1").split(" ")
        host, port, origin = request_target(method, target)
        up_r, up_w = await open_checked(host, port, dest)
    except Refused as refused:
        refusals.append(refused.reason)
        reason = refused.reason.encode("utf-8", "replace")
        body = REFUSAL_BODY % reason
        writer.write(b"HTTP/1.1 %d %s\r\nX-Parism-Refused: %s\r\nContent-Type: text/plain\r\n"
                     b"Content-Length: %d\r\nConnection: close\r\n\r\n%s"
                     % (refused.status, b"Forbidden" if refused.status == 403 else b"Bad Request",
                        reason.replace(b"\r", b" ").replace(b"\n", b" "), len(body), body))
        await writer.drain()
        return
    except ValueError:
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        return
    if method == "CONNECT":
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    else:
        up_w.write(f"{method} {origin} {version}\r\n".encode("latin-1") + forwarded_headers(rest))
    await splice(reader, writer, up_r, up_w)


def request_target(method: str, target: str) -> tuple[str, int, str]:
    """(host, port, origin-form path) of a proxy request; ``Refused`` for what is not carried."""
    if method == "CONNECT":
        host, sep, port = target.rpartition(":")
        if not sep or not port.isdigit() or not 0 < int(port) < 65536:
            raise Refused(400, f"CONNECT needs host:port, got '{target}'")
        return host.strip("[]"), int(port), ""
    url = read_url(target)
    if isinstance(url, str) or url.scheme != "http" or "://" not in target:
        raise Refused(400, f"the proxy carries CONNECT and absolute http:// requests, not '{target}'")
    path = target.split("://", 1)[1]
    slash = min((i for i in (path.find("/"), path.find("?")) if i >= 0), default=-1)
    origin = path[slash:] if slash >= 0 else "/"
    return url.host, url.port, origin if origin.startswith("/") else "/" + origin


def forwarded_headers(rest: bytes) -> bytes:
    """The client's headers without hop-by-hop ones, plus ``Connection: close`` (one request
    per upstream connection: a second request on it could not name another host anyway)."""
    keep = [h for h in rest.split(b"\r\n") if h and h.split(b":", 1)[0].strip().lower() not in HOP_HEADERS]
    return b"\r\n".join([*keep, b"Connection: close", b"", b""])


async def open_checked(host: str, port: int, dest: Destinations
                       ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Resolve ``host`` here, connect to the first address ``dest`` allows; every other
    address is skipped, and if none is allowed the request is refused with the first reason."""
    addrs = await resolve(host, port)
    reasons: list[str] = []
    for addr in addrs:
        why = dest.refusal(addr, port, host if _is_name(host) else None)
        if why:
            reasons.append(why)
            continue
        try:
            return await asyncio.wait_for(asyncio.open_connection(str(addr), port), CONNECT_TIMEOUT_S)
        except (OSError, asyncio.TimeoutError) as exc:
            reasons.append(f"{addr}: {exc or 'timed out'}")
    raise Refused(403 if reasons else 400, reasons[0] if reasons else f"'{host}' has no address")


def _is_name(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
        return False
    except ValueError:
        return True


async def resolve(host: str, port: int) -> list[Address]:
    try:
        return [ipaddress.ip_address(host.split("%", 1)[0])]
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise Refused(403, f"'{host}' does not resolve ({exc})") from None
    return list(dict.fromkeys(ipaddress.ip_address(str(i[4][0]).split("%", 1)[0]) for i in infos))


async def splice(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 up_r: asyncio.StreamReader, up_w: asyncio.StreamWriter) -> None:
    """Copy both ways until both sides are done."""

    async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError):
            while chunk := await src.read(65536):
                dst.write(chunk)
                await dst.drain()
            if dst.can_write_eof():
                dst.write_eof()

    try:
        await asyncio.gather(pump(reader, up_w), pump(up_r, writer))
    finally:
        up_w.close()


class _DnsRelay(asyncio.DatagramProtocol):
    """UDP DNS from the sandbox to one resolver: each query on its own socket, one answer back."""

    def __init__(self, resolver: str) -> None:
        self.resolver = resolver
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # a datagram transport

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        if 12 <= len(data) <= DNS_MAX:
            asyncio.ensure_future(self._forward(data, addr))

    async def _forward(self, data: bytes, client: tuple[str, int]) -> None:
        loop = asyncio.get_running_loop()
        family = socket.AF_INET6 if ":" in self.resolver else socket.AF_INET
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.setblocking(False)
            try:
                await loop.sock_connect(s, (self.resolver, 53))
                await loop.sock_sendall(s, data)
                answer = await asyncio.wait_for(loop.sock_recv(s, DNS_MAX), DNS_TIMEOUT_S)
            except (OSError, asyncio.TimeoutError):
                return
        if self.transport is not None and answer[:2] == data[:2]:
            self.transport.sendto(answer, client)
