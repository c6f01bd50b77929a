"""Real receivers for the notification tests, on 127.0.0.1 (or `host`, an address other hosts reach): an HTTP
server (Slack's incoming webhook and the generic JSON webhook look the same on the wire) and an SMTP server
(aiosmtpd). Each records what it received and answers as scripted per request: deliver, fail (HTTP 500 / SMTP
554), stall past the client's timeout, reject it as malformed (HTTP 400), or hold the request until the test lets
it go."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller

OK, FAIL, BAD, STALL, HOLD, MOVED, MOVED_KEEP = "ok", "fail", "bad", "stall", "hold", "moved", "moved-keep"
"""MOVED answers 302 to /moved (MOVED_KEEP: 307, which keeps the method), whose GETs are recorded too."""


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class HttpReceiver:
    """An HTTP server; `script` answers requests in order (then OK), `received` has every request it read."""

    host: str = "127.0.0.1"
    stall_seconds: float = 2.0
    received: list[Received] = field(default_factory=list)
    script: deque[str] = field(default_factory=deque)
    arrived: threading.Event = field(default_factory=threading.Event)
    """Set when a HOLD request has arrived (it then waits for `release`)."""
    release: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.received.append(Received(self.path, dict(self.headers), json.loads(body)))
                action = receiver.script.popleft() if receiver.script else OK
                if action == HOLD:
                    receiver.arrived.set()
                    receiver.release.wait(timeout=30)
                if action == STALL:
                    time.sleep(receiver.stall_seconds)
                status = {FAIL: 500, BAD: 400, MOVED: 302, MOVED_KEEP: 307}.get(action, 200)
                self._answer(status, moved=action in (MOVED, MOVED_KEEP))

            def do_GET(self) -> None:
                receiver.received.append(Received(self.path, dict(self.headers), None))
                self._answer(200)

            def _answer(self, status: int, moved: bool = False) -> None:
                payload = b"ok" if status == 200 else b"error"
                try:
                    self.send_response(status)
                    if moved:
                        self.send_header("Location", "/moved")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass  # the client gave up (timeout) or was killed

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer((self.host, 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str = "/hook") -> str:
        return f"http://{self.host}:{self.server.server_address[1]}{path}"

    def bodies(self, path: str) -> list[Any]:
        return [r.body for r in self.received if r.path == path]

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class _SmtpHandler:
    def __init__(self, receiver: SmtpReceiver) -> None:
        self.receiver = receiver

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        action = self.receiver.script.popleft() if self.receiver.script else OK
        self.receiver.attempts += 1
        if action == FAIL:
            return "554 5.7.1 Message refused by policy"
        if action == STALL:
            await asyncio.sleep(self.receiver.stall_seconds)
        message = message_from_bytes(envelope.content, policy=policy.default)
        self.receiver.messages.append((list(envelope.rcpt_tos), message))
        return "250 Message accepted for delivery"


@dataclass
class SmtpReceiver:
    """An SMTP server (aiosmtpd) on `host`; `script` answers DATA commands in order (then OK)."""

    host: str = "127.0.0.1"
    stall_seconds: float = 2.0
    messages: list[tuple[list[str], Message]] = field(default_factory=list)
    script: deque[str] = field(default_factory=deque)
    attempts: int = 0

    def __post_init__(self) -> None:
        self.port = _free_port(self.host)
        self.controller = Controller(_SmtpHandler(self), hostname=self.host, port=self.port)
        self.controller.start()

    def close(self) -> None:
        self.controller.stop()
