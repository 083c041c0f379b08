"""FaultProxy: a loopback TCP proxy in front of the live API that breaks chosen requests.

It forwards bytes as they are; a fault armed for a request line prefix (e.g. b"POST /v1/pools/")
applies to the next connection whose first request starts with it:
- "drop_answer": the request reaches the API, the proxy reads the API's whole answer, then
  closes the client's connection without a byte of it (the call happened; the caller cannot know).
- "cut_stream": the answer is relayed until `after_events` SSE events passed, then the
  connection is closed mid-body (a dropped event stream).
- "then": the request is sent to the API, then `action()` runs (e.g. SIGKILL of the API) and the
  client's connection is closed.
The SDK clients under test open one connection per request (no keep-alive), so the first request
line of a connection is the only one on it.
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Tuple


@dataclass
class Fault:
    prefix: bytes
    kind: str
    after_events: int = 0
    action: Optional[Callable[[], None]] = None
    # What the API answered when the fault struck (drop_answer), for the test to compare.
    answer: bytes = b""
    hits: int = 0


@dataclass
class FaultProxy:
    upstream: Tuple[str, int]
    faults: List[Fault] = field(default_factory=list)
    connections: int = 0

    def __post_init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def arm(
        self, prefix: bytes, kind: str, after_events: int = 0, action: Optional[Callable[[], None]] = None
    ) -> Fault:
        fault = Fault(prefix, kind, after_events, action=action)
        with self._lock:
            self.faults.append(fault)
        return fault

    def close(self) -> None:
        self._closed = True
        self._server.close()

    def _take(self, first: bytes) -> Optional[Fault]:
        with self._lock:
            for fault in self.faults:
                if fault.hits == 0 and first.startswith(fault.prefix):
                    fault.hits = 1
                    return fault
        return None

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.upstream)
        except OSError:
            client.close()  # the API is down: the client sees its connection closed
            return
        try:
            first = client.recv(65536)
            if not first:
                return
            fault = self._take(first)
            if fault is None:
                upstream.sendall(first)
                self._pipe(client, upstream)
            elif fault.kind == "drop_answer":
                request = _read_message(client, first)
                upstream.sendall(request)
                fault.answer = _read_message(upstream, b"")
            elif fault.kind == "then":
                upstream.sendall(_read_message(client, first))
                assert fault.action is not None
                fault.action()
            elif fault.kind == "cut_stream":
                upstream.sendall(first)
                self._relay_until(upstream, client, fault.after_events)
        except OSError:
            pass
        finally:
            for s in (client, upstream):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def _pipe(self, client: socket.socket, upstream: socket.socket) -> None:
        def copy(src: socket.socket, dst: socket.socket) -> None:
            try:
                while chunk := src.recv(65536):
                    dst.sendall(chunk)
            except OSError:
                pass
            finally:
                try:
                    dst.shutdown(socket.SHUT_WR)
                except OSError:
                    pass

        other = threading.Thread(target=copy, args=(upstream, client), daemon=True)
        other.start()
        copy(client, upstream)
        other.join()

    @staticmethod
    def _relay_until(upstream: socket.socket, client: socket.socket, events: int) -> None:
        """Relay the answer up to the end of its `events`-th SSE event (the `id:` lines), then stop."""
        seen = b""
        while True:
            chunk = upstream.recv(65536)
            if not chunk:
                return
            start = len(seen)
            seen += chunk
            cut = _end_of_event(seen, events)
            if cut is not None:
                client.sendall(seen[start:cut])
                return
            client.sendall(chunk)


def _end_of_event(data: bytes, events: int) -> Optional[int]:
    position = 0
    for _ in range(events):
        found = data.find(b"\nid: ", position)
        if found < 0:
            return None
        position = found + 1
    end = data.find(b"\n\n", position)
    return None if end < 0 else end + 2


def _read_message(sock: socket.socket, data: bytes) -> bytes:
    """Read one HTTP/1.1 message with a Content-Length body (our requests and JSON answers)."""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body
