"""The gRPC port's socket: a hint in the log when a client speaks HTTP/1 (or TLS) to it.

grpcio's core answers bytes that are not HTTP/2 with its own SETTINGS frame and closes the connection, and logs
nothing (the reason is visible only with ``GRPC_TRACE``): an OTLP/HTTP exporter pointed at the gRPC port fails
with ``Received HTTP/0.9`` or a reset, and the receiver's log is silent. So the receiver binds the gRPC port
itself: every connection's first bytes are read here; one that opens with HTTP/2's connection preface (every
gRPC client) is relayed, byte for byte in both directions, to the gRPC server listening on a private Unix
socket; an HTTP/1 request gets a log line naming the HTTP port and a ``400`` whose body says the same (what an
OTLP/HTTP exporter prints); a TLS handshake gets a log line saying this port is plain text. Anything else is
relayed too, so grpcio answers it as it always did.

The relay costs two threads per connection (exporters hold one long-lived connection) and one copy through a
64 KiB buffer per direction (128 KiB a connection); HTTP/2 flow control stays end to end between the client and
grpcio.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
"""What every HTTP/2 client (so every gRPC client) sends first."""
_HTTP1 = re.compile(rb"^[A-Z]{3,10} ")
_REQUEST_LINE = re.compile(rb"^([A-Z]{3,10}) (\S{1,200}) HTTP/1\.[01]\r?\n")
_TLS_HANDSHAKE = 0x16
_BUFFER = 64 * 1024
_HINT_EVERY_S = 10.0


class RateLimitedHint:
    """One log line per kind of mistake every 10 s at most; the lines left out are counted in the next one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._left_out: dict[str, int] = {}

    def warn(self, kind: str, message: str) -> None:
        """Log ``message`` unless a line of this kind was logged in the last 10 s."""
        now = time.monotonic()
        with self._lock:
            if now - self._last.get(kind, -_HINT_EVERY_S) < _HINT_EVERY_S:
                self._left_out[kind] = self._left_out.get(kind, 0) + 1
                return
            self._last[kind] = now
            left_out = self._left_out.pop(kind, 0)
        if left_out:
            message += f" ({left_out} more since the last such line)"
        log.warning("%s", message)


class GrpcFront:
    """Listens on the gRPC endpoint; relays HTTP/2 connections to ``backend`` (a Unix socket path)."""

    def __init__(self, host: str, port: int, backend: str, http_address: Callable[[], str]) -> None:
        self.backend = backend
        self.http_address = http_address
        self.hint = RateLimitedHint()
        self.listeners = _bind(host, port)
        self.port: int = self.listeners[0].getsockname()[1]
        self.address = f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"
        self._closing = threading.Event()
        self._lock = threading.Lock()
        self._connections: set[socket.socket] = set()
        self._threads = [
            threading.Thread(target=self._accept, args=(sock,), name="otel-agent-grpc-front", daemon=True)
            for sock in self.listeners
        ]

    def start(self) -> None:
        """Accept in background threads."""
        for thread in self._threads:
            thread.start()

    def stop_accepting(self) -> None:
        """Close the listening sockets; open connections go on (the gRPC server's graceful stop ends them)."""
        self._closing.set()
        for thread in self._threads:
            if thread.is_alive():
                thread.join(timeout=2)
        for sock in self.listeners:
            sock.close()

    def close(self) -> None:
        """Stop accepting and end every connection still open."""
        self.stop_accepting()
        with self._lock:
            open_now = list(self._connections)
        for conn in open_now:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    # --- per connection ---------------------------------------------------------------------------------------

    def _accept(self, listener: socket.socket) -> None:
        listener.settimeout(0.25)  # to notice stop_accepting (closing a socket does not wake accept())
        while not self._closing.is_set():
            try:
                conn, peer = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._closing.is_set():
                    return
                time.sleep(0.05)  # EMFILE and the like: the client waits in the backlog
                continue
            conn.settimeout(None)
            threading.Thread(target=self._serve, args=(conn, peer), name="otel-agent-grpc-relay", daemon=True).start()

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._connections.add(sock)

    def _forget(self, sock: socket.socket) -> None:
        with self._lock:
            self._connections.discard(sock)
        sock.close()

    def _serve(self, conn: socket.socket, peer: tuple) -> None:
        self._track(conn)
        try:
            with contextlib.suppress(OSError):  # TCP only (not on a Unix socket); gRPC sets it on its own
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            head = b""
            while len(head) < len(PREFACE) and PREFACE.startswith(head):
                chunk = conn.recv(len(PREFACE) - len(head))
                if not chunk:
                    return
                head += chunk
            if not PREFACE.startswith(head):
                if _HTTP1.match(head):
                    self._answer_http1(conn, head, peer)
                    return
                if head[0] == _TLS_HANDSHAKE:
                    self.hint.warn(
                        "tls",
                        f"TLS handshake from {_peer(peer)} on the OTLP/gRPC port {self.address}, which speaks "
                        "plain text: configure the exporter without TLS (insecure=True, or an http:// endpoint)",
                    )
                    return
            self._relay(conn, head)
        except OSError:
            return
        finally:
            self._forget(conn)

    def _answer_http1(self, conn: socket.socket, head: bytes, peer: tuple) -> None:
        conn.settimeout(2.0)
        with contextlib.suppress(OSError):
            while b"\n" not in head and len(head) < 1024:
                chunk = conn.recv(1024)
                if not chunk:
                    break
                head += chunk
        line = _REQUEST_LINE.match(head)
        request = f"{line[1].decode()} {line[2].decode('latin-1')}" if line else "a request"
        http = self.http_address()
        message = (
            f"HTTP/1 request ({request}) from {_peer(peer)} on the OTLP/gRPC port {self.address}: not HTTP/2. "
            f"An OTLP/HTTP exporter (http/protobuf or http/json) must send to the HTTP port ({http}); "
            "or use a gRPC exporter here (OTEL_EXPORTER_OTLP_PROTOCOL=grpc)"
        )
        self.hint.warn("http1", message)
        body = (message + "\n").encode()
        with contextlib.suppress(OSError):
            conn.sendall(
                b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n"
                + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + body
            )
            conn.shutdown(socket.SHUT_WR)
            # read what the client still sends (its body) for a moment, so that closing does not reset the
            # connection before the client has read the answer
            deadline, drained = time.monotonic() + 2.0, 0
            while time.monotonic() < deadline and drained < 16 * 1024 * 1024:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                drained += len(chunk)

    def _relay(self, conn: socket.socket, head: bytes) -> None:
        backend = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._track(backend)
        try:
            backend.connect(self.backend)
            backend.sendall(head)
            other = threading.Thread(target=_pump, args=(backend, conn), name="otel-agent-grpc-relay", daemon=True)
            other.start()
            _pump(conn, backend)
            other.join()
        finally:
            self._forget(backend)


