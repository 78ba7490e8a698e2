"""A loopback OpenAI-compatible server for tests: /v1/chat/completions and /v1/completions.

Answers come from ``server.responder(prompt, body) -> str`` (default: the prompt's last line upper-cased). Faults are
planned per prompt: ``server.faults[substring] = ["429", "500", "timeout", "malformed", "empty", "400"]`` makes the
next requests whose prompt contains ``substring`` fail that way, one fault per request, in order, then succeed.
Every request body and its Authorization header are recorded in ``server.requests``.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


class _Handler(BaseHTTPRequestHandler):
    server: "LLMServer"

    def log_message(self, *args: Any) -> None:
        """Requests are recorded in ``server.requests``; nothing is printed to stderr."""

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        chat = self.path.endswith("/chat/completions")
        if not (chat or self.path.endswith("/completions")):
            return self._send(404, b'{"error": "not found"}')
        prompt = body["messages"][-1]["content"] if chat else body.get("prompt", "")
        with self.server.lock:
            self.server.requests.append({"path": self.path, "body": body,
                                         "authorization": self.headers.get("Authorization")})
            fault = None
            for key, plan in self.server.faults.items():
                if key in prompt and plan:
                    fault = plan.pop(0)
                    break
        if fault == "timeout":
            time.sleep(self.server.slow_s)
            return self._send(200, b'{"choices": []}')
        if fault in ("429", "500", "503", "400"):
            headers = {"Retry-After": "0"} if fault == "429" else None
            return self._send(int(fault), b'{"error": {"message": "planned fault"}}', headers)
        if fault == "malformed":
            return self._send(200, b'{"choices": "nope"')
        if fault == "empty":
            return self._send(200, b'{"choices": []}')
        answers = [self.server.responder(prompt, body) for _ in range(int(body.get("n", 1)))]
        if chat:
            choices = [{"index": i, "message": {"role": "assistant", "content": a}, "finish_reason": "stop"}
                       for i, a in enumerate(answers)]
        else:
            choices = [{"index": i, "text": a, "finish_reason": "stop"} for i, a in enumerate(answers)]
        self._send(200, json.dumps({"id": "x", "object": "chat.completion", "choices": choices}).encode())


class LLMServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.faults: dict[str, list[str]] = {}
        self.slow_s = 2.0
        self.responder: Callable[[str, dict], str] = lambda prompt, body: prompt.splitlines()[-1].upper()
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def close(self) -> None:
        self.shutdown()
        self.server_close()
