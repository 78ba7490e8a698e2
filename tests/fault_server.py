"""A loopback HTTP server that answers OpenAI-compatible requests in broken ways, for fault-injection tests.

It speaks raw sockets so it can misbehave below HTTP: a body cut short, a wrong content encoding, a redirect loop, a
slow drip, a reset connection, an error page that echoes the request headers (the API key with them). The fault is
chosen by the prompt: a prompt containing ``fault=<name>`` gets that fault on every request; any other prompt gets a
well-formed answer (its last line upper-cased). Every request is bounded: the server only ever listens on 127.0.0.1,
and each connection is served once and closed.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time

FAULTS = ("cut_short", "bad_encoding", "redirect_loop", "wrong_shape", "message_not_object", "not_json", "drip",
          "reset", "echo_headers", "huge", "empty_choices", "status_500", "status_429", "echo_key_cut",
          "echo_key_answer")


class FaultServer:
    def __init__(self, drip_s: float = 3.0) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.drip_s = drip_s
        self.requests = 0
        self.seen: list[tuple[str, dict[str, str]]] = []  # (request line, headers) of each request, in order
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def close(self) -> None:
        self._stop.set()
        self.thread.join(timeout=5)
        self.sock.close()

    # ---------------------------------------------------------------------------------------------- serving
    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket) -> tuple[str, dict[str, str], bytes]:
        conn.settimeout(5)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", 0))
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                break
            body += chunk
        return lines[0], headers, body

    def _handle(self, conn: socket.socket) -> None:
        # The client hanging up mid-answer (it gave up on a drip, or a reset) is what these faults provoke.
        with conn, contextlib.suppress(ConnectionError, TimeoutError, BrokenPipeError):
            request_line, headers, body = self._read_request(conn)
            self.requests += 1
            self.seen.append((request_line, headers))
            payload = json.loads(body or b"{}")
            prompt = payload["messages"][-1]["content"] if "messages" in payload else payload.get("prompt", "")
            match = re.search(r"fault=(\w+)", prompt)
            self._answer(conn, match.group(1) if match else None, prompt, request_line, headers)

    @staticmethod
    def _send(conn: socket.socket, status: str, body: bytes, extra: str = "", length: int | None = None) -> None:
        head = (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: "
                f"{len(body) if length is None else length}\r\nConnection: close\r\n{extra}\r\n")
        conn.sendall(head.encode() + body)

    def _answer(self, conn: socket.socket, fault: str | None, prompt: str, request_line: str,
                headers: dict[str, str]) -> None:
        good = json.dumps({"choices": [{"message": {"role": "assistant", "content": prompt.splitlines()[-1].upper()},
                                        "finish_reason": "stop"}]}).encode()
        if fault is None:
            return self._send(conn, "200 OK", good)
        if fault == "cut_short":
            return self._send(conn, "200 OK", good[:20], length=len(good))
        if fault == "bad_encoding":
            return self._send(conn, "200 OK", b"\x00\x01 not gzip at all", extra="Content-Encoding: gzip\r\n")
        if fault == "redirect_loop":
            return self._send(conn, "302 Found", b"", extra=f"Location: {request_line.split()[1]}\r\n")
        if fault == "wrong_shape":
            return self._send(conn, "200 OK", b'{"data": [1, 2, 3]}')
        if fault == "message_not_object":
            return self._send(conn, "200 OK", b'{"choices": [{"message": "hello"}]}')
        if fault == "not_json":
            return self._send(conn, "200 OK", b"<html>gateway</html>")
        if fault == "empty_choices":
            return self._send(conn, "200 OK", b'{"choices": []}')
        if fault in ("status_500", "status_429"):
            return self._send(conn, f"{fault[-3:]} Error", b'{"error": "planned"}', extra="Retry-After: 0\r\n")
        if fault == "echo_headers":  # a proxy error page that repeats what it was sent, key included
            echoed = json.dumps({"error": "unauthorized", "request_headers": headers}).encode()
            return self._send(conn, "401 Unauthorized", echoed)
        if fault in ("echo_key_cut", "echo_key_answer"):  # the bare key, no "Bearer" before it to scrub by shape
            key = headers.get("authorization", "").rpartition(" ")[2]
            if fault == "echo_key_answer":
                answer = {"choices": [{"message": {"role": "assistant", "content": f"Sure, {key} it is."}}]}
                return self._send(conn, "200 OK", json.dumps(answer).encode())
            # the key starts 290 bytes in, so a client that shows the first 300 bytes shows its first 10 characters
            prefix = '{"error": "invalid credentials: '
            return self._send(conn, "403 Forbidden", (prefix + "." * (290 - len(prefix)) + key + '"}').encode())
        if fault == "huge":
            return self._send(conn, "200 OK", b'{"choices": [{"message": {"content": "' + b"a" * (3 << 20) + b'"}}]}')
        if fault == "drip":  # valid headers, then the body one byte at a time, for drip_s seconds
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
            end = time.monotonic() + self.drip_s
            while time.monotonic() < end and not self._stop.is_set():
                conn.sendall(b" ")
                time.sleep(0.05)
            return None
        if fault == "reset":
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            return None
        raise ValueError(f"unknown fault {fault!r}")