def _pump(src: socket.socket, dst: socket.socket) -> None:
    """Copy ``src`` to ``dst`` until ``src`` ends; then end ``dst``'s sending side (or both, on an error)."""
    buffer = bytearray(_BUFFER)
    view = memoryview(buffer)
    try:
        while True:
            n = src.recv_into(buffer)
            if n == 0:
                dst.shutdown(socket.SHUT_WR)
                return
            dst.sendall(view[:n])
    except OSError:
        for sock in (src, dst):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _peer(peer: tuple) -> str:
    host, port = peer[0], peer[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _bind(host: str, port: int) -> list[socket.socket]:
    """Listening sockets for every address of ``host`` (a name such as ``localhost`` may have an IPv4 and an
    IPv6 one, as grpcio binds both), all on one port (the first one's, when ``port`` is 0)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen, addresses = set(), []
    for family, _, _, _, address in infos:
        if family in (socket.AF_INET, socket.AF_INET6) and address[:2] not in seen:
            seen.add(address[:2])
            addresses.append((family, address))
    listeners: list[socket.socket] = []
    try:
        for i, (family, address) in enumerate(addresses):
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6 and len(addresses) > 1:
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                if i and port == 0:
                    address = (address[0], listeners[0].getsockname()[1], *address[2:])
                sock.bind(address)
                sock.listen(1024)
            except OSError:
                sock.close()
                if not i:
                    raise
                continue  # a second address of the name (e.g. ::1 without IPv6): the first one serves
            listeners.append(sock)
    except BaseException:
        for sock in listeners:
            sock.close()
        raise
    return listeners


def private_socket_path() -> tuple[str, str]:
    """A Unix socket path in a new directory only this user can enter; returns (directory, path)."""
    base = tempfile.gettempdir()
    if len(base) > 60:  # sun_path holds about 107 bytes
        base = "/tmp"
    directory = tempfile.mkdtemp(prefix="otel-agent-grpc-", dir=base)
    os.chmod(directory, 0o700)
    return directory, os.path.join(directory, "grpc.sock")


def remove_private_socket(directory: str) -> None:
    """Remove the directory made by ``private_socket_path``."""
    shutil.rmtree(directory, ignore_errors=True)


__all__ = ["PREFACE", "GrpcFront", "private_socket_path", "remove_private_socket"]
